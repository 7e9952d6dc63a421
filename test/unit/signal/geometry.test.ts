import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bandBins,
  fftFrequencies,
  psdScale,
  rfftFrequencies,
  SPECTROGRAM_DEFAULTS,
  spectralFrequencies,
  spectralGeometry,
  spectralTimes,
  STFT_DEFAULTS,
  stftScale,
  WELCH_DEFAULTS,
  type SpectralOptions,
} from '../../../src/signal/geometry.js';
import { checkCOLA, checkNOLA, istftGeometry, NolaError } from '../../../src/signal/inverse-geometry.js';
import type { WindowSpec } from '../../../src/signal/window.js';

interface ScipyCase {
  N: number;
  kw: {
    nperseg?: number;
    noverlap?: number;
    nfft?: number;
    boundary?: string | null;
    padded?: boolean;
    return_onesided?: boolean;
    fs?: number;
  };
  f: number[];
  t: number[];
  shape: number[];
}
/** Axes and shapes printed by scipy 1.17 for these calls (scipy.signal.stft / spectrogram). */
const SCIPY = JSON.parse(readFileSync(join(import.meta.dirname, 'scipy-constants.json'), 'utf8')) as {
  stft: ScipyCase[];
  spectrogram: ScipyCase[];
  nola: { w: string | [string, number]; n: number; ov: number; nola: boolean; cola: boolean }[];
};

function options(kw: ScipyCase['kw']): SpectralOptions {
  const o: SpectralOptions = {};
  if (kw.nperseg !== undefined) o.nperseg = kw.nperseg;
  if (kw.noverlap !== undefined) o.noverlap = kw.noverlap;
  if (kw.nfft !== undefined) o.nfft = kw.nfft;
  if (kw.boundary !== undefined) o.boundary = kw.boundary as SpectralOptions['boundary'];
  if (kw.padded !== undefined) o.padded = kw.padded;
  if (kw.return_onesided !== undefined) o.returnOnesided = kw.return_onesided;
  if (kw.fs !== undefined) o.fs = kw.fs;
  return o;
}

function expectClose(a: ArrayLike<number>, b: readonly number[]): void {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < b.length; i++)
    expect(Math.abs(a[i]! - b[i]!)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(b[i]!)));
}

describe('STFT geometry matches scipy', () => {
  for (const c of SCIPY.stft) {
    it(`stft N=${c.N} ${JSON.stringify(c.kw)}`, () => {
      const g = spectralGeometry(c.N, options(c.kw), STFT_DEFAULTS);
      expect([g.freqs, g.frames]).toEqual(c.shape);
      expectClose(spectralFrequencies(g), c.f);
      expectClose(spectralTimes(g), c.t);
    });
  }
  for (const c of SCIPY.spectrogram) {
    it(`spectrogram N=${c.N} ${JSON.stringify(c.kw)}`, () => {
      const g = spectralGeometry(c.N, options(c.kw), SPECTROGRAM_DEFAULTS);
      expect([g.freqs, g.frames]).toEqual(c.shape);
      expectClose(spectralFrequencies(g), c.f);
      expectClose(spectralTimes(g), c.t);
    });
  }

  it('derives defaults as scipy does', () => {
    const g = spectralGeometry(1000, {}, STFT_DEFAULTS);
    expect([g.nperseg, g.noverlap, g.nfft, g.hop, g.extension, g.boundary, g.detrend]).toEqual([
      256,
      128,
      256,
      128,
      128,
      'zeros',
      false,
    ]);
    // padded: 1000 + 256 = 1256 -> nadd = (-(1256-256) % 128) % 256 = 24
    expect([g.padding, g.extendedLength, g.frames]).toEqual([24, 1280, 9]);
    const s = spectralGeometry(100, {}, SPECTROGRAM_DEFAULTS);
    expect([s.nperseg, s.noverlap, s.boundary, s.padding, s.detrend]).toEqual([100, 12, null, 0, 'constant']);
    expect(s.windowSpec).toEqual(['tukey', 0.25]);
    const w = spectralGeometry(100, { nperseg: 32 }, WELCH_DEFAULTS);
    expect([w.noverlap, w.frames]).toEqual([16, 5]);
  });

  it('scales as scipy: spectrum 1/sum(w), psd 1/sqrt(fs sum w^2); density 1/(fs sum w^2)', () => {
    const g = spectralGeometry(64, { nperseg: 16, fs: 4 }, STFT_DEFAULTS);
    expect(stftScale(g, 'spectrum')).toBeCloseTo(1 / 8, 15);
    const sq = g.window.reduce((a, b) => a + b * b, 0);
    expect(stftScale(g, 'psd')).toBeCloseTo(1 / Math.sqrt(4 * sq), 15);
    expect(psdScale(g, 'density')).toBeCloseTo(1 / (4 * sq), 15);
    expect(psdScale(g, 'spectrum')).toBeCloseTo(1 / 64, 15);
    expect(() => stftScale(g, 'density' as 'psd')).toThrow(/scaling/);
  });

  it('refuses bad parameters naming them', () => {
    expect(() => spectralGeometry(100, { nperseg: 101 }, STFT_DEFAULTS)).toThrow(/nperseg = 101/);
    expect(() => spectralGeometry(100, { nperseg: 16, noverlap: 16 }, STFT_DEFAULTS)).toThrow(/noverlap = 16/);
    expect(() => spectralGeometry(100, { nperseg: 16, nfft: 8 }, STFT_DEFAULTS)).toThrow(/nfft = 8/);
    expect(() => spectralGeometry(100, { fs: Number.NaN }, STFT_DEFAULTS)).toThrow(/fs/);
    expect(() => spectralGeometry(100, { fs: -1 }, STFT_DEFAULTS)).toThrow(RangeError);
    expect(() => spectralGeometry(100, { nperseg: 0 }, STFT_DEFAULTS)).toThrow(/nperseg/);
    expect(() => spectralGeometry(100, { boundary: 'reflect' as 'even' }, STFT_DEFAULTS)).toThrow(TypeError);
    expect(() => spectralGeometry(100, { detrend: 'quadratic' as 'linear' }, STFT_DEFAULTS)).toThrow(/detrend/);
    expect(() => spectralGeometry(100, { window: 'nope' }, STFT_DEFAULTS)).toThrow(/nope/);
    expect(() => spectralGeometry(4, { nperseg: 4, boundary: 'even' }, STFT_DEFAULTS)).not.toThrow();
    expect(() => spectralGeometry(2, { nperseg: 2, boundary: 'odd' }, STFT_DEFAULTS)).not.toThrow();
  });
});

