// The one framing (geometry.ts) against a float64 hand computation written from scipy's
// _spectral_helper (extension, padding, numpy's as_strided frame count, np.arange frame times) for
// every boundary and padded combination scipy takes, odd and even nperseg and nfft > nperseg; its
// refusals, each naming the field and value; and the runs of frames a chunk of a long STFT runs
// (frameSpan, framesGeometry, istftGeometryOf), which must equal the framing done afresh.
import { describe, expect, it } from 'vitest';
import {
  frameSpan,
  framesGeometry,
  FramingError,
  spectralGeometry,
  spectralTimes,
  STFT_DEFAULTS,
  type Boundary,
  type SpectralGeometry,
} from '../../../src/signal/geometry.js';
import { istftGeometry, istftGeometryOf } from '../../../src/signal/inverse-geometry.js';

/** Python's a % m (the sign of m). */
const pyMod = (a: number, m: number): number => ((a % m) + m) % m;

/** scipy.signal.stft's framing, step by step as _spectral_helper computes it (float64 times). */
function scipyFraming(
  n: number,
  nperseg: number,
  noverlap: number,
  boundary: Boundary,
  padded: boolean,
  fs: number,
): { extended: number; frames: number; t: number[] } {
  const step = nperseg - noverlap;
  let len = n;
  if (boundary !== null) len += 2 * Math.trunc(nperseg / 2); // x = ext_func(x, nperseg // 2)
  if (padded) len += pyMod(pyMod(-(len - nperseg), step), nperseg); // nadd = (-(x.shape[-1]-nperseg) % nstep) % nperseg
  const frames = Math.trunc((len - noverlap) / step); // as_strided: (x.shape[-1] - noverlap) // step
  // t = np.arange(nperseg/2, x.shape[-1] - nperseg/2 + 1, nperseg - noverlap) / float(fs), shifted back by a boundary.
  const t: number[] = [];
  for (let v = nperseg / 2; v < len - nperseg / 2 + 1; v += step)
    t.push(v / fs - (boundary !== null ? nperseg / 2 / fs : 0));
  return { extended: len, frames, t };
}

const BOUNDARIES: Boundary[] = [null, 'zeros', 'even', 'odd', 'constant'];

/** [N, nperseg, noverlap, nfft]: odd and even lengths and frames, overlaps from none to nperseg - 1, nfft above nperseg. */
const CASES: [number, number, number, number][] = [
  [100, 16, 8, 16],
  [100, 15, 5, 15],
  [101, 16, 10, 32],
  [37, 8, 7, 9],
  [64, 64, 0, 64],
  [64, 64, 63, 128],
  [50, 9, 0, 9],
  [33, 32, 5, 33],
  [1000, 256, 192, 512],
  [7, 3, 1, 4],
];

describe('spectralGeometry frames as scipy does (float64 hand computation)', { timeout: 10_000 }, () => {
  for (const [n, nperseg, noverlap, nfft] of CASES)
    for (const boundary of BOUNDARIES)
      for (const padded of [true, false])
        it(`N ${n}, nperseg ${nperseg}, noverlap ${noverlap}, nfft ${nfft}, boundary ${boundary}, padded ${padded}`, () => {
          const fs = 3.5;
          const g = spectralGeometry(n, { fs, nperseg, noverlap, nfft, boundary, padded }, STFT_DEFAULTS);
          const want = scipyFraming(n, nperseg, noverlap, boundary, padded, fs);
          expect([g.extendedLength, g.frames, g.hop]).toEqual([want.extended, want.frames, nperseg - noverlap]);
          expect(g.extension).toBe(boundary === null ? 0 : Math.floor(nperseg / 2));
          expect(g.extendedLength - g.padding).toBe(n + 2 * g.extension);
          expect([g.nfft, g.freqs, g.halfBins]).toEqual([nfft, Math.floor(nfft / 2) + 1, Math.floor(nfft / 2) + 1]);
          const t = spectralTimes(g);
          expect(t.length).toBe(want.t.length);
          want.t.forEach((v, i) => expect(Math.abs(t[i]! - v), `t[${i}]`).toBeLessThanOrEqual(1e-12 * Math.max(1, v)));
          // The frames read inside the extended series; padded, they end exactly at its end.
          const covered = frameSpan(g, 0, g.frames).length;
          expect(covered).toBeLessThanOrEqual(g.extendedLength);
          if (padded) expect(covered).toBe(g.extendedLength);
          expect(Object.isFrozen(g)).toBe(true);
        });
});

