/**
 * The resampling and overlap-save kernels of src/kernels/filter.cu compiled for the CPU (the g++
 * emulation of test/unit/signal/emulation) and driven as upfirdn.ts, resample.ts and
 * fft-convolution.ts drive them, against scipy's documented upfirdn examples, upfirdn and the
 * convolution by their float64 definitions, and the Fourier resampling of band-limited periodic
 * signals (exact in closed form, the Nyquist bin split and joined included). f32 and f64; lengths
 * 1 and 2, odd and even. Skipped, with the reason, where g++ is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { convolutionWindow, resamplePolyPlan, upfirdnLength } from '../../../src/signal/index.js';
import { fftConvolutionPlan, type BlockFftConvolution } from '../../../src/signal/convolve-blocks.js';
import { fastLength } from '../../../src/signal/morlet.js';
import {
  arr,
  emu,
  irfftRows,
  launch,
  loadEmulatedKernels,
  rfftRows,
  typed,
  type Arr,
  type P,
} from './emulation/emulator.js';
import { upfirdnReference } from './emulation/references.js';

const TOL: Record<P, number> = { f32: 2e-6, f64: 1e-12 };
const FFT_TOL: Record<P, number> = { f32: 1e-5, f64: 1e-11 };
const skip = emu.so ? '' : emu.reason;

function maxError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let e = 0;
  for (let i = 0; i < a.length; i++) e = Math.max(e, Math.abs(a[i]! - b[i]!));
  return Number.isNaN(e) ? Infinity : e;
}

/** What upfirdn.ts enqueues: one launch of the polyphase kernel. */
function upfirdnKernel(
  p: P,
  h: Float64Array,
  x: Arr,
  batch: number,
  length: number,
  up: number,
  down: number,
  start: number,
  outLength: number,
): Arr {
  const y = arr(p, batch * outLength);
  launch(`upfirdn_${p}`, x, y, h, batch, length, h.length, up, down, outLength, start);
  return y;
}