describe('NOLA / COLA', () => {
  for (const c of SCIPY.nola) {
    it(`${JSON.stringify(c.w)} nperseg=${c.n} noverlap=${c.ov}: NOLA ${c.nola}, COLA ${c.cola}`, () => {
      const spec: WindowSpec = typeof c.w === 'string' ? c.w : [c.w[0], c.w[1]];
      expect(checkNOLA(spec, c.n, c.ov)).toBe(c.nola);
      expect(checkCOLA(spec, c.n, c.ov)).toBe(c.cola);
    });
  }
});

describe('istft geometry', () => {
  it('mirrors scipy defaults (even and odd nperseg)', () => {
    const g = istftGeometry(129, 10);
    expect([g.nperseg, g.nfft, g.noverlap, g.trim, g.outputLength]).toEqual([256, 256, 128, 128, 256 + 9 * 128 - 256]);
    const odd = istftGeometry(8, 5, { nperseg: 15, noverlap: 7 });
    expect([odd.nfft, odd.hop, odd.outputLength]).toEqual([15, 8, 15 + 4 * 8 - 14]);
    const two = istftGeometry(16, 5, { inputOnesided: false, boundary: false });
    expect([two.nperseg, two.nfft, two.trim, two.outputLength]).toEqual([16, 16, 0, 16 + 4 * 8]);
    expect(g.frameGain).toBeCloseTo(128 / 256, 12);
    const psd = istftGeometry(129, 10, { scaling: 'psd', fs: 2 });
    expect(psd.frameGain).toBeCloseTo(Math.sqrt(2 * g.window.reduce((a, b) => a + b * b, 0)) / 256, 12);
  });

  it('throws NolaError when the window cannot be inverted', () => {
    expect(() => istftGeometry(9, 4, { nperseg: 16, noverlap: 0 })).toThrow(NolaError);
    expect(() => istftGeometry(9, 4, { nperseg: 16, noverlap: 0, window: 'boxcar' })).not.toThrow();
    expect(() => istftGeometry(9, 4, { nperseg: 16, noverlap: 16 })).toThrow(/noverlap/);
    expect(() => istftGeometry(9, 4, { nperseg: 16, nfft: 8 })).toThrow(/nfft/);
  });
});

describe('frequency axes and bands', () => {
  it('rfftfreq / fftfreq', () => {
    expect([...rfftFrequencies(8, 16)]).toEqual([0, 2, 4, 6, 8]);
    expect([...fftFrequencies(5, 5)]).toEqual([0, 1, 2, -2, -1]);
    expect([...fftFrequencies(4, 4)]).toEqual([0, 1, -2, -1]);
  });

  it('bandBins keeps k with k fs / n in [lo, hi], edges included', () => {
    expect(bandBins([0, 0.5], 1, 100)).toEqual([0, 50]);
    expect(bandBins([0.1, 0.2], 1, 100)).toEqual([10, 20]);
    expect(bandBins([0.105, 0.2], 1, 100)).toEqual([11, 20]);
    expect(bandBins([0.3, 0.3], 1, 10)).toEqual([3, 3]);
    expect(bandBins([10, 50], 100, 101)).toEqual([11, 50]);
    const [k0, k1] = bandBins([0.101, 0.109], 1, 100);
    expect(k0).toBeGreaterThan(k1);
    expect(() => bandBins([0.2, 0.1], 1, 100)).toThrow(/lo <= hi/);
    expect(() => bandBins([0, 0.6], 1, 100)).toThrow(/fs\/2/);
    expect(() => bandBins([Number.NaN, 0.1], 1, 100)).toThrow(/finite/);
  });
});
