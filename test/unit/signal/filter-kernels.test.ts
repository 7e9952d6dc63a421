/**
 * src/kernels/filter.cu compiled for the CPU (the g++ emulation of test/unit/signal/emulation) and
 * driven as src/signal/iir.ts, fir.ts and hilbert.ts drive it on the GPU, against float64
 * references written here from the definitions: direct form I recurrences for the sections, the
 * convolution sum for FIR taps, scipy's filtfilt recipe (odd extension, steady-state start found
 * by running a constant input to convergence), the analytic signal of planted cosines, and the
 * convolution sum (direct and FFT paths, every mode).
 * Lengths 1 and 2, odd and even, filters longer than the signal, and chunked filtering with zi.
 * Skipped, with the reason, where g++ is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  butter,
  cheby1,
  convolutionWindow,
  fastLength,
  firwin,
  sosfiltfiltPadlen,
  sosfiltZi,
  PADTYPE_CODES,
  type Sos,
} from '../../../src/signal/index.js';
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

/** Direct form I through the cascade (a different recurrence from the kernel's transposed form II). */
function sosReference(sos: Sos, x: ArrayLike<number>): Float64Array {
  let v = Float64Array.from(x);
  for (const [b0, b1, b2, , a1, a2] of sos) {
    const y = new Float64Array(v.length);
    for (let t = 0; t < v.length; t++)
      y[t] =
        b0! * v[t]! + b1! * (v[t - 1] ?? 0) + b2! * (v[t - 2] ?? 0) - a1! * (y[t - 1] ?? 0) - a2! * (y[t - 2] ?? 0);
    v = y;
  }
  return v;
}

/** y[t] = Σ b[k]·x[t−k], with x before the start equal to `before` (0: lfilter; the first sample: a steady-state start). */
function firReference(b: ArrayLike<number>, x: ArrayLike<number>, before = 0): Float64Array {
  return Float64Array.from({ length: x.length }, (_, t) => {
    let s = 0;
    for (let k = 0; k < b.length; k++) s += b[k]! * (t - k >= 0 ? x[t - k]! : before);
    return s;
  });
}

/** scipy's odd extension by `edge` samples at each end. */
function oddExtend(x: ArrayLike<number>, edge: number): Float64Array {
  const n = x.length;
  return Float64Array.from({ length: n + 2 * edge }, (_, i) =>
    i < edge ? 2 * x[0]! - x[edge - i]! : i < edge + n ? x[i - edge]! : 2 * x[n - 1]! - x[n - 2 - (i - edge - n)]!,
  );
}

/** A steady-state start for a linear filter: the output at which a constant input settles (run to convergence). */
function settledStart(
  filter: (x: Float64Array) => Float64Array,
  value: number,
  tail: number,
): (x: Float64Array) => Float64Array {
  return (x) => filter(Float64Array.from([...new Float64Array(tail).fill(value), ...x])).subarray(tail);
}

/** filtfilt by its recipe: extend, filter forward from steady state, reverse, again, reverse, trim. */
function filtfiltReference(
  filter: (x: Float64Array) => Float64Array,
  x: ArrayLike<number>,
  edge: number,
): Float64Array {
  const ext = oddExtend(x, edge);
  const forward = settledStart(filter, ext[0]!, 4000)(ext);
  const backward = settledStart(filter, forward[forward.length - 1]!, 4000)(forward.slice().reverse());
  return backward.reverse().subarray(edge, edge + x.length);
}

const skip = emu.so ? '' : emu.reason;

