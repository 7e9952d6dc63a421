// A job's filter, envelope and decimation at validation: each form of `filter` normalized, each
// refusal naming its field, designs equal to the signal layer's (scipy's) design functions.
import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../../src/engine/errors.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';
import { butter, cheby1, cheby2, sosfiltfiltPadlen } from '../../../src/signal/filter-design.js';

const ctx = { stages: new Set<string>() };
const data = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => Math.sin(i / 3) + 0.01 * i);

/** The job validated with `extra` on 256 samples at fs 1000 Hz. */
function job(extra: Partial<JobSpec>, n = 256) {
  return validateJob({ data: data(n), fs: 1000, flags: ['stft'], ...extra }, ctx);
}

/** The field and detail a refusal names. */
function refusal(extra: Partial<JobSpec>, n = 256): { field: string; detail: string } {
  try {
    job(extra, n);
  } catch (error) {
    expect(error).toBeInstanceOf(JobValidationError);
    const e = error as JobValidationError;
    return { field: e.field, detail: e.detail };
  }
  throw new Error('accepted');
}

describe('filter: the three forms', { timeout: 10_000 }, () => {
  it('sos and taps pass as given, from a zero state unless zeroPhase', () => {
    const sos = [
      [0.1, 0.2, 0.1, 1, -0.5, 0.2],
      [1, -1, 0, 1, 0.3, 0.1],
    ];
    expect(job({ filter: { sos } }).filter).toEqual({ kind: 'sos', sos, zeroPhase: false });
    expect(job({ filter: { taps: [0.25, 0.5, 0.25], zeroPhase: true } }).filter).toEqual({
      kind: 'fir',
      taps: [0.25, 0.5, 0.25],
      zeroPhase: true,
    });
    expect(job({}).filter).toBeUndefined();
  });

  it('a design is scipy.signal.butter / cheby1 / cheby2 with the job fs, order 4 and butter by default', () => {
    expect(job({ filter: { btype: 'bandpass', cutoff: [50, 120] } }).filter).toEqual({
      kind: 'sos',
      sos: butter(4, [50, 120], { btype: 'bandpass', fs: 1000 }),
      zeroPhase: false,
    });
    expect(
      job({ filter: { btype: 'lowpass', cutoff: 100, order: 5, design: 'cheby1', rp: 0.5 } }).filter,
    ).toMatchObject({
      sos: cheby1(5, 0.5, 100, { btype: 'lowpass', fs: 1000 }),
    });
    expect(job({ filter: { btype: 'highpass', cutoff: 30, design: 'cheby2' } }).filter).toMatchObject({
      sos: cheby2(4, 40, 30, { btype: 'highpass', fs: 1000 }),
    });
    expect(job({ filter: { btype: 'bandstop', cutoff: [40, 60], design: 'cheby1' } }).filter).toMatchObject({
      sos: cheby1(4, 1, [40, 60], { btype: 'bandstop', fs: 1000 }),
    });
  });
});

