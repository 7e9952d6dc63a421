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
import { crossSegments, median, medianBiasReference as bias } from './emulation/references.js';

const skip = emu.so ? '' : emu.reason;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-11 };

describe.skipIf(!!skip)(
  `cross-spectral kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 20_000 },
  () => {
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
            const segs = crossSegments(
              x.subarray(b * length, (b + 1) * length),
              y.subarray(b * length, (b + 1) * length),
              g,
            );
            const peak = Math.max(...segs.flat(2).map(Math.abs));
            for (let k = 0; k < g.freqs; k++) {
              const i = b * g.freqs + k;
              for (const part of [0, 1]) {
                const column = segs.map((s) => s[k]![part]!);
                const expectedMean = column.reduce((a, v) => a + v, 0) / g.frames;
                expect(Math.abs(mean[2 * i + part]! - expectedMean) / peak, `mean bin ${k}`).toBeLessThan(TOL[p]);
                expect(
                  Math.abs(byMedian[2 * i + part]! - median(column) / bias(g.frames)) / peak,
                  `median bin ${k}`,
                ).toBeLessThan(TOL[p]);
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
  },
);
