// validateJob at the edge of each documented limit, with each check reached on its own (everything
// else valid), the caller's choices carried through to the normalized job, and scipy's framing
// (stft with boundary 'zeros', padded) from frame counts scipy 1.17 computed, at overlaps other
// than half.
import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../../src/engine/errors.js';
import type { JobSpec } from '../../../src/engine/types.js';
import {
  MIN_SERIES_LENGTH,
  checkInto,
  checkSampleTypes,
  jobSamples,
  resolveJobWindow,
  validateJob,
  validateJobParameters,
} from '../../../src/engine/validate.js';

const ctx = { stages: new Set(['supdem']) };
const data = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => Math.sin(i / 3) + 0.01 * i);

/** The JobValidationError of `spec` (with 64 samples and the stft flag unless it says otherwise). */
function refusal(spec: Partial<JobSpec>): { field: string; detail: string } {
  try {
    validateJob({ data: data(64), flags: ['stft'], ...spec } as JobSpec, ctx);
  } catch (error) {
    expect(error).toBeInstanceOf(JobValidationError);
    const { field, detail } = error as JobValidationError;
    return { field, detail };
  }
  return expect.unreachable('expected a JobValidationError');
}

const job = (spec: Partial<JobSpec>) => validateJob({ data: data(64), flags: ['stft'], ...spec } as JobSpec, ctx);

describe('validateJob carries the caller’s choices', { timeout: 10_000 }, () => {
  it('detrend: linear by default, else as given', () => {
    expect(job({}).detrend).toBe('linear');
    expect(job({ detrend: 'constant' }).detrend).toBe('constant');
    expect(job({ detrend: false }).detrend).toBe(false);
  });

  it('label, timeoutMs, signal, stageParams, into and flags come through (flags as a copy)', () => {
    const signal = new AbortController().signal;
    const filtered = new Float32Array(64);
    const flags = ['stft', 'supdem'];
    const j = job({
      flags,
      label: 'run 7',
      timeoutMs: 250,
      signal,
      stageParams: { supdem: { k: 2 } },
      into: { filtered },
    });
    expect(j).toMatchObject({
      label: 'run 7',
      timeoutMs: 250,
      stageParams: { supdem: { k: 2 } },
      stages: ['supdem'],
      stft: true,
      cycles: false,
      wavelet: false,
    });
    expect(j.signal).toBe(signal);
    expect(j.into.filtered).toBe(filtered);
    expect(j.flags).toEqual(flags);
    expect(j.flags).not.toBe(flags);
  });

  it('waveletBands false and bandWaves true by default, else as given', () => {
    expect(job({}).waveletBands).toBe(false);
    expect(job({}).bandWaves).toBe(true);
    const w = job({ flags: ['wavelet'], freqs: [0.1], bands: [[0.05, 0.2]], waveletBands: true, bandWaves: false });
    expect([w.waveletBands, w.bandWaves, w.wavelet, w.freqs, w.bands]).toEqual([
      true,
      false,
      true,
      [0.1],
      [[0.05, 0.2]],
    ]);
  });

  it('nCycles 6 by default, else as given; fs 1 by default', () => {
    expect(job({}).nCycles).toBe(6);
    expect(job({ nCycles: 3.5 }).nCycles).toBe(3.5);
    expect(job({}).fs).toBe(1);
  });
});