describe('filter: each refusal names its field', { timeout: 10_000 }, () => {
  it.each([
    [{ filter: 'butter' }, 'filter', /must be an object/],
    [{ filter: {} }, 'filter', /needs one of sos/],
    [
      { filter: { sos: [[1, 0, 0, 1, 0, 0]], taps: [1] } },
      'filter',
      /takes one of sos, taps and btype, got sos and taps/,
    ],
    [{ filter: { taps: [1], extra: 1 } }, 'filter.extra', /unknown field of a taps filter/],
    [{ filter: { taps: [1], zeroPhase: 'yes' } }, 'filter.zeroPhase', /true or false/],
    [{ filter: { taps: [] } }, 'filter.taps', /is empty/],
    [{ filter: { taps: 'x' } }, 'filter.taps', /must be an array of numbers/],
    [{ filter: { taps: new Array(4097).fill(0.1) } }, 'filter.taps', /4097 taps is more than the 4096/],
    [{ filter: { taps: [1, Number.NaN] } }, 'filter.taps[1]', /finite/],
    [{ filter: { sos: [] } }, 'filter.sos', /is empty/],
    [{ filter: { sos: [[1, 0, 0, 1, 0]] } }, 'filter.sos[0]', /6 numbers/],
    [{ filter: { sos: [[1, 0, Infinity, 1, 0, 0]] } }, 'filter.sos[0][2]', /finite/],
    [{ filter: { sos: [[1, 0, 0, 2, 0, 0]] } }, 'filter.sos[0][3]', /a0 must be 1/],
    // Poles at |z| = 1.2 (a2 = 1.44) and at z = 1 (1 + a1 + a2 = 0): unstable, refused.
    [{ filter: { sos: [[1, 0, 0, 1, 0, 1.44]] } }, 'filter.sos[0]', /pole on or outside the unit circle/],
    [{ filter: { sos: [[1, 0, 0, 1, -2, 1]] } }, 'filter.sos[0]', /pole on or outside/],
    [{ filter: { sos: Array.from({ length: 65 }, () => [1, 0, 0, 1, 0, 0]) } }, 'filter.sos', /more than the 64/],
    [{ filter: { btype: 'notch', cutoff: 5 } }, 'filter.btype', /lowpass, highpass, bandpass, bandstop/],
    [{ filter: { btype: 'lowpass', cutoff: 500 } }, 'filter.cutoff', /outside \(0, fs\/2 = 500 Hz\)/],
    [{ filter: { btype: 'lowpass', cutoff: [1, 2] } }, 'filter.cutoff', /needs one cutoff/],
    [{ filter: { btype: 'bandpass', cutoff: 10 } }, 'filter.cutoff', /\[low, high\] pair/],
    [{ filter: { btype: 'bandpass', cutoff: [0, 10] } }, 'filter.cutoff[0]', /outside/],
    [{ filter: { btype: 'bandpass', cutoff: [20, 10] } }, 'filter.cutoff', /must be below the high edge/],
    [{ filter: { btype: 'lowpass', cutoff: 10, order: 0 } }, 'filter.order', /integer in \[1, /],
    [{ filter: { btype: 'lowpass', cutoff: 10, order: 2.5 } }, 'filter.order', /integer/],
    [{ filter: { btype: 'bandpass', cutoff: [10, 20], order: 65 } }, 'filter.order', /65 sections/],
    [{ filter: { btype: 'lowpass', cutoff: 10, design: 'bessel' } }, 'filter.design', /butter, cheby1, cheby2/],
    [{ filter: { btype: 'lowpass', cutoff: 10, rp: 1 } }, 'filter.rp', /a butter design takes none/],
    [{ filter: { btype: 'lowpass', cutoff: 10, design: 'cheby1', rp: -1 } }, 'filter.rp', /positive/],
    [{ filter: { btype: 'lowpass', cutoff: 10, design: 'cheby2', rs: 0 } }, 'filter.rs', /positive/],
  ] as const)('%j -> %s', (extra, field, detail) => {
    const r = refusal(extra as Partial<JobSpec>);
    expect(r.field).toBe(field);
    expect(r.detail).toMatch(detail);
  });

  it('takes up to 4096 taps and 64 sections', () => {
    expect(job({ filter: { taps: new Array(4096).fill(1 / 4096) } }, 5000).filter).toMatchObject({ kind: 'fir' });
    expect(job({ filter: { sos: Array.from({ length: 64 }, () => [1, 0, 0, 1, 0, 0]) } }).filter).toMatchObject({
      kind: 'sos',
    });
  });

  it('refuses poles on the unit circle at each edge of the stability triangle, takes them just inside', () => {
    // |a2| = 1 (poles on the circle), |a1| = 1 + a2 (a pole at z = -1 or 1), and just inside each.
    expect(refusal({ filter: { sos: [[1, 0, 0, 1, 0, 1]] } }).field).toBe('filter.sos[0]');
    expect(refusal({ filter: { sos: [[1, 0, 0, 1, 0, -1]] } }).field).toBe('filter.sos[0]');
    expect(refusal({ filter: { sos: [[1, 0, 0, 1, 1.5, 0.5]] } }).field).toBe('filter.sos[0]');
    expect(refusal({ filter: { sos: [[1, 0, 0, 1, -1.5, 0.5]] } }).field).toBe('filter.sos[0]');
    for (const [a1, a2] of [
      [0, 0.999],
      [0, -0.999],
      [1.499, 0.5],
      [-1.499, 0.5],
    ])
      expect(job({ filter: { sos: [[1, 0, 0, 1, a1!, a2!]] } }).filter?.kind).toBe('sos');
  });

  it('bounds a design by the order and by the sections it makes, each at its edge', () => {
    expect(job({ filter: { btype: 'lowpass', cutoff: 100, order: 1 } }).filter?.kind).toBe('sos');
    // A low-pass of order N has ceil(N / 2) sections, a band-pass N: 128 and 64 make 64.
    expect(job({ filter: { btype: 'lowpass', cutoff: 100, order: 128 } }).filter).toMatchObject({ kind: 'sos' });
    expect(refusal({ filter: { btype: 'lowpass', cutoff: 100, order: 129 } }).detail).toMatch(
      /order 129 makes 65 sections/,
    );
    expect(refusal({ filter: { btype: 'bandpass', cutoff: [50, 150], order: 65 } }).detail).toMatch(
      /makes 65 sections/,
    );
    expect(refusal({ filter: { btype: 'lowpass', cutoff: 100, order: 1000 } }).detail).toMatch(/makes 500 sections/);
    expect(refusal({ filter: { btype: 'lowpass', cutoff: 100, order: 1001 } }).detail).toMatch(
      /integer in \[1, 1000\]/,
    );
    expect(refusal({ filter: { btype: 'lowpass', cutoff: 100, order: '4' as never } }).field).toBe('filter.order');
  });

  it('takes rp and rs only for their design, positive and finite', () => {
    expect(refusal({ filter: { btype: 'lowpass', cutoff: 10, design: 'cheby2', rp: 1 } })).toEqual({
      field: 'filter.rp',
      detail: "is cheby1's passband ripple; a cheby2 design takes none",
    });
    expect(refusal({ filter: { btype: 'lowpass', cutoff: 10, rs: 40 } })).toEqual({
      field: 'filter.rs',
      detail: "is cheby2's stopband attenuation; a butter design takes none",
    });
    for (const rp of ['1', Infinity, Number.NaN])
      expect(refusal({ filter: { btype: 'lowpass', cutoff: 10, design: 'cheby1', rp: rp as never } }).field).toBe(
        'filter.rp',
      );
    expect(job({ filter: { btype: 'lowpass', cutoff: 100, design: 'cheby2', rs: 60 } }).filter).toMatchObject({
      sos: cheby2(4, 60, 100, { btype: 'lowpass', fs: 1000 }),
    });
  });

  it('takes a cutoff pair only for band filters, strictly increasing, inside (0, fs/2)', () => {
    expect(refusal({ filter: { btype: 'bandpass', cutoff: [10, 20, 30] as never } }).detail).toMatch(
      /\[low, high\] pair/,
    );
    expect(refusal({ filter: { btype: 'bandstop', cutoff: 'x' as never } }).detail).toMatch(/\[low, high\] pair/);
    expect(refusal({ filter: { btype: 'bandpass', cutoff: [20, 20] } }).detail).toMatch(/must be below the high edge/);
    expect(refusal({ filter: { btype: 'bandpass', cutoff: [20, 500] } }).field).toBe('filter.cutoff[1]');
    expect(refusal({ filter: { btype: 'highpass', cutoff: Number.NaN } }).field).toBe('filter.cutoff');
    expect(refusal({ filter: { btype: 'highpass', cutoff: 0 } }).detail).toMatch(/0 Hz is outside/);
    expect(job({ filter: { btype: 'highpass', cutoff: 499.9 } }).filter?.kind).toBe('sos');
  });

  it('filters from a zero state at any length; only zeroPhase needs the padding', () => {
    expect(job({ filter: { taps: [1, 1, 1] } }, 9).filter).toEqual({ kind: 'fir', taps: [1, 1, 1], zeroPhase: false });
    expect(job({ filter: { taps: [1, 1, 1], zeroPhase: false } }, 4).filter?.zeroPhase).toBe(false);
    const sos = butter(4, 100, { fs: 1000 });
    expect(job({ filter: { sos } }, 8).filter?.zeroPhase).toBe(false);
    expect(refusal({ filter: { taps: [1, 1, 1], zeroPhase: true } }, 9).detail).toBe(
      'series of 9 samples must be longer than the padding, 3 x 3 taps',
    );
  });

  it('zeroPhase needs series longer than scipy padding (3 x taps; sosfiltfilt padlen)', () => {
    expect(refusal({ filter: { taps: [1, 1, 1], zeroPhase: true } }, 9).field).toBe('filter.zeroPhase');
    expect(job({ filter: { taps: [1, 1, 1], zeroPhase: true } }, 10).filter).toBeDefined();
    const sos = butter(4, 100, { fs: 1000 });
    const padlen = sosfiltfiltPadlen(sos);
    expect(refusal({ filter: { sos, zeroPhase: true } }, padlen).detail).toMatch(`padding of ${padlen}`);
    expect(job({ filter: { sos, zeroPhase: true } }, padlen + 1).filter?.zeroPhase).toBe(true);
  });

  it('16-bit data and a framed stft take no filter', () => {
    const i16 = validateJobOf({ data: new Int16Array(64).fill(3), flags: ['stft'], filter: { taps: [1] } });
    expect(i16).toEqual({ field: 'filter', detail: 'i16 data takes no filter; filter f32 or f64 data' });
    expect(refusal({ nperseg: 32, filter: { taps: [1] } }).detail).toMatch(/framed stft \(nperseg\) takes no filter/);
  });
});

describe('envelope and decimate', { timeout: 10_000 }, () => {
  it('return B x N and B x ceil(N / q) values; decimate needs q, q needs decimate', () => {
    const j = job({ flags: ['envelope', 'decimate'], q: 3, batch: 2 }, 250);
    expect([j.envelope, j.decimate, j.stft, j.q]).toEqual([true, true, false, 3]);
    expect(refusal({ flags: ['decimate'] })).toEqual({ field: 'q', detail: 'the decimate flag needs q' });
    expect(refusal({ q: 4 }).field).toBe('q');
    expect(refusal({ flags: ['decimate'], q: 1 }).field).toBe('q');
  });

  it('take f32/f64 data only, and no framed stft', () => {
    expect(validateJobOf({ data: new Int16Array(64), flags: ['envelope'] }).detail).toMatch(
      /i16 data takes the stft and cycles flags; envelope need f32 or f64 data/,
    );
    expect(refusal({ flags: ['stft', 'envelope'], nperseg: 32 }).detail).toMatch(
      /takes only the stft flag, not envelope/,
    );
  });
});

function validateJobOf(spec: JobSpec): { field: string; detail: string } {
  try {
    validateJob(spec, ctx);
  } catch (error) {
    const e = error as JobValidationError;
    return { field: e.field, detail: e.detail };
  }
  throw new Error('accepted');
}
