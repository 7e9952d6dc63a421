/**
 * The output window of a convolution for scipy's modes, and the choice between direct summation
 * and the FFT by scipy's cost model (signal._signaltools._conv_ops and _fftconv_faster, with the
 * weights scipy fitted for 1-D floating-point input). Pure: no CUDA.
 */
import { shownValue } from '../runtime/value-checks.js';

/** scipy's convolution modes: the full convolution, its centre as long as the series, or only the fully overlapped part. */
export type ConvolveMode = 'full' | 'same' | 'valid';
/** How convolve computes: by direct summation, through the FFT, or chosen by size ('auto'). */
export type ConvolveMethod = 'auto' | 'direct' | 'fft';

/**
 * Where the mode's output lies in the full convolution of `length` samples with `ntaps` taps
 * (length + ntaps − 1 samples): `start` and `outLength`, as scipy's _centered picks them.
 */
export function convolutionWindow(
  length: number,
  ntaps: number,
  mode: ConvolveMode,
): { start: number; outLength: number; fullLength: number } {
  const fullLength = length + ntaps - 1;
  if (mode === 'full') return { start: 0, outLength: fullLength, fullLength };
  if (mode === 'same') return { start: Math.floor((fullLength - length) / 2), outLength: length, fullLength };
  if (mode === 'valid') {
    const outLength = Math.max(length, ntaps) - Math.min(length, ntaps) + 1;
    return { start: Math.floor((fullLength - outLength) / 2), outLength, fullLength };
  }
  throw new TypeError(`convolve: mode must be 'full', 'same' or 'valid', got ${shownValue(mode)}`);
}

/**
 * The method 'auto' resolves to for series of `length` samples and `ntaps` taps in `mode`, as
 * scipy.signal.choose_conv_method picks it for 1-D floating-point input (each series on its own);
 * other methods checked and returned.
 */
export function convolutionMethod(
  method: ConvolveMethod,
  length: number,
  ntaps: number,
  mode: ConvolveMode = 'full',
): 'direct' | 'fft' {
  if (method === 'direct' || method === 'fft') return method;
  if (method !== 'auto')
    throw new TypeError(`convolve: method must be 'auto', 'direct' or 'fft', got ${shownValue(method)}`);
  return fftConvolutionFaster(length, ntaps, mode) ? 'fft' : 'direct';
}

/** scipy's fitted weights (fft, direct, offset) per mode for 1-D input; 'same' has a second set for taps longer than the series. */
const WEIGHTS = {
  valid: [1.89095737e-9, 2.1364985e-10, -1e-3],
  full: [1.764907e-9, 2.1414831e-10, -1e-3],
  same: [3.2646654e-9, 2.8478277e-10, -1e-3],
  sameLongTaps: [3.21635404e-9, 1.1773253e-8, -1e-5],
} as const;

/**
 * scipy's _conv_ops for 1-D: the multiplications of the direct method in `mode`, and 3 N ln N for
 * the three FFTs of the full length N (the series `x` of `length` samples, `ntaps` taps `h`).
 */
export function convolutionOps(
  length: number,
  ntaps: number,
  mode: ConvolveMode,
): { fftOps: number; directOps: number } {
  const [s1, s2] = [length, ntaps];
  let directOps: number;
  if (mode === 'full') directOps = s1 * s2;
  else if (mode === 'valid') directOps = s2 >= s1 ? (s2 - s1 + 1) * s1 : (s1 - s2 + 1) * s2;
  else directOps = s1 < s2 ? s1 * s2 : s1 * s2 - Math.floor(s2 / 2) * Math.floor((s2 + 1) / 2);
  const n = s1 + s2 - 1;
  return { fftOps: 3 * n * Math.log(n), directOps };
}

/**
 * scipy's _fftconv_faster(x, h, mode) for 1-D x and h: whether the FFT is predicted faster. In
 * 'valid' mode scipy swaps the inputs first when the taps are the longer (convolution commutes),
 * so the model sees the longer one as x.
 */
export function fftConvolutionFaster(length: number, ntaps: number, mode: ConvolveMode): boolean {
  const [x, h] = mode === 'valid' && ntaps > length ? [ntaps, length] : [length, ntaps];
  const { fftOps, directOps } = convolutionOps(x, h, mode);
  const [fft, direct, offset] = mode === 'same' && h > x ? WEIGHTS.sameLongTaps : WEIGHTS[mode];
  return fft * fftOps < direct * directOps + offset;
}