describe.skipIf(!!skip)(
  `resampling kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 20_000 },
  () => {
    beforeAll(loadEmulatedKernels);

    for (const p of ['f32', 'f64'] as const) {
      it(`upfirdn gives scipy's documented examples (${p})`, () => {
        const run = (h: number[], x: number[], up: number, down: number): number[] => {
          const n = upfirdnLength(h.length, x.length, up, down);
          return Array.from(upfirdnKernel(p, Float64Array.from(h), typed(p, x), 1, x.length, up, down, 0, n));
        };
        const x = [1, 2, 3, 2, 1];
        const ramp = Array.from({ length: 10 }, (_, i) => i);
        expect(run([1, 1, 1], x, 1, 1)).toEqual([1, 3, 6, 7, 6, 3, 1]);
        expect(run([1], x, 3, 1)).toEqual([1, 0, 0, 2, 0, 0, 3, 0, 0, 2, 0, 0, 1]);
        expect(run([1, 1, 1], x, 3, 1)).toEqual([1, 1, 1, 2, 2, 2, 3, 3, 3, 2, 2, 2, 1, 1, 1]);
        expect(run([1], ramp, 1, 3)).toEqual([0, 3, 6, 9]);
        expect(run([0.5, 1, 0.5], ramp, 2, 3)).toEqual([0, 1, 2.5, 4, 5.5, 7, 8.5]);
      });

      it(`upfirdn equals its definition over batches, rates, taps longer than the series and lengths 1 and 2 (${p})`, () => {
        const batch = 3;
        for (const [length, ntaps, up, down] of [
          [37, 11, 3, 7],
          [40, 64, 2, 3],
          [1, 5, 4, 1],
          [2, 3, 1, 2],
          [25, 1, 5, 2],
          [16, 9, 1, 1],
        ] as const) {
          const x64 = Float64Array.from({ length: batch * length }, () => Math.random() - 0.5);
          const h = Float64Array.from({ length: ntaps }, () => Math.random() - 0.5);
          const x = typed(p, x64);
          const n = upfirdnLength(ntaps, length, up, down);
          const y = upfirdnKernel(p, h, x, batch, length, up, down, 0, n);
          for (let b = 0; b < batch; b++) {
            const ref = upfirdnReference(h, x.subarray(b * length, (b + 1) * length), up, down);
            expect(maxError(y.subarray(b * n, (b + 1) * n), ref), `${length}x${ntaps} ${up}/${down}`).toBeLessThan(
              TOL[p] * 4,
            );
          }
        }
      });

      it(`resample_poly's window of the upfirdn output: samples [start, start + n) (${p})`, () => {
        const length = 50;
        const x64 = Float64Array.from({ length }, () => Math.random() - 0.5);
        const plan = resamplePolyPlan(length, 3, 7);
        const y = upfirdnKernel(p, plan.taps, typed(p, x64), 1, length, plan.up, plan.down, plan.start, plan.outLength);
        const ref = upfirdnReference(plan.taps, typed(p, x64), plan.up, plan.down).subarray(
          plan.start,
          plan.start + plan.outLength,
        );
        expect(maxError(y, ref)).toBeLessThan(TOL[p] * 4);
      });

      it(`resample's spectrum: band-limited periodic series land exactly on the new grid (${p})`, () => {
        const batch = 2;
        for (const [nx, num] of [
          [12, 7],
          [12, 20],
          [13, 8],
          [9, 16],
          [12, 12],
        ] as const) {
          const n = Math.min(nx, num);
          // Components strictly below min(nx, num)/2: the Fourier method reproduces them exactly.
          const comps = Array.from({ length: Math.ceil(n / 2) }, (_, k) => ({
            k,
            a: Math.random() + 0.1,
            phi: Math.random() * 6,
          })).filter((c) => 2 * c.k < n);
          const signal = (b: number, t: number, period: number): number =>
            comps.reduce(
              (s, c) => s + (b + 1) * c.a * Math.cos((2 * Math.PI * c.k * t) / period + (c.k === 0 ? 0 : c.phi)),
              0,
            );
          const x = typed(
            p,
            Float64Array.from({ length: batch * nx }, (_, i) => signal(Math.floor(i / nx), i % nx, nx)),
          );
          const y = resampleKernels(p, x, batch, nx, num);
          const ref = Float64Array.from({ length: batch * num }, (_, i) => signal(Math.floor(i / num), i % num, num));
          expect(maxError(y, ref), `${nx} -> ${num}`).toBeLessThan(FFT_TOL[p] * 10);
        }
      });

      it(`resample's Nyquist bin: joined when downsampling 8 -> 4, split when upsampling 4 -> 8 (${p})`, () => {
        // cos(πt/2) at 8 points sampled every second point: [1, -1, 1, -1].
        const down = resampleKernels(p, typed(p, [1, 0, -1, 0, 1, 0, -1, 0]), 1, 8, 4);
        expect(maxError(down, [1, -1, 1, -1])).toBeLessThan(FFT_TOL[p]);
        // [1, -1, 1, -1] (Nyquist only) upsampled: the bin split between ±2 of 8 points, cos(πi/2).
        const up = resampleKernels(p, typed(p, [1, -1, 1, -1]), 1, 4, 8);
        expect(maxError(up, [1, 0, -1, 0, 1, 0, -1, 0])).toBeLessThan(FFT_TOL[p]);
      });

      it(`overlap-save blocks equal the convolution sum in every mode (${p})`, () => {
        const batch = 2;
        for (const [length, ntaps] of [
          [300, 9],
          [257, 20],
          [200, 1],
        ] as const) {
          const x64 = Float64Array.from({ length: batch * length }, () => Math.random() - 0.5);
          const h = Float64Array.from({ length: ntaps }, () => Math.random() - 0.5);
          const x = typed(p, x64);
          for (const mode of ['full', 'same', 'valid'] as const) {
            const w = convolutionWindow(length, ntaps, mode);
            // A single-pass length of 64 points: blocks of at most 64, several per series, the last one partial.
            const plan = fftConvolutionPlan(length, ntaps, w, p, batch, fastLength(w.fullLength), 64);
            expect(plan.kind, `${mode} ${length}x${ntaps}`).toBe('blocks');
            if (plan.kind !== 'blocks') continue;
            expect(plan.blocks).toBeGreaterThan(2);
            const y = overlapSaveKernels(p, x, h, batch, length, plan, w.outLength);
            for (let b = 0; b < batch; b++) {
              const ref = upfirdnReference(h, x.subarray(b * length, (b + 1) * length), 1, 1).subarray(
                w.start,
                w.start + w.outLength,
              );
              expect(
                maxError(y.subarray(b * w.outLength, (b + 1) * w.outLength), ref),
                `${mode} ${length}x${ntaps}`,
              ).toBeLessThan(FFT_TOL[p] * 10);
            }
          }
        }
      });
    }
  },
);

/** What resample.ts enqueues, with float64 DFTs for cuFFT. */
function resampleKernels(p: P, x: Arr, batch: number, nx: number, num: number): Arr {
  const inBins = Math.floor(nx / 2) + 1;
  const outBins = Math.floor(num / 2) + 1;
  const spectrum = rfftRows(p, x, batch, nx);
  const resized = arr(p, 2 * batch * outBins);
  launch(
    `resample_spectrum_${p}`,
    spectrum,
    resized,
    batch,
    inBins,
    outBins,
    Math.min(nx, num),
    num,
    num < nx ? 2 : num > nx ? 0.5 : 1,
    1 / nx,
  );
  return irfftRows(p, resized, batch, num);
}

/** What fft-convolution.ts enqueues for overlap-save blocks, with float64 DFTs for cuFFT. */
function overlapSaveKernels(
  p: P,
  x: Arr,
  h: Float64Array,
  batch: number,
  length: number,
  plan: BlockFftConvolution,
  outLength: number,
): Arr {
  const { nfft, step, blocks, first, skip } = plan;
  const bins = Math.floor(nfft / 2) + 1;
  const rows = arr(p, batch * blocks * nfft);
  launch(`os_gather_${p}`, x, rows, batch, length, blocks, step, nfft, first);
  const kernelRow = arr(p, nfft);
  launch(`pad_taps_${p}`, h, kernelRow, h.length, nfft);
  const spectra = rfftRows(p, rows, batch * blocks, nfft);
  launch(`os_product_${p}`, spectra, rfftRows(p, kernelRow, 1, nfft), batch * blocks, bins, 1 / nfft);
  const filtered = irfftRows(p, spectra, batch * blocks, nfft);
  const y = arr(p, batch * outLength);
  launch(`os_scatter_${p}`, filtered, y, batch, blocks, step, nfft, skip, outLength);
  return y;
}