describe('validateJob framing against scipy.signal.stft (boundary zeros, padded)', { timeout: 10_000 }, () => {
  // [N, nperseg, noverlap, frames of scipy's Zxx]; the window: hann, or boxcar where hann violates NOLA.
  it.each([
    [100, 16, 10, 18],
    [100, 16, 0, 8],
    [37, 8, 7, 38],
    [64, 64, 0, 2],
    [64, 64, 63, 65],
    [50, 10, 3, 9],
    [33, 32, 5, 3],
    [128, 7, 2, 27],
  ])('N = %d, nperseg = %d, noverlap = %d: %d frames', (n, nperseg, noverlap, frames) => {
    const step = nperseg - noverlap;
    const framing = validateJob(
      { data: data(n), flags: ['stft'], nperseg, noverlap, window: noverlap === 0 ? 'boxcar' : 'hann' },
      ctx,
    ).framing;
    expect(framing).toEqual({
      nperseg,
      noverlap,
      step,
      extension: Math.floor(nperseg / 2),
      paddedLength: (frames - 1) * step + nperseg,
      frames,
      freqs: Math.floor(nperseg / 2) + 1,
    });
  });

  it('noverlap defaults to nperseg / 2, floored', () => {
    expect(job({ nperseg: 9 }).framing).toMatchObject({ noverlap: 4, step: 5 });
  });
});

