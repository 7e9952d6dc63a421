/**
 * Cross-correlation of many series with one kernel on the GPU: scipy.signal.correlate, which is
 * convolution with the kernel reversed and conjugated (scipy computes it so for the FFT method,
 * and numpy's direct correlation equals it), in the modes full, same and valid and the methods
 * auto, direct and fft. x and the taps may be complex (complex-convolution.ts).
 */
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { correlationTaps, type Taps } from './complex-convolution.js';
import { convolve, type ComplexConvolveOptions, type ConvolveOptions } from './convolve.js';
import type { ComplexInput } from './samples.js';

/**
 * scipy.signal.correlate(x, taps, mode, method) for each series of x:
 * z[k] = Σ_n x[n + k − offset] · conj(taps[n]), batch × the mode's length ('full': length + taps − 1,
 * 'same': length, 'valid': |length − taps| + 1). 'auto' picks the method as convolve does. Complex
 * x (c64, c128, I/Q) or complex taps ({ re, im }) give a complex result.
 */
export function correlate(x: RealBuffer, taps: ArrayLike<number>, options?: ConvolveOptions): RealBuffer;
export function correlate(x: RealBuffer | ComplexInput, taps: Taps, options?: ComplexConvolveOptions): ComplexBuffer;
export function correlate(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options: ConvolveOptions | ComplexConvolveOptions = {},
): RealBuffer | ComplexBuffer {
  const h = correlationTaps(taps, 'correlate');
  return convolve(x as RealBuffer, h as ArrayLike<number>, options as ConvolveOptions);
}
