/**
 * The output window of a convolution for scipy's modes, and the choice between direct summation
 * and the FFT. Pure: no CUDA.
 */
import { shownValue } from '../runtime/value-checks.js';

/** scipy's convolution modes: the full convolution, its centre as long as the series, or only the fully overlapped part. */
export type ConvolveMode = 'full' | 'same' | 'valid';
/** How convolve computes: by direct summation, through the FFT, or chosen by size ('auto'). */
export type ConvolveMethod = 'auto' | 'direct' | 'fft';

/** Above this many samples in both the series and the taps, 'auto' takes the FFT (the direct work per output grows with the shorter of the two). */
export const DIRECT_CONVOLVE_LIMIT = 64;

/**
 * Where the mode's output lies in the full convolution of `length` samples with `ntaps` taps
 * (length + ntaps − 1 samples): `start` and `outLength`, as scipy's _centered picks them.
 */
export function convolutionWindow(length: number, ntaps: number, mode: ConvolveMode): { start: number; outLength: number; fullLength: number } {
  const fullLength = length + ntaps - 1;
  if (mode === 'full') return { start: 0, outLength: fullLength, fullLength };
  if (mode === 'same') return { start: Math.floor((fullLength - length) / 2), outLength: length, fullLength };
  if (mode === 'valid') {
    const outLength = Math.max(length, ntaps) - Math.min(length, ntaps) + 1;
    return { start: Math.floor((fullLength - outLength) / 2), outLength, fullLength };
  }
  throw new TypeError(`convolve: mode must be 'full', 'same' or 'valid', got ${shownValue(mode)}`);
}

/** The method 'auto' resolves to for a series of `length` samples and `ntaps` taps; other methods checked and returned. */
export function convolutionMethod(method: ConvolveMethod, length: number, ntaps: number): 'direct' | 'fft' {
  if (method === 'direct' || method === 'fft') return method;
  if (method !== 'auto') throw new TypeError(`convolve: method must be 'auto', 'direct' or 'fft', got ${shownValue(method)}`);
  return Math.min(length, ntaps) > DIRECT_CONVOLVE_LIMIT ? 'fft' : 'direct';
}
