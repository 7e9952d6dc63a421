/**
 * src/kernels/filter.cu compiled for the CPU (the g++ emulation of test/unit/signal/emulation) and
 * driven as src/signal/fir.ts, hilbert.ts and convolve.ts drive it on the GPU, against float64
 * references written here from the definitions: the convolution sum for FIR taps, scipy's filtfilt
 * recipe (filter-references.ts), the analytic signal of planted cosines, and the convolution sum
 * (direct and FFT paths, every mode). Lengths 1 and 2, odd and even, filters longer than the signal.
 * The IIR kernels run whole through iir.ts in sos-emulated.test.ts. Skipped, with the reason, where
 * g++ is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { convolutionWindow, fastLength, firwin, PADTYPE_CODES } from '../../../src/signal/index.js';
import {
  arr,
  cdftRows,
  emu,
  irfftRows,
  launch,
  loadEmulatedKernels,
  rfftRows,
  typed,
  type Arr,
  type P,
} from './emulation/emulator.js';
import { filtfiltReference } from './emulation/filter-references.js';

const TOL: Record<P, number> = { f32: 2e-6, f64: 1e-12 };

/** max |a − b| / max |b|. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return Number.isNaN(num) ? Infinity : num / (den || 1);
}

const random = (n: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() * 2 - 1 + 0.3);

/** y[t] = Σ b[k]·x[t−k], with x before the start equal to `before` (0: lfilter; the first sample: a steady-state start). */
function firReference(b: ArrayLike<number>, x: ArrayLike<number>, before = 0): Float64Array {
  return Float64Array.from({ length: x.length }, (_, t) => {
    let s = 0;
    for (let k = 0; k < b.length; k++) s += b[k]! * (t - k >= 0 ? x[t - k]! : before);
    return s;
  });
}

const skip = emu.so ? '' : emu.reason;