describe('spectralGeometry refuses each framing parameter by name and value', { timeout: 5_000 }, () => {
  const refusal = (run: () => unknown): FramingError => {
    try {
      run();
    } catch (e) {
      return e as FramingError;
    }
    throw new Error('not refused');
  };

  it('nperseg longer than the series, noverlap not below nperseg, nfft below nperseg: FramingError', () => {
    const cases = [
      [{ nperseg: 65 }, 'nperseg', '65 is greater than the signal length 64'],
      [{ nperseg: 16, noverlap: 16 }, 'noverlap', '16 must be less than nperseg = 16'],
      [{ nperseg: 16, noverlap: 17 }, 'noverlap', '17 must be less than nperseg = 16'],
      [{ nperseg: 16, nfft: 15 }, 'nfft', '15 must be greater than or equal to nperseg = 16'],
    ] as const;
    for (const [options, field, detail] of cases) {
      const e = refusal(() => spectralGeometry(64, options, STFT_DEFAULTS));
      expect(e).toBeInstanceOf(FramingError);
      expect(e).toBeInstanceOf(RangeError);
      expect([e.name, e.field, e.detail, e.message]).toEqual(['FramingError', field, detail, `${field} = ${detail}`]);
    }
  });

  it('takes each limit exactly: nperseg = N, noverlap = nperseg - 1, nfft = nperseg', () => {
    expect(spectralGeometry(64, { nperseg: 64 }, STFT_DEFAULTS).nperseg).toBe(64);
    expect(spectralGeometry(64, { nperseg: 16, noverlap: 15 }, STFT_DEFAULTS).hop).toBe(1);
    expect(spectralGeometry(64, { nperseg: 16, nfft: 16 }, STFT_DEFAULTS).nfft).toBe(16);
  });

  it('checks nperseg first, then nfft, then noverlap (the first bad field is named)', () => {
    expect(refusal(() => spectralGeometry(64, { nperseg: 65, nfft: 1, noverlap: 99 }, STFT_DEFAULTS)).field).toBe(
      'nperseg',
    );
    expect(refusal(() => spectralGeometry(64, { nperseg: 16, nfft: 1, noverlap: 99 }, STFT_DEFAULTS)).field).toBe(
      'nfft',
    );
  });

  it('a value that is no count is a RangeError naming the field (not a FramingError)', () => {
    for (const noverlap of [-1, 2.5, Number.NaN]) {
      const e = refusal(() => spectralGeometry(64, { nperseg: 16, noverlap }, STFT_DEFAULTS));
      expect(e).not.toBeInstanceOf(FramingError);
      expect(e.message).toBe(`noverlap must be a non-negative integer, got ${noverlap}`);
    }
    expect(refusal(() => spectralGeometry(64, { nperseg: 16, noverlap: '4' as never }, STFT_DEFAULTS)).message).toBe(
      'noverlap must be a non-negative integer, got "4"',
    );
    expect(refusal(() => spectralGeometry(64, { nperseg: 16, nfft: 0 }, STFT_DEFAULTS)).message).toBe(
      'nfft must be a positive integer, got 0',
    );
  });
});

/** The fields two geometries share, the window by value. */
function comparable(g: SpectralGeometry): Record<string, unknown> {
  return { ...g, window: Array.from(g.window) };
}

describe('a run of frames (what one chunk of a long STFT runs)', { timeout: 10_000 }, () => {
  it('frameSpan: frames [first, first + k) read k - 1 hops and one frame from first * hop', () => {
    const layout = { nperseg: 10, hop: 4, frames: 50 };
    expect(frameSpan(layout, 0, 1)).toEqual({ start: 0, length: 10 });
    expect(frameSpan(layout, 7, 3)).toEqual({ start: 28, length: 18 });
    expect(frameSpan(layout, 0, 50)).toEqual({ start: 0, length: 206 });
  });

  it('framesGeometry equals the geometry made afresh over the run’s samples (no boundary, no padding)', () => {
    for (const [n, nperseg, noverlap, nfft] of CASES)
      for (const boundary of BOUNDARIES) {
        const options = { fs: 8, nperseg, noverlap, nfft, boundary, window: ['kaiser', 5] as const };
        const g = spectralGeometry(n, options, STFT_DEFAULTS);
        for (const frames of new Set([1, Math.ceil(g.frames / 2), g.frames])) {
          const run = framesGeometry(g, frames);
          const length = frameSpan(g, 0, frames).length;
          const fresh = spectralGeometry(length, { ...options, boundary: null, padded: false }, STFT_DEFAULTS);
          expect(comparable(run), `N ${n} nperseg ${nperseg} ${boundary} ${frames} frames`).toEqual(comparable(fresh));
          expect(Object.isFrozen(run)).toBe(true);
        }
      }
  });

  it('framesGeometry checks only the count', () => {
    const g = spectralGeometry(100, { nperseg: 16, boundary: null, padded: false }, STFT_DEFAULTS);
    expect(g.frames).toBe(11);
    for (const frames of [0, 12, 1.5, Number.NaN])
      expect(() => framesGeometry(g, frames)).toThrow(
        new RangeError(`frames must be an integer in [1, 11] (the geometry's frames), got ${frames}`),
      );
    expect(framesGeometry(g, 11).frames).toBe(11);
    expect(framesGeometry(g, 1).length).toBe(16);
  });

  it('istftGeometryOf equals istftGeometry of the same frames (one- and two-sided, odd and even nperseg)', () => {
    for (const [n, nperseg, noverlap, nfft] of CASES)
      for (const returnOnesided of [true, false])
        for (const boundary of [true, false])
          for (const scaling of ['spectrum', 'psd'] as const) {
            const window = noverlap === 0 ? 'boxcar' : 'hann'; // hann without overlap violates NOLA
            const options = { fs: 5, window, nperseg, noverlap, nfft, returnOnesided };
            const whole = spectralGeometry(n, options, STFT_DEFAULTS);
            const g = framesGeometry(whole, Math.min(3, whole.frames));
            if (boundary && 2 * Math.floor(nperseg / 2) >= g.length) continue; // no output left after the boundary
            const { window: w1, ...derived } = istftGeometryOf(g, { boundary, scaling });
            const { window: w2, ...afresh } = istftGeometry(g.freqs, g.frames, {
              fs: 5,
              window,
              nperseg,
              noverlap,
              nfft,
              inputOnesided: returnOnesided,
              boundary,
              scaling,
            });
            expect(derived, `nperseg ${nperseg} nfft ${nfft} ${returnOnesided} ${boundary} ${scaling}`).toEqual(afresh);
            expect(Array.from(w1)).toEqual(Array.from(w2));
          }
  });
});
