// Signal geometry at its edges against scipy 1.17 and numpy (values computed there and written out
// here): check_COLA's median of the overlap-added window (sorted first), check_NOLA's tolerance,
// frame times with and without a boundary, istft's lengths for odd nperseg, the frequency axes,
// and bandBins at the edges of its bins.
import { describe, expect, it } from 'vitest';
import {
  SPECTROGRAM_DEFAULTS,
  STFT_DEFAULTS,
  bandBins,
  boundaryCode,
  checkDetrend,
  checkFs,
  detrendCode,
  fftFrequencies,
  FramingError,
  isDoubledBin,
  psdScale,
  rfftFrequencies,
  spectralGeometry,
  spectralTimes,
  stftScale,
} from '../../../src/signal/geometry.js';
import { checkCOLA, checkNOLA, istftGeometry } from '../../../src/signal/inverse-geometry.js';

describe('COLA and NOLA against scipy', { timeout: 5_000 }, () => {
  it('check_COLA measures from the median of the sorted sums (odd and even counts)', () => {
    // scipy.signal.check_COLA([3, 1, 2], 3, 0, tol=1.5) is True (median 2), with tol 0.99 False.
    expect(checkCOLA(Float64Array.of(3, 1, 2), 3, 0, 1.5)).toBe(true);
    expect(checkCOLA(Float64Array.of(3, 1, 2), 3, 0, 0.99)).toBe(false);
    // check_COLA([1, 4, 2, 3], 4, 0, tol=1.6) is True (median 2.5), with tol 1.4 False.
    expect(checkCOLA(Float64Array.of(1, 4, 2, 3), 4, 0, 1.6)).toBe(true);
    expect(checkCOLA(Float64Array.of(1, 4, 2, 3), 4, 0, 1.4)).toBe(false);
  });

  it('check_COLA needs the largest deviation strictly below the tolerance', () => {
    // check_COLA([3, 1, 2], 3, 0, tol=1.0) is False: the deviation is exactly 1.
    expect(checkCOLA(Float64Array.of(3, 1, 2), 3, 0, 1)).toBe(false);
  });

  it('overlap-adds the tail of a window that the step does not divide, in order', () => {
    // check_NOLA([1, 0, 1, 1, 0], 5, 2) is False: position 1 gets w[1]^2 + w[4]^2 = 0.
    expect(checkNOLA(Float64Array.of(1, 0, 1, 1, 0), 5, 2)).toBe(false);
    expect(checkNOLA(Float64Array.of(1, 0, 1, 1, 0.5), 5, 2)).toBe(true);
    // Squares, not values: sums of squares 1.25, 0.25 (tol 0.2 passes, 0.3 does not).
    expect(checkNOLA(Float64Array.of(1, 0.5, 0.5, 1), 4, 2, 0.2)).toBe(true);
    // check_NOLA([0.5, 1, 1, 0.5, 1], 5, 2): sums of squares 0.5, 2, 1 (the tail 0.5, 1 added to the first two).
    expect(checkNOLA(Float64Array.of(0.5, 1, 1, 0.5, 1), 5, 2, 0.8)).toBe(false);
    expect(checkNOLA(Float64Array.of(0.5, 1, 1, 0.5, 1), 5, 2, 0.4)).toBe(true);
  });

  it('check_NOLA needs the smallest sum of squares strictly above the tolerance', () => {
    // check_NOLA([1, 0.5, 1], 3, 0, tol=0.25) is False; tol=0.2499 True.
    expect(checkNOLA(Float64Array.of(1, 0.5, 1), 3, 0, 0.25)).toBe(false);
    expect(checkNOLA(Float64Array.of(1, 0.5, 1), 3, 0, 0.2499)).toBe(true);
  });

  it('refuses a window of the wrong length and an overlap out of range, naming them', () => {
    expect(() => checkCOLA(Float64Array.of(1, 1), 3, 0)).toThrow(new RangeError('window has 2 points, nperseg is 3'));
    expect(() => checkNOLA('hann', 8, 8)).toThrow(new FramingError('noverlap', 8, 'must be less than nperseg = 8'));
    expect(() => checkNOLA('hann', 8, -1)).toThrow(new RangeError('noverlap must be a non-negative integer, got -1'));
    expect(() => checkCOLA('hann', 8, 1.5)).toThrow(/noverlap must be a non-negative integer, got 1.5/);
  });
});