describe.skipIf(!!skip)(
  `filter kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 20_000 },
  () => {
    beforeAll(loadEmulatedKernels);
    const batch = 3;
    const sos = cheby1(4, 0.5, [0.15, 0.4], { btype: 'bandpass' });
    const flat = Float64Array.from(sos.flat());
    const sections = sos.length;

    for (const p of ['f32', 'f64'] as const) {
      it(`sosfilt (${p}): lengths 1, 2, 7, 64 against direct form I`, () => {
        for (const n of [1, 2, 7, 64]) {
          const x64 = random(batch * n);
          const y = arr(p, batch * n);
          launch(`sosfilt_${p}`, typed(p, x64), y, flat, y, y, batch, n, sections, 0, 0);
          for (let b = 0; b < batch; b++)
            expect(
              relErr(y.subarray(b * n, (b + 1) * n), sosReference(sos, x64.subarray(b * n, (b + 1) * n))),
            ).toBeLessThan(TOL[p]);
        }
      });

      it(`sosfilt (${p}): 7 chunks carried through zi/zf equal one call`, () => {
        const n = 61;
        const x = typed(p, random(batch * n));
        const whole = arr(p, batch * n);
        launch(`sosfilt_${p}`, x, whole, flat, whole, whole, batch, n, sections, 0, 0);
        let zi = typed(p, new Float64Array(sections * batch * 2));
        const parts: Arr[] = [];
        const cuts = [0, 1, 3, 10, 11, 30, 45, 61];
        for (let c = 0; c + 1 < cuts.length; c++) {
          const len = cuts[c + 1]! - cuts[c]!;
          const chunk = arr(p, batch * len);
          for (let b = 0; b < batch; b++) chunk.set(x.subarray(b * n + cuts[c]!, b * n + cuts[c + 1]!), b * len);
          const out = arr(p, batch * len);
          const zf = arr(p, zi.length);
          launch(`sosfilt_${p}`, chunk, out, flat, zi, zf, batch, len, sections, 1, 1);
          parts.push(out);
          zi = zf;
        }
        for (let b = 0; b < batch; b++) {
          const joined = parts.flatMap((out, c) =>
            Array.from(out.subarray(b * (cuts[c + 1]! - cuts[c]!), (b + 1) * (cuts[c + 1]! - cuts[c]!))),
          );
          expect(relErr(joined, whole.subarray(b * n, (b + 1) * n))).toBeLessThan(TOL[p] * 5);
        }
      });

      it(`sosfiltfilt (${p}): odd padding, steady-state starts, against the recipe`, () => {
        const n = 50;
        const x64 = random(batch * n);
        const edge = sosfiltfiltPadlen(sos);
        const work = new Float64Array(batch * (n + 2 * edge)).fill(Number.NaN);
        const y = arr(p, batch * n);
        const zi = Float64Array.from(sosfiltZi(sos).flat());
        launch(`sosfiltfilt_${p}`, typed(p, x64), y, work, flat, zi, batch, n, sections, edge, PADTYPE_CODES.odd);
        for (let b = 0; b < batch; b++) {
          const ref = filtfiltReference((v) => sosReference(sos, v), x64.subarray(b * n, (b + 1) * n), edge);
          expect(relErr(y.subarray(b * n, (b + 1) * n), ref)).toBeLessThan(p === 'f32' ? 1e-5 : 1e-9);
        }
      });

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

    it('butter designs filter as their own recurrence predicts (sanity across families)', () => {
      const s = butter(5, 0.25);
      const x = random(40);
      const y = arr('f64', 40);
      launch('sosfilt_f64', x, y, Float64Array.from(s.flat()), y, y, 1, 40, s.length, 0, 0);
      expect(relErr(y, sosReference(s, x))).toBeLessThan(1e-12);
    });
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

    /** What fft-convolution.ts enqueues for the whole-length FFT path, with DFTs for cuFFT. */
    function fftPath(p: P, x: Arr, length: number, taps: Float64Array, start: number, outLength: number): Arr {
      const n = fastLength(length + taps.length - 1);
      const bins = Math.floor(n / 2) + 1;
      const rows = arr(p, batch * n);
      launch(`fit_rows_${p}`, x, rows, batch, length, n);
      const kernelRow = arr(p, n);
      launch(`pad_taps_${p}`, taps, kernelRow, taps.length, n);
      const spectra = rfftRows(p, rows, batch, n);
      launch(`os_product_${p}`, spectra, rfftRows(p, kernelRow, 1, n), batch, bins, 1 / n);
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