describe('validateJob at each limit, each check on its own', { timeout: 10_000 }, () => {
  it(`series of ${MIN_SERIES_LENGTH} samples are the shortest taken`, () => {
    expect(MIN_SERIES_LENGTH).toBe(4);
    expect(validateJob({ data: data(8), batch: 2, flags: ['stft'] }, ctx).length).toBe(4);
    expect(refusal({ data: data(6), batch: 2 })).toEqual({
      field: 'data',
      detail: 'series of 3 samples are too short (at least 4)',
    });
  });

  it('samples must split into batch series of equal length', () => {
    expect(refusal({ data: data(10), batch: 3 })).toEqual({
      field: 'batch',
      detail: '10 samples do not split into 3 series of equal length',
    });
  });

  it('nperseg equal to N is taken; N + 1 is refused', () => {
    expect(job({ nperseg: 64, noverlap: 32 }).framing?.frames).toBeGreaterThan(0);
    expect(refusal({ nperseg: 65 })).toEqual({
      field: 'nperseg',
      detail: '65 is greater than the series length N = 64',
    });
  });

  it('noverlap up to nperseg - 1; nperseg, fractions and negatives refused; noverlap alone needs nperseg', () => {
    expect(job({ nperseg: 16, noverlap: 15 }).framing?.step).toBe(1);
    for (const noverlap of [16, 1.5, -1, '4' as never])
      expect(refusal({ nperseg: 16, noverlap }).field, String(noverlap)).toBe('noverlap');
    expect(refusal({ nperseg: 16, noverlap: 16 }).detail).toBe('must be an integer in [0, nperseg = 16), got 16');
    expect(refusal({ noverlap: 4 })).toEqual({ field: 'noverlap', detail: 'needs nperseg (a framed stft)' });
  });

  it('a framed job takes the stft flag alone', () => {
    expect(refusal({ nperseg: 16, flags: ['stft', 'cycles'], bands: [[0.1, 0.2]] })).toEqual({
      field: 'flags',
      detail: 'a framed job (nperseg) takes only the stft flag, not cycles; submit those as a separate job',
    });
    expect(refusal({ nperseg: 16, flags: ['supdem'] }).detail).toBe(
      'a framed job (nperseg) takes only the stft flag, not supdem; submit those as a separate job',
    );
    expect(refusal({ nperseg: 16, flags: ['stft', 'wavelet', 'supdem'], freqs: [0.1] }).detail).toBe(
      'a framed job (nperseg) takes only the stft flag, not wavelet, supdem; submit those as a separate job',
    );
  });

  it('previewBins up to N/2 + 1 (a frame: nperseg/2 + 1); one more is refused', () => {
    expect(job({ previewBins: 33 }).previewBins).toBe(33);
    expect(refusal({ previewBins: 34 })).toEqual({
      field: 'previewBins',
      detail: '34 bins asked, a series of 64 samples has 33 (N/2+1)',
    });
    expect(job({ nperseg: 16, previewBins: 9 }).previewBins).toBe(9);
    expect(refusal({ nperseg: 16, previewBins: 10 })).toEqual({
      field: 'previewBins',
      detail: '10 bins asked, a frame of 16 samples has 9 (nperseg/2+1)',
    });
    expect(job({ nperseg: 16 }).previewBins).toBe(9);
    expect(validateJob({ data: data(1024), flags: ['stft'] }, ctx).previewBins).toBe(256);
  });

  it('a band may touch 0 and fs/2; beyond either edge, or empty, it is refused naming the edge', () => {
    expect(job({ fs: 10, passBand: [0, 5] }).passBand).toEqual([0, 5]);
    expect(job({ fs: 10 }).passBand).toEqual([0, 5]);
    expect(refusal({ fs: 10, passBand: [-0.5, 5] })).toEqual({
      field: 'passBand[0]',
      detail: 'low edge -0.5 Hz is below 0',
    });
    expect(refusal({ fs: 10, passBand: [0, 5.5] })).toEqual({
      field: 'passBand[1]',
      detail: 'high edge 5.5 Hz is above fs/2 = 5 Hz',
    });
    expect(refusal({ fs: 10, passBand: [2, 2] })).toEqual({
      field: 'passBand',
      detail: 'low edge 2 Hz must be below the high edge 2 Hz',
    });
    expect(refusal({ passBand: [0, 0.1, 0.2] as never }).field).toBe('passBand');
    expect(refusal({ passBand: ['0', 0.2] as never }).field).toBe('passBand[0]');
  });

  it('bands: an array of bands, each checked by index; cycles and waveletBands need one', () => {
    expect(
      refusal({
        flags: ['cycles'],
        bands: [
          [0.1, 0.2],
          [0.3, 0.6],
        ],
      }).field,
    ).toBe('bands[1][1]');
    expect(refusal({ bands: 'a' as never })).toEqual({
      field: 'bands',
      detail: 'must be an array of [low, high] pairs, got "a"',
    });
    expect(refusal({ flags: ['cycles'], bands: [] })).toEqual({
      field: 'bands',
      detail: 'the cycles flag needs at least one band',
    });
    expect(refusal({ flags: ['wavelet'], freqs: [0.1], waveletBands: true })).toEqual({
      field: 'bands',
      detail: 'waveletBands needs at least one band',
    });
    expect(refusal({ waveletBands: 1 as never }).field).toBe('waveletBands');
    expect(refusal({ bandWaves: 'no' as never }).field).toBe('bandWaves');
  });

  it('freqs in (0, fs/2]: 0 refused, fs/2 taken, above refused; the wavelet flag needs one', () => {
    expect(job({ flags: ['wavelet'], fs: 10, freqs: [5] }).freqs).toEqual([5]);
    expect(refusal({ flags: ['wavelet'], fs: 10, freqs: [1, 0] })).toEqual({
      field: 'freqs[1]',
      detail: '0 Hz is outside (0, fs/2 = 5]',
    });
    expect(refusal({ flags: ['wavelet'], fs: 10, freqs: [5.01] }).field).toBe('freqs[0]');
    expect(refusal({ flags: ['wavelet'], freqs: 0.1 as never }).field).toBe('freqs');
    expect(refusal({ flags: ['wavelet'], freqs: [] })).toEqual({
      field: 'freqs',
      detail: 'the wavelet flag needs at least one frequency',
    });
    expect(refusal({ flags: ['wavelet'], freqs: ['0.1' as never] }).field).toBe('freqs[0]');
  });

  it('the NOLA check uses the window with its parameter', () => {
    // tukey with alpha 0 is a boxcar (NOLA holds without overlap); tukey's default alpha 0.5 is zero at its ends.
    expect(job({ window: ['tukey', 0], nperseg: 8, noverlap: 0 }).framing?.frames).toBeGreaterThan(0);
    expect(refusal({ window: 'tukey', nperseg: 8, noverlap: 0 }).field).toBe('noverlap');
  });

  it('an unknown field is named, with the fields a job takes', () => {
    expect(refusal({ nfft: 8 } as never)).toEqual({
      field: 'nfft',
      detail:
        'unknown field (known: data, dtype, into, signal, batch, fs, flags, detrend, window, nperseg, noverlap, passBand, previewBins, bands, freqs, nCycles, waveletBands, bandWaves, timeoutMs, label, stageParams, scale, outputDtype, filter, q)',
    });
  });

  it('a Morlet wavelet as wide as a double holds is taken (sigma = nCycles fs / (2 pi f))', () => {
    // 6 / (2 pi 1e-308) is 9.5e307, finite.
    expect(job({ flags: ['wavelet'], freqs: [1e-308] }).freqs).toEqual([1e-308]);
  });

  it('a Morlet wavelet of infinite width names the frequency; of width 0 names nCycles', () => {
    expect(refusal({ flags: ['wavelet'], freqs: [1e-320] }).field).toBe('freqs[0]');
    expect(refusal({ flags: ['wavelet'], freqs: [0.1], nCycles: 1e-200 }).field).toBe('nCycles');
    expect(job({ flags: ['wavelet'], freqs: [0.1], nCycles: 1e-100 }).nCycles).toBe(1e-100);
  });

  it('timeoutMs up to 2^31 - 1 ms (what a Node timer holds); one more is refused', () => {
    expect(job({ timeoutMs: 2 ** 31 - 1 }).timeoutMs).toBe(2 ** 31 - 1);
    expect(refusal({ timeoutMs: 2 ** 31 }).field).toBe('timeoutMs');
    expect(job({}).timeoutMs).toBeUndefined();
  });

  it('16-bit data takes stft and cycles; wavelet and registered stages need f32 or f64', () => {
    const i16 = Int16Array.from({ length: 64 }, (_, i) => i);
    expect(validateJob({ data: i16, flags: ['stft', 'cycles'], bands: [[0.1, 0.2]] }, ctx).dtype).toBe('i16');
    expect(() => validateJob({ data: i16, flags: ['wavelet'], freqs: [0.1] }, ctx)).toThrow(
      /i16 data takes the stft and cycles flags; wavelet need f32 or f64 data/,
    );
    expect(() => validateJob({ data: i16, flags: ['supdem'] }, ctx)).toThrow(
      /i16 data takes the stft and cycles flags; registered stages \(supdem\) need f32 or f64 data/,
    );
    const two = { stages: new Set(['a', 'b']) };
    expect(() => validateJob({ data: i16, flags: ['a', 'b'] }, two)).toThrow(
      /registered stages \(a, b\) need f32 or f64 data/,
    );
  });

  it('into: result arrays only, typed arrays of floats (16-bit bits for waves only)', () => {
    expect(job({ into: { filtered: new Uint16Array(64), spectrum: undefined } }).into.filtered).toBeInstanceOf(
      Uint16Array,
    );
    expect(
      job({ flags: ['cycles'], bands: [[0.1, 0.2]], into: { bandWaves: new Uint16Array(64) } }).into.bandWaves,
    ).toBeInstanceOf(Uint16Array);
    expect(refusal({ into: { spectrum: new Uint16Array(1) as never } })).toMatchObject({
      field: 'into.spectrum',
      detail: expect.stringMatching(/^must be a Float32Array or Float64Array, got /),
    });
    expect(refusal({ into: { extra: new Float32Array(1) } as never }).field).toBe('into.extra');
    expect(refusal({ into: [] as never }).field).toBe('into');
    expect(refusal({ into: 'x' as never }).field).toBe('into');
    expect(job({ into: null as never }).into).toEqual({});
  });

  it('stageParams: an object keyed by registered stages; signal: an AbortSignal', () => {
    expect(refusal({ stageParams: [] as never }).field).toBe('stageParams');
    expect(refusal({ stageParams: 5 as never }).field).toBe('stageParams');
    expect(job({ stageParams: null as never }).stageParams).toEqual({});
    expect(refusal({ stageParams: { other: 1 } })).toEqual({
      field: 'stageParams.other',
      detail: 'no stage "other" is registered',
    });
    expect(refusal({ signal: {} as never })).toEqual({ field: 'signal', detail: 'must be an AbortSignal' });
  });

  it('names each range of the table in its message', () => {
    expect(refusal({ batch: 0 }).detail).toBe('must be an integer >= 1 (positive), got 0');
    expect(refusal({ fs: 0 }).detail).toBe('must be a finite number > 0 (positive), got 0');
    expect(refusal({ nperseg: 1 }).detail).toBe('must be an integer >= 2, got 1');
    expect(refusal({ nperseg: 16, noverlap: -1 }).detail).toBe('must be an integer >= 0, got -1');
    expect(refusal({ nCycles: -1 }).detail).toBe('must be a finite number > 0 (positive), got -1');
    expect(refusal({ previewBins: 'x' as never }).detail).toBe('must be an integer >= 1 (positive), got "x"');
    expect(refusal({ scale: Number.NaN }).field).toBe('scale');
  });

  it('a flag given twice or unknown is named by index, listing the registered stages', () => {
    expect(refusal({ flags: ['stft', 'stft'] })).toEqual({ field: 'flags[1]', detail: '"stft" is given twice' });
    expect(refusal({ flags: ['stft', 'nope'] })).toEqual({
      field: 'flags[1]',
      detail:
        'unknown flag "nope": not one of stft, cycles, wavelet, envelope, decimate nor a registered stage (supdem)',
    });
    expect(() => validateJob({ data: data(64), flags: ['nope'] }, { stages: new Set() })).toThrow(
      /unknown flag "nope": not one of stft, cycles, wavelet, envelope, decimate nor a registered stage$/,
    );
    expect(refusal({ flags: [] }).detail).toBe(
      'is empty: ask for at least one of stft, cycles, wavelet, envelope, decimate or a registered stage',
    );
    expect(refusal({ flags: 'stft' as never })).toEqual({
      field: 'flags',
      detail: 'must be an array of flags (stft, cycles, wavelet, envelope, decimate or a registered stage), got "stft"',
    });
  });
});

