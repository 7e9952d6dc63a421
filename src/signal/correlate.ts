/**
 * Cross-correlation of many series with one kernel on the GPU: scipy.signal.correlate for real
 * input, which is convolution with the kernel reversed (scipy computes it so for the FFT method,
 * and numpy's direct correlation equals it), in the modes full, same and valid and the methods
 * auto, direct and fft.
 */
import type { RealBuffer } from './buffers.js';
import { convolve, type ConvolveOptions } from './convolve.js';
import { checkTaps } from './firwin.js';

/**
 * scipy.signal.correlate(x, taps, mode, method) for each series of x:
 * z[k] = Σ_n x[n + k − offset] · taps[n], batch × the mode's length ('full': length + taps − 1,
 * 'same': length, 'valid': |length − taps| + 1). 'auto' picks the method as convolve does.
 */
export function correlate(x: RealBuffer, taps: ArrayLike<number>, options: ConvolveOptions = {}): RealBuffer {
  return convolve(x, checkTaps(taps, 'correlate').reverse(), options);
}
