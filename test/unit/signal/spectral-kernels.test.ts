/**
 * The cross-spectral kernels of src/kernels/filter.cu (csd by mean and by median, coherence)
 * compiled for the CPU (the g++ emulation of test/unit/signal/emulation) and driven as
 * cross-spectra.ts drives them, against scipy's csd written here in float64 from its definition:
 * segments of nperseg every step samples, the mean removed, the window applied, an nfft-point DFT,
 * conj(X)·Y scaled by 1/(fs Σw²) and doubled off DC and Nyquist one-sided, then the mean over
 * segments, or the medians of the real and imaginary parts over the median bias. Coherence of a
 * series with itself is 1. f32 and f64, odd and even nfft, one- and two-sided.
 * Skipped, with the reason, where g++ is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { spectralGeometry, WELCH_DEFAULTS, type SpectralGeometry } from '../../../src/signal/geometry.js';
import { arr, emu, framesSpectra, launch, loadEmulatedKernels, typed, type P } from './emulation/emulator.js';

const skip = emu.so ? '' : emu.reason;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-11 };

/** One segment's nfft-point spectrum, by its definition (mean removed, windowed, zero-padded DFT). */
function segmentSpectrum(x: ArrayLike<number>, start: number, g: SpectralGeometry): { re: Float64Array; im: Float64Array } {
  const seg = Float64Array.from({ length: g.nperseg }, (_, t) => x[start + t]!);
  const mean = seg.reduce((a, b) => a + b, 0) / g.nperseg;
  const w = seg.map((v, t) => (v - mean) * g.window[t]!);
  const re = new Float64Array(g.nfft);
  const im = new Float64Array(g.nfft);
  for (let k = 0; k < g.nfft; k++)
    for (let t = 0; t < g.nperseg; t++) {
      const a = (-2 * Math.PI * k * t) / g.nfft;
      re[k]! += w[t]! * Math.cos(a);
      im[k]! += w[t]! * Math.sin(a);
    }
  return { re, im };
}

/** scipy's csd of one pair: per segment and bin, conj(X)·Y scaled (and doubled one-sided). [frames][freqs] of [re, im]. */
function crossSegments(x: ArrayLike<number>, y: ArrayLike<number>, g: SpectralGeometry): [number, number][][] {
  const scale = 1 / (g.fs * g.window.reduce((a, v) => a + v * v, 0));
  return Array.from({ length: g.frames }, (_, f) => {
    const X = segmentSpectrum(x, f * g.step, g);
    const Y = segmentSpectrum(y, f * g.step, g);
    return Array.from({ length: g.freqs }, (_, k): [number, number] => {
      const doubled = g.onesided && k > 0 && !(g.nfft % 2 === 0 && 2 * k === g.nfft) ? 2 : 1;
      const s = scale * doubled;
      return [s * (X.re[k]! * Y.re[k]! + X.im[k]! * Y.im[k]!), s * (X.re[k]! * Y.im[k]! - X.im[k]! * Y.re[k]!)];
    });
  });
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/** scipy's _median_bias(n), written from its series: 1 + Σ_{i=1}^{(n−1)/2} 1/(2i+1) − 1/(2i). */
function bias(n: number): number {
  let b = 1;
  for (let i = 1; i <= (n - 1) >> 1; i++) b += 1 / (2 * i + 1) - 1 / (2 * i);
  return b;
}

describe.skipIf(!!skip)(`cross-spectral kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`, { timeout: 20_000 }, () => {
  beforeAll(loadEmulatedKernels);
  const batch = 2;
  const length = 96;

  for (const p of ['f32', 'f64'] as const)
    for (const [nperseg, nfft, onesided] of [
      [32, 32, true],
      [24, 33, true],
      [20, 20, false],
    ] as const)
      it(`csd by mean and by median, coherence (${p}, nperseg ${nperseg}, nfft ${nfft}, ${onesided ? 'one' : 'two'}-sided)`, () => {
        const g = spectralGeometry(length, { nperseg, nfft, returnOnesided: onesided, fs: 3 }, WELCH_DEFAULTS);
        const x64 = Float64Array.from({ length: batch * length }, () => Math.random() - 0.4);
        const y64 = Float64Array.from({ length: batch * length }, (_, i) => 0.6 * x64[i]! + Math.random() - 0.5);
        const [x, y] = [typed(p, x64), typed(p, y64)];
        const X = framesSpectra(p, x, batch, g);
        const Y = framesSpectra(p, y, batch, g);
        const scale = 1 / (g.fs * g.windowSquareSum);
        const total = batch * g.freqs;
        const shape = [batch, g.frames, g.halfBins, g.freqs, g.nfft, g.onesided ? 1 : 0, scale] as const;
        const mean = arr(p, 2 * total);
        launch(`csd_mean_${p}`, X, Y, mean, ...shape);
        const parts = arr(p, 2 * total * g.frames);
        const medians = arr(p, 2 * total);
        const byMedian = arr(p, 2 * total);
        launch(`csd_parts_${p}`, X, Y, parts, ...shape);
        launch(`median_rows_${p}`, parts, medians, 2 * total, g.frames, 1 / bias(g.frames));
        launch(`join_parts_${p}`, medians, byMedian, total);
        for (let b = 0; b < batch; b++) {
          const segs = crossSegments(x.subarray(b * length, (b + 1) * length), y.subarray(b * length, (b + 1) * length), g);
          const peak = Math.max(...segs.flat(2).map(Math.abs));
          for (let k = 0; k < g.freqs; k++) {
            const i = b * g.freqs + k;
            for (const part of [0, 1]) {
              const column = segs.map((s) => s[k]![part]!);
              const expectedMean = column.reduce((a, v) => a + v, 0) / g.frames;
              expect(Math.abs(mean[2 * i + part]! - expectedMean) / peak, `mean bin ${k}`).toBeLessThan(TOL[p]);
              expect(Math.abs(byMedian[2 * i + part]! - median(column) / bias(g.frames)) / peak, `median bin ${k}`).toBeLessThan(TOL[p]);
            }
          }
        }
        // Coherence from the kernels' own spectra: |Pxy|² / (Pxx Pyy), and 1 for a series with itself.
        const pxx = arr(p, total);
        const pyy = arr(p, total);
        const cxy = arr(p, total);
        launch(`welch_mean_${p}`, X, pxx, ...shape);
        launch(`welch_mean_${p}`, Y, pyy, ...shape);
        launch(`coherence_${p}`, mean, pxx, pyy, cxy, total);
        for (let i = 0; i < total; i++) {
          const expected = (mean[2 * i]! ** 2 + mean[2 * i + 1]! ** 2) / (pxx[i]! * pyy[i]!);
          expect(Math.abs(cxy[i]! - expected)).toBeLessThan(TOL[p] * 10);
          expect(cxy[i]!).toBeLessThanOrEqual(1 + TOL[p] * 10);
        }
        const self = arr(p, 2 * total);
        launch(`csd_mean_${p}`, X, X, self, ...shape);
        const ones = arr(p, total);
        launch(`coherence_${p}`, self, pxx, pxx, ones, total);
        for (let i = 0; i < total; i++) if (pxx[i]! > 1e-9) expect(Math.abs(ones[i]! - 1)).toBeLessThan(TOL[p] * 10);
      });
});