describe('validateJobParameters and the job shape', { timeout: 10_000 }, () => {
  it('refuses a job that is not an object, naming (job)', () => {
    for (const spec of [null, [], 'job'])
      expect(() => validateJobParameters(spec as never, 64, ctx)).toThrow(expect.objectContaining({ field: '(job)' }));
    expect(() => validateJob([] as never, ctx)).toThrow(/a job must be an object, got an array/);
  });

  it('refuses no samples and unknown fields; takes the sample type it is told', () => {
    expect(() => validateJobParameters({ flags: ['stft'] }, 0, ctx)).toThrow(
      expect.objectContaining({ field: 'data', detail: 'is empty' }),
    );
    expect(() => validateJobParameters({ flags: ['stft'], nfft: 8 } as never, 64, ctx)).toThrow(
      expect.objectContaining({ field: 'nfft' }),
    );
    expect(() => validateJobParameters({ flags: ['wavelet'], freqs: [0.1] }, 64, ctx, 'f16')).toThrow(
      /f16 data takes the stft and cycles flags/,
    );
    expect(validateJobParameters({ flags: ['wavelet'], freqs: [0.1] }, 64, ctx, 'f64').wavelet).toBe(true);
  });
});

describe('resolveJobWindow edges', { timeout: 10_000 }, () => {
  it('a gaussian std of exactly 0.1 samples is taken, narrower refused at window[1]', () => {
    expect(resolveJobWindow(['gaussian', 0.1]).parameter).toBe(0.1);
    expect(() => resolveJobWindow(['gaussian', 0.099])).toThrow(expect.objectContaining({ field: 'window[1]' }));
  });

  it('names window[1] for a bad parameter and window for a bad name or shape', () => {
    expect(() => resolveJobWindow(['kaiser', '8'])).toThrow(
      expect.objectContaining({ field: 'window[1]', detail: 'must be a finite number, got "8"' }),
    );
    expect(() => resolveJobWindow(42, 'w')).toThrow(
      expect.objectContaining({ field: 'w', detail: 'must be a window name or [name, parameter], got 42' }),
    );
    expect(() => resolveJobWindow('nope')).toThrow(expect.objectContaining({ field: 'window' }));
    expect(() => resolveJobWindow(['hann', 3])).toThrow(expect.objectContaining({ field: 'window' }));
  });
});

