/**
 * Convolution: the mode windows and method choice (pure), and the convolution kernels of
 * src/kernels/filter.cu emulated on the CPU, driven as src/signal/convolve.ts drives them (direct
 * summation; pad, real FFT, spectrum product, inverse, slice for the FFT path, with float64 DFTs in
 * place of cuFFT), against numpy's documented example and the convolution sum in float64: every
 * mode, odd and even lengths, taps longer than the series, a series of one sample.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { convolutionMethod, convolutionWindow, DIRECT_CONVOLVE_LIMIT, fastLength } from '../../../src/signal/index.js';
import { arr, emu, irfftRows, launch, loadEmulatedKernels, rfftRows, typed, type Arr, type P } from './emulation/emulator.js';

/** The full convolution sum of one series with the taps, in float64. */
function fullConvolution(x: ArrayLike<number>, h: ArrayLike<number>): Float64Array {
  const out = new Float64Array(x.length + h.length - 1);
  for (let i = 0; i < x.length; i++) for (let k = 0; k < h.length; k++) out[i + k]! += x[i]! * h[k]!;
  return out;
}

describe('convolution windows and method', { timeout: 5_000 }, () => {
  it('places full, same and valid as numpy’s documented example: convolve([1, 2, 3], [0, 1, 0.5])', () => {
    const full = [0, 1, 2.5, 4, 1.5];
    const cut = (mode: 'full' | 'same' | 'valid') => {
      const w = convolutionWindow(3, 3, mode);
      return full.slice(w.start, w.start + w.outLength);
    };
    expect(cut('full')).toEqual([0, 1, 2.5, 4, 1.5]);
    expect(cut('same')).toEqual([1, 2.5, 4]);
    expect(cut('valid')).toEqual([2.5]);
  });

  it('valid keeps |N − M| + 1 samples whichever is longer; same keeps the series length', () => {
    expect(convolutionWindow(10, 4, 'valid')).toEqual({ start: 3, outLength: 7, fullLength: 13 });
    expect(convolutionWindow(4, 10, 'valid')).toEqual({ start: 3, outLength: 7, fullLength: 13 });
    expect(convolutionWindow(4, 10, 'same')).toEqual({ start: 4, outLength: 4, fullLength: 13 });
    expect(() => convolutionWindow(4, 10, 'circular' as never)).toThrow(/mode must be/);
  });

  it("'auto' takes the FFT only when both sides are longer than the direct limit", () => {
    expect(convolutionMethod('auto', 1_000_000, 31)).toBe('direct');
    expect(convolutionMethod('auto', 1_000_000, 4097)).toBe('fft');
    expect(convolutionMethod('auto', DIRECT_CONVOLVE_LIMIT, 4097)).toBe('direct');
    expect(convolutionMethod('direct', 1_000_000, 4097)).toBe('direct');
    expect(() => convolutionMethod('overlap-add' as never, 10, 10)).toThrow(/method must be/);
  });
});

const skip = emu.so ? '' : emu.reason;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };

describe.skipIf(!!skip)(`convolution kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`, { timeout: 20_000 }, () => {
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
            const ref = fullConvolution(x64.subarray(b * length, (b + 1) * length), taps).subarray(start, start + outLength);
            const scale = Math.max(...ref.map(Math.abs), 1e-3);
            for (let j = 0; j < outLength; j++) {
              expect(Math.abs(direct[b * outLength + j]! - ref[j]!) / scale, `direct ${mode} ${length}x${ntaps}`).toBeLessThan(TOL[p]);
              expect(Math.abs(viaFft[b * outLength + j]! - ref[j]!) / scale, `fft ${mode} ${length}x${ntaps}`).toBeLessThan(TOL[p]);
            }
          }
        }
      }
    });
});