describe.skipIf(!!skip)(
  `filter kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 20_000 },
  () => {
    beforeAll(loadEmulatedKernels);
    const batch = 3;
    for (const p of ['f32', 'f64'] as const) {
      it(`lfilter FIR (${p}): taps longer than the signal, lengths 1, 2, 9, 40, and the state zf`, () => {
        const taps = firwin(13, 0.3);
        for (const n of [1, 2, 9, 40]) {
          const x64 = random(batch * n);
          const zi64 = random(batch * 12);
          const y = arr(p, batch * n);
          const zf = arr(p, batch * 12);
          const x = typed(p, x64);
          const zi = typed(p, zi64);
          launch(`fir_${p}`, x, y, taps, zi, batch, n, 13, 1);
          launch(`fir_state_${p}`, x, taps, zi, zf, batch, n, 13, 1);
          for (let b = 0; b < batch; b++) {
            // Transposed form II with the state zi, written from scipy's definition of lfilter.
            const z = Array.from(zi64.subarray(b * 12, (b + 1) * 12));
            const ref: number[] = [];
            for (let t = 0; t < n; t++) {
              const v = x64[b * n + t]!;
              const out = taps[0]! * v + z[0]!;
              for (let i = 0; i < 11; i++) z[i] = taps[i + 1]! * v + z[i + 1]!;
              z[11] = taps[12]! * v;
              ref.push(out);
            }
            expect(relErr(y.subarray(b * n, (b + 1) * n), ref)).toBeLessThan(TOL[p]);
            expect(relErr(zf.subarray(b * 12, (b + 1) * 12), z)).toBeLessThan(TOL[p]);
          }
          const plain = arr(p, batch * n);
          launch(`fir_${p}`, x, plain, taps, x, batch, n, 13, 0);
          expect(relErr(plain.subarray(0, n), firReference(taps, x64.subarray(0, n)))).toBeLessThan(TOL[p]);
        }
      });

      it(`filtfilt FIR (${p}): default padlen 3 × taps, odd, even and constant padding against the recipe`, () => {
        const taps = firwin(7, [0.2, 0.5], { passZero: false });
        const n = 33;
        const edge = 21;
        const x64 = random(batch * n);
        const work = new Float64Array(batch * (n + 2 * edge)).fill(Number.NaN);
        const y = arr(p, batch * n);
        launch(`fir_forward_${p}`, typed(p, x64), work, taps, batch, n, 7, edge, PADTYPE_CODES.odd);
        launch(`fir_backward_${p}`, work, y, taps, batch, n, 7, edge);
        for (let b = 0; b < batch; b++) {
          const ref = filtfiltReference((v) => firReference(taps, v), x64.subarray(b * n, (b + 1) * n), edge);
          expect(relErr(y.subarray(b * n, (b + 1) * n), ref)).toBeLessThan(TOL[p] * 5);
        }
        // even and constant padding: the extension itself, seen through a one-tap identity filter.
        for (const [code, ext] of [
          [
            PADTYPE_CODES.even,
            (x: Float64Array, i: number) => (i < 3 ? x[3 - i]! : i < 3 + n ? x[i - 3]! : x[n - 2 - (i - 3 - n)]!),
          ],
          [PADTYPE_CODES.constant, (x: Float64Array, i: number) => (i < 3 ? x[0]! : i < 3 + n ? x[i - 3]! : x[n - 1]!)],
        ] as const) {
          const w = new Float64Array(batch * (n + 6)).fill(Number.NaN);
          launch(`fir_forward_${p}`, typed(p, x64), w, Float64Array.of(1), batch, n, 1, 3, code);
          const row = typed(p, x64.subarray(0, n));
          expect(
            relErr(
              w.subarray(0, n + 6),
              Float64Array.from({ length: n + 6 }, (_, i) => ext(Float64Array.from(row), i)),
            ),
          ).toBe(0);
        }
      });

      it(`hilbert (${p}): planted cosines become complex exponentials, odd and even N, padded and truncated`, () => {
        for (const [length, n] of [
          [64, 64],
          [45, 45],
          [40, 48],
          [50, 31],
        ] as const) {
          const k0 = [3, 5, 7];
          const x64 = Float64Array.from({ length: batch * length }, (_, i) =>
            Math.cos((2 * Math.PI * k0[Math.floor(i / length)]! * (i % length)) / n),
          );
          let input: Arr = typed(p, x64);
          if (n !== length) {
            const fitted = arr(p, batch * n);
            launch(`fit_rows_${p}`, input, fitted, batch, length, n);
            input = fitted;
          }
          const half = rfftRows(p, input, batch, n);
          const full = arr(p, 2 * batch * n);
          launch(`analytic_spectrum_${p}`, half, full, batch, n);
          const z = cdftRows(p, full, batch, n, +1);
          if (n === length)
            for (let b = 0; b < batch; b++)
              for (let t = 0; t < n; t++) {
                expect(Math.abs(z[2 * (b * n + t)]! - Math.cos((2 * Math.PI * k0[b]! * t) / n))).toBeLessThan(
                  TOL[p] * 10,
                );
                expect(Math.abs(z[2 * (b * n + t) + 1]! - Math.sin((2 * Math.PI * k0[b]! * t) / n))).toBeLessThan(
                  TOL[p] * 10,
                );
              }
          // Always: the real part is the (fitted) signal itself.
          for (let i = 0; i < batch * n; i++) expect(Math.abs(z[2 * i]! - input[i]!)).toBeLessThan(TOL[p] * 10);
        }
        const short = arr(p, 2 * batch * 2);
        launch(`real_to_complex_${p}`, typed(p, [1.5, -2, 0.25]), short, batch, 1, 2);
        expect(Array.from(short)).toEqual([1.5, 0, 0, 0, -2, 0, 0, 0, 0.25, 0, 0, 0]);
      });
    }
  },
);

/** The FFT path rounds in float32 through its transforms, more than the direct sums. */
const CONVOLVE_TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };

/** The full convolution sum of one series with the taps, in float64. */
function fullConvolution(x: ArrayLike<number>, h: ArrayLike<number>): Float64Array {
  const out = new Float64Array(x.length + h.length - 1);
  for (let i = 0; i < x.length; i++) for (let k = 0; k < h.length; k++) out[i + k]! += x[i]! * h[k]!;
  return out;
}

describe.skipIf(!!skip)(
  `convolution kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 20_000 },
  () => {
    beforeAll(loadEmulatedKernels);
    const batch = 2;

    /** What convolve.ts enqueues for the FFT path, with DFTs for cuFFT. */
    function fftPath(p: P, x: Arr, length: number, taps: Float64Array, start: number, outLength: number): Arr {
      const n = fastLength(length + taps.length - 1);
      const bins = Math.floor(n / 2) + 1;
      const rows = arr(p, batch * n);
      launch(`fit_rows_${p}`, x, rows, batch, length, n);
      const kernelRow = arr(p, n);
      launch(`pad_taps_${p}`, taps, kernelRow, taps.length, n);
      const spectra = rfftRows(p, rows, batch, n);
      launch(`spectrum_product_${p}`, spectra, rfftRows(p, kernelRow, 1, n), batch, bins, 1 / n);
      const back = irfftRows(p, spectra, batch, n);
      const y = arr(p, batch * outLength);
      launch(`slice_rows_${p}`, back, y, batch, n, outLength, start);
      return y;
    }

    for (const p of ['f32', 'f64'] as const)
      it(`convolve direct and through the FFT (${p}): every mode, taps longer than the series, one sample`, () => {
        for (const [length, ntaps] of [
          [40, 7],
          [33, 8],
          [5, 12],
          [1, 4],
          [9, 1],
        ] as const) {
          const x64 = Float64Array.from({ length: batch * length }, () => Math.random() - 0.5);
          const taps = Float64Array.from({ length: ntaps }, () => Math.random() - 0.5);
          const x = typed(p, x64);
          for (const mode of ['full', 'same', 'valid'] as const) {
            const { start, outLength } = convolutionWindow(length, ntaps, mode);
            const direct = arr(p, batch * outLength);
            launch(`convolve_direct_${p}`, x, direct, taps, batch, length, ntaps, outLength, start);
            const viaFft = fftPath(p, x, length, taps, start, outLength);
            for (let b = 0; b < batch; b++) {
              const ref = fullConvolution(x64.subarray(b * length, (b + 1) * length), taps).subarray(
                start,
                start + outLength,
              );
              const scale = Math.max(...ref.map(Math.abs), 1e-3);
              for (let j = 0; j < outLength; j++) {
                expect(
                  Math.abs(direct[b * outLength + j]! - ref[j]!) / scale,
                  `direct ${mode} ${length}x${ntaps}`,
                ).toBeLessThan(CONVOLVE_TOL[p]);
                expect(
                  Math.abs(viaFft[b * outLength + j]! - ref[j]!) / scale,
                  `fft ${mode} ${length}x${ntaps}`,
                ).toBeLessThan(CONVOLVE_TOL[p]);
              }
            }
          }
        }
      });
  },
);