describe('checkInto edges', { timeout: 10_000 }, () => {
  it('refuses an explicit float output type other than the engine precision', () => {
    const j = job({ outputDtype: 'f64' });
    expect(() => checkInto(j, 'f32')).toThrow(
      expect.objectContaining({
        field: 'outputDtype',
        detail: "f64 is not this engine's precision (f32); ask for f32, f16 or bf16",
      }),
    );
    expect(() => checkInto(j, 'f64')).not.toThrow();
  });

  it('names the array class with its article and the length it must have', () => {
    expect(() => checkInto(job({ into: { filtered: new Float32Array(64) } }), 'f64')).toThrow(
      expect.objectContaining({
        field: 'into.filtered',
        detail: 'must be a Float64Array (engine precision f64), got Float32Array',
      }),
    );
    expect(() => checkInto(job({ outputDtype: 'f16', into: { filtered: new Float32Array(64) } }), 'f32')).toThrow(
      expect.objectContaining({ detail: 'must be a Uint16Array (outputDtype f16 bits), got Float32Array' }),
    );
    expect(() => checkInto(job({ into: { spectrum: new Float32Array(32) } }), 'f32')).toThrow(
      expect.objectContaining({ detail: 'holds 32 values, the result has 33' }),
    );
    expect(() => checkInto(job({ into: { bandPowers: new Float64Array(1) } }), 'f32')).toThrow(
      expect.objectContaining({ detail: "this job's flags do not produce it" }),
    );
    expect(() =>
      checkInto(job({ into: { spectrum: undefined, filtered: new Float32Array(64) } }), 'f32'),
    ).not.toThrow();
  });
});