describe('frame times and lengths against scipy', { timeout: 5_000 }, () => {
  it('spectrogram (no boundary): frame centres', () => {
    const g = spectralGeometry(100, { fs: 4, nperseg: 16 }, SPECTROGRAM_DEFAULTS);
    expect(Array.from(spectralTimes(g))).toEqual([2, 5.5, 9, 12.5, 16, 19.5, 23]);
  });

  it('stft (zeros boundary, padded): frame centres from 0', () => {
    const g = spectralGeometry(30, { fs: 2, nperseg: 8, noverlap: 5 }, STFT_DEFAULTS);
    expect(g.frames).toBe(11);
    expect(Array.from(spectralTimes(g))).toEqual([0, 1.5, 3, 4.5, 6, 7.5, 9, 10.5, 12, 13.5, 15]);
  });

  it('istft: output lengths for even and odd nperseg, with and without the boundary', () => {
    expect(istftGeometry(5, 7).outputLength).toBe(24);
    expect(istftGeometry(5, 7, { nperseg: 9, noverlap: 4 })).toMatchObject({ nfft: 9, outputLength: 31, trim: 4 });
    expect(istftGeometry(5, 7, { boundary: false })).toMatchObject({ outputLength: 32, trim: 0 });
  });
});

describe('argument checks, each named', { timeout: 5_000 }, () => {
  it('spectralGeometry: length, nperseg, nfft, noverlap, boundary, padded, returnOnesided', () => {
    expect(() => spectralGeometry(0, {}, STFT_DEFAULTS)).toThrow(
      new RangeError('signal length must be a positive integer, got 0'),
    );
    expect(() => spectralGeometry(64, { nperseg: 0 }, STFT_DEFAULTS)).toThrow(
      new RangeError('nperseg must be a positive integer, got 0'),
    );
    expect(() => spectralGeometry(64, { nperseg: 16, nfft: 0 }, STFT_DEFAULTS)).toThrow(
      new RangeError('nfft must be a positive integer, got 0'),
    );
    expect(spectralGeometry(64, { nperseg: 16, nfft: 16 }, STFT_DEFAULTS).nfft).toBe(16);
    expect(() => spectralGeometry(64, { nperseg: 16, nfft: 15 }, STFT_DEFAULTS)).toThrow(
      new FramingError('nfft', 15, 'must be greater than or equal to nperseg = 16'),
    );
    expect(spectralGeometry(64, { nperseg: 16, noverlap: 0, window: 'boxcar' }, STFT_DEFAULTS).hop).toBe(16);
    expect(() => spectralGeometry(64, { nperseg: 16, noverlap: -1 }, STFT_DEFAULTS)).toThrow(
      new RangeError('noverlap must be a non-negative integer, got -1'),
    );
    expect(() => spectralGeometry(64, { nperseg: 16, noverlap: 2.5 }, STFT_DEFAULTS)).toThrow(
      new RangeError('noverlap must be a non-negative integer, got 2.5'),
    );
    expect(() => spectralGeometry(64, { boundary: 'wrap' as never }, STFT_DEFAULTS)).toThrow(
      new TypeError(`boundary must be 'zeros', 'even', 'odd', 'constant' or null, got "wrap"`),
    );
    expect(spectralGeometry(64, { nperseg: 16, boundary: 'constant' }, STFT_DEFAULTS).boundary).toBe('constant');
    expect(() => spectralGeometry(64, { padded: 1 as never }, STFT_DEFAULTS)).toThrow(
      new TypeError('padded must be a boolean, got 1'),
    );
    expect(() => spectralGeometry(64, { returnOnesided: 'no' as never }, STFT_DEFAULTS)).toThrow(
      new TypeError('returnOnesided must be a boolean, got "no"'),
    );
  });

  it('checkDetrend takes each of its values; the axes name their n', () => {
    expect(['constant', 'linear', false].map((d) => checkDetrend(d))).toEqual(['constant', 'linear', false]);
    expect(() => rfftFrequencies(0, 1)).toThrow(new RangeError('rfftFrequencies: n must be a positive integer, got 0'));
    expect(() => fftFrequencies(2.5, 1)).toThrow(
      new RangeError('fftFrequencies: n must be a positive integer, got 2.5'),
    );
    expect(() => checkNOLA(Float64Array.of(1), 0, 0)).toThrow(
      new RangeError('nperseg must be a positive integer, got 0'),
    );
    expect(() => bandBins([0, 1], 8, 0, 'passBand')).toThrow(
      new RangeError('passBand: transform length must be a positive integer, got 0'),
    );
  });

  it('istftGeometry: bins, frames, nperseg, nfft, onesided, boundary, and what leaves no output', () => {
    expect(() => istftGeometry(0, 7)).toThrow(new RangeError('frequency bins must be a positive integer, got 0'));
    expect(() => istftGeometry(5, 0)).toThrow(new RangeError('frames must be a positive integer, got 0'));
    expect(() => istftGeometry(5, 7, { nperseg: 0 })).toThrow(
      new RangeError('nperseg must be a positive integer, got 0'),
    );
    expect(() => istftGeometry(1, 3)).toThrow(
      new RangeError('nperseg must be a positive integer (from 1 frequency bins), got 0'),
    );
    expect(istftGeometry(5, 7, { nperseg: 1, noverlap: 0, boundary: false }).outputLength).toBe(7);
    expect(() => istftGeometry(5, 7, { nfft: 0 })).toThrow(new RangeError('nfft must be a positive integer, got 0'));
    expect(istftGeometry(5, 7, { nperseg: 8, nfft: 8 }).nfft).toBe(8);
    expect(() => istftGeometry(5, 7, { nperseg: 8, nfft: 7 })).toThrow(
      new FramingError('nfft', 7, 'must be greater than or equal to nperseg = 8'),
    );
    expect(() => istftGeometry(5, 7, { inputOnesided: false, nperseg: 6 })).toThrow(
      new RangeError('nfft = 5 (from 5 frequency bins) is less than nperseg = 6; give nfft'),
    );
    expect(() => istftGeometry(5, 7, { inputOnesided: 1 as never })).toThrow(
      new TypeError('inputOnesided must be a boolean, got 1'),
    );
    expect(() => istftGeometry(5, 7, { boundary: 'yes' as never })).toThrow(
      new TypeError('boundary must be a boolean (istft), got "yes"'),
    );
    expect(() => istftGeometry(5, 1)).toThrow(
      new RangeError('istft of 1 frames of 8 samples leaves no output after removing the boundary'),
    );
    expect(istftGeometry(5, 1, { nperseg: 9 }).outputLength).toBe(1);
  });

  it('istft: nfft from the bins (8 from 5 one-sided bins) unless nperseg is one more (odd)', () => {
    // scipy.signal.istft of 5 x 7 bins with nperseg 6: nfft 8, 18 samples.
    expect(istftGeometry(5, 7, { nperseg: 6 })).toMatchObject({ nfft: 8, outputLength: 18 });
  });

  it('a window that violates NOLA is a NolaError naming it', () => {
    let error: unknown;
    try {
      istftGeometry(5, 7, { noverlap: 0 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).name).toBe('NolaError');
    expect((error as Error).message).toBe(
      'window "hann" with nperseg = 8 and noverlap = 0 violates NOLA: the STFT cannot be inverted',
    );
    expect(() => istftGeometry(5, 7, { noverlap: 0, window: 'bartlett' })).toThrow(
      /^window "bartlett" with nperseg = 8/,
    );
  });
});

describe('frequency axes against numpy', { timeout: 5_000 }, () => {
  it('rfftfreq and fftfreq for odd and even n', () => {
    const close = (actual: Float64Array, expected: number[]): void => {
      expect(actual.length).toBe(expected.length);
      expected.forEach((e, i) => expect(actual[i], `[${i}]`).toBeCloseTo(e, 12));
    };
    close(rfftFrequencies(7, 3), [0, 3 / 7, 6 / 7, 9 / 7]);
    close(rfftFrequencies(6, 3), [0, 0.5, 1, 1.5]);
    close(fftFrequencies(7, 3), [0, 3 / 7, 6 / 7, 9 / 7, -9 / 7, -6 / 7, -3 / 7]);
    close(fftFrequencies(6, 3), [0, 0.5, 1, -1.5, -1, -0.5]);
  });

  it('doubles every one-sided bin but DC and an even transform’s Nyquist', () => {
    expect([0, 1, 3, 4].map((k) => isDoubledBin(k, 8))).toEqual([false, true, true, false]);
    expect([0, 1, 3, 4].map((k) => isDoubledBin(k, 9))).toEqual([false, true, true, true]);
  });
});

describe('bandBins edges (bins at k fs / n)', { timeout: 5_000 }, () => {
  it('keeps the bins whose frequency lies in [lo, hi], edges included; an empty band has k0 > k1', () => {
    expect(bandBins([1, 3], 8, 8)).toEqual([1, 3]);
    expect(bandBins([1.5, 2.5], 8, 8)).toEqual([2, 2]);
    expect(bandBins([0, 4], 8, 8)).toEqual([0, 4]);
    expect(bandBins([4, 4], 8, 8)).toEqual([4, 4]);
    expect(bandBins([1.2, 1.8], 8, 8)).toEqual([2, 1]);
  });

  it('absorbs rounding just past fs/2 and refuses past the slack', () => {
    expect(bandBins([0, 4 + 1e-12], 8, 8)).toEqual([0, 4]);
    // The slack is 1e-9 of fs/2 (4e-9 here), the edges included.
    expect(bandBins([0, 4 + 1e-9], 8, 8)).toEqual([0, 4]);
    expect(bandBins([0, 4 + 1e-9 * 4], 8, 8)).toEqual([0, 4]);
    expect(bandBins([-(1e-9 * 4), 1], 8, 8)).toEqual([0, 1]);
    expect(() => bandBins([0, 4 + 1e-8], 8, 8)).toThrow(RangeError);
    expect(bandBins([-1e-12, 1], 8, 8)).toEqual([0, 1]);
    expect(() => bandBins([0, 4.001], 8, 8)).toThrow(
      new RangeError('band [0, 4.001] must satisfy 0 <= lo <= hi <= fs/2 = 4'),
    );
    expect(() => bandBins([-0.001, 1], 8, 8, 'bands[2]')).toThrow(/^bands\[2\] \[-0.001, 1\] must satisfy/);
    expect(() => bandBins([3, 2], 8, 8)).toThrow(RangeError);
  });

  it('refuses bands that are not pairs of finite numbers, naming them', () => {
    expect(() => bandBins([1] as never, 8, 8)).toThrow(new TypeError('band must be [lo, hi], got [1]'));
    expect(() => bandBins([1, Number.NaN], 8, 8, 'passBand')).toThrow(
      new RangeError('passBand edges must be finite numbers, got [1, NaN]'),
    );
    expect(() => bandBins(['1', 2] as never, 8, 8)).toThrow(RangeError);
  });
});

describe('codes, checks and scales', { timeout: 5_000 }, () => {
  it('the kernels’ codes for boundaries and detrend types', () => {
    expect([null, 'zeros', 'even', 'odd', 'constant'].map((b) => boundaryCode(b as never))).toEqual([0, 1, 2, 3, 4]);
    expect([false, 'constant', 'linear'].map((d) => detrendCode(d as never))).toEqual([0, 1, 2]);
  });

  it('fs must be a positive finite number; detrend one of its three values', () => {
    expect(checkFs(Number.MIN_VALUE)).toBe(Number.MIN_VALUE);
    for (const fs of [0, -1, Infinity, Number.NaN, '1'])
      expect(() => checkFs(fs), String(fs)).toThrow(/^fs must be a positive finite number, got /);
    expect(() => checkDetrend('none', 'opts.detrend')).toThrow(
      new TypeError(`opts.detrend must be 'constant', 'linear' or false, got "none"`),
    );
    expect(checkDetrend(false)).toBe(false);
  });

  it('names an unknown scaling', () => {
    const g = spectralGeometry(64, { nperseg: 16 }, STFT_DEFAULTS);
    expect(() => stftScale(g, 'density' as never)).toThrow(
      new TypeError(`scaling must be 'spectrum' or 'psd', got "density"`),
    );
    expect(() => psdScale(g, 'psd' as never)).toThrow(
      new TypeError(`scaling must be 'density' or 'spectrum', got "psd"`),
    );
    expect(() => istftGeometry(5, 7, { scaling: 'x' as never })).toThrow(
      new TypeError(`scaling must be 'spectrum' or 'psd', got "x"`),
    );
  });
});