describe('each refusal names its field and says what is wrong', { timeout: 10_000 }, () => {
  it('integers refuse fractions; a string, a boolean and an enum value are named in words', () => {
    expect(refusal({ batch: 1.5 })).toEqual({ field: 'batch', detail: 'must be an integer >= 1 (positive), got 1.5' });
    expect(refusal({ previewBins: 2.5 }).detail).toBe('must be an integer >= 1 (positive), got 2.5');
    expect(refusal({ nperseg: 8.5 }).detail).toBe('must be an integer >= 2, got 8.5');
    expect(refusal({ nCycles: Number.POSITIVE_INFINITY }).detail).toBe(
      'must be a finite number > 0 (positive), got Infinity',
    );
    expect(refusal({ waveletBands: 1 as never })).toEqual({
      field: 'waveletBands',
      detail: 'must be true or false, got 1',
    });
    expect(refusal({ detrend: 'none' as never })).toEqual({
      field: 'detrend',
      detail: 'must be one of "linear", "constant", false, got "none"',
    });
    expect(job({ label: 'x'.repeat(200) }).label).toHaveLength(200);
    expect(refusal({ label: 'x'.repeat(201) })).toEqual({
      field: 'label',
      detail: 'must be a string of at most 200 characters, got 201 characters',
    });
    expect(refusal({ label: 5 as never }).detail).toBe('must be a string of at most 200 characters, got 5');
  });

  it('a number row without a range says only that it must be finite', () => {
    expect(() => validateJobParameters({ flags: ['stft'], scale: 'x' as never }, 64, ctx)).toThrow(
      expect.objectContaining({ field: 'scale', detail: 'must be a finite number, got "x"' }),
    );
  });

  it('bands, freqs, into and stageParams of the wrong shape', () => {
    expect(refusal({ passBand: [0, 0.1, 0.2] as never }).detail).toBe('must be a [low, high] pair in Hz, got an array');
    expect(refusal({ flags: ['wavelet'], freqs: 0.1 as never })).toEqual({
      field: 'freqs',
      detail: 'must be an array of frequencies in Hz, got 0.1',
    });
    expect(refusal({ into: 'x' as never })).toEqual({
      field: 'into',
      detail: 'must be an object of result arrays, got "x"',
    });
    expect(refusal({ into: { extra: new Float32Array(1) } as never })).toEqual({
      field: 'into.extra',
      detail:
        'is not a result array (known: filtered, spectrum, bandPowers, bandWaves, waveletPower, envelope, decimated)',
    });
    expect(refusal({ into: { filtered: new Int16Array(64) as never } }).detail).toMatch(
      /^must be a Float32Array or Float64Array \(a Uint16Array with outputDtype f16\/bf16\), got /,
    );
    expect(refusal({ stageParams: 5 as never })).toEqual({
      field: 'stageParams',
      detail: 'must be an object keyed by stage name, got 5',
    });
  });

  it('an unknown flag lists every registered stage', () => {
    expect(() => validateJob({ data: data(64), flags: ['nope'] }, { stages: new Set(['a', 'b']) })).toThrow(
      /nor a registered stage \(a, b\)$/,
    );
  });

  it('a job that is not an object, and a context without stages, are named', () => {
    expect(() => validateJob(null as never, ctx)).toThrow(
      expect.objectContaining({ field: '(job)', detail: 'a job must be an object, got null' }),
    );
    expect(() => validateJob('job' as never, ctx)).toThrow(
      expect.objectContaining({ field: '(job)', detail: 'a job must be an object, got "job"' }),
    );
    expect(() => validateJobParameters(null as never, 64, ctx)).toThrow(
      expect.objectContaining({ detail: 'a job must be an object, got null' }),
    );
    expect(() => validateJobParameters([] as never, 64, ctx)).toThrow(
      expect.objectContaining({ detail: 'a job must be an object, got an array' }),
    );
    expect(() => validateJob({ data: data(64), flags: ['stft'] }, null as never)).toThrow(
      new TypeError(
        'validateJob needs a context { stages: a Set of registered stage names } (an engine passes its own)',
      ),
    );
  });

  it('validateJob leaves NaN samples to the doors and the GPU; validateJobParameters takes f32 data by default', () => {
    const bad = data(64);
    bad[7] = Number.NaN;
    // The engine's submit path does not scan samples (its lanes search them on the GPU)...
    expect(validateJob({ data: bad, flags: ['stft'] }, ctx).data).toBe(bad);
    // ...while a door's check refuses the same job, naming the sample.
    expect(() => checkSampleTypes({ data: bad }, { finite: true })).toThrow(
      expect.objectContaining({ field: 'data[7]' }),
    );
    expect(validateJobParameters({ flags: ['wavelet'], freqs: [0.1] }, 64, ctx).wavelet).toBe(true);
  });

  it('a window given as a one-item array is named as the window, not its parameter', () => {
    expect(() => resolveJobWindow(['hann'])).toThrow(expect.objectContaining({ field: 'window' }));
    expect(() => resolveJobWindow(['gaussian', 0.099])).toThrow(
      expect.objectContaining({ detail: "a gaussian window's std must be at least 0.1 samples, got 0.099" }),
    );
  });

  it('jobSamples: batch times length', () => {
    expect(jobSamples(validateJob({ data: data(12), batch: 3, flags: ['stft'] }, ctx))).toBe(12);
  });
});
