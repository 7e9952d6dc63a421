/**
 * scipy.signal.oaconvolve on the GPU, batched over series. scipy's overlap-add and its fftconvolve
 * compute the same convolution and differ only in speed on the CPU; on the GPU both run
 * fft-convolution.ts, which cuts the series into blocks (overlap-save, every block of every series
 * in one batched transform) where that moves fewer bytes than one whole-length transform. The block
 * length is the GPU's (convolve-blocks.ts: the longest transform cuFFT runs from shared memory
 * pays), not scipy's _calc_oa_lens, whose optimum for 4,097 taps (about 47k points) takes several
 * passes over device memory per transform; overlapAddBlocks is scipy's choice, kept for reference.
 */
import { resolveStream, type Stream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { complexConvolution, isComplexTaps, type Taps } from './complex-convolution.js';
import { complexCall, type ComplexCallOptions } from './iq.js';
import type { ComplexInput } from './samples.js';
import { convolutionWindow, type ConvolveMode } from './convolve-geometry.js';
import { enqueueFftConvolution } from './fft-convolution.js';
import { filterSeries } from './filter-call.js';
import { checkTaps } from './firwin.js';
import { fastLength } from './morlet.js';
import { resampledOutput } from './upfirdn.js';

/** Options of oaconvolve. */
export interface OaconvolveOptions {
  /** 'full' (default), 'same' or 'valid', as convolve's. */
  mode?: ConvolveMode | undefined;
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (x's dtype, batch × the mode's length); default a new buffer. Must not be x. */
  output?: RealBuffer | undefined;
}

/** The lower real branch W₋₁(z) of the Lambert W function for z in [−1/e, 0): Halley's iteration from its logarithmic asymptote. */
export function lambertWm1(z: number): number {
  if (!(z >= -1 / Math.E && z < 0)) throw new RangeError(`lambertWm1 needs z in [-1/e, 0), got ${z}`);
  const l = Math.log(-z);
  let w = z > -0.25 ? l - Math.log(-l) : -1 - Math.sqrt(2 * (1 + Math.E * z));
  for (let i = 0; i < 50; i++) {
    const e = Math.exp(w);
    const f = w * e - z;
    const next = w - f / (e * (w + 1) - ((w + 2) * f) / (2 * w + 2));
    if (!Number.isFinite(next)) break;
    const done = Math.abs(next - w) <= 1e-15 * Math.abs(next);
    w = next;
    if (done) break;
  }
  return w;
}

/**
 * scipy's overlap-add blocking of series of `length` samples with `ntaps` taps (_calc_oa_lens for
 * 1-D, the series the longer): the FFT length and the series samples per block, or undefined where
 * scipy uses one FFT of the whole series instead. The GPU chooses its own (fftConvolutionPlan).
 */
export function overlapAddBlocks(length: number, ntaps: number): { nfft: number; step: number } | undefined {
  if (length === ntaps || length === 1 || ntaps === 1 || ntaps > length || ntaps >= length / 2) return undefined;
  const overlap = ntaps - 1;
  const optimum = -overlap * lambertWm1(-1 / (2 * Math.E * overlap));
  const nfft = fastLength(Math.ceil(optimum));
  if (nfft >= length) return undefined;
  return { nfft, step: nfft - ntaps + 1 };
}

/**
 * scipy.signal.oaconvolve(x, taps, mode) for each series of x: batch × the mode's length. Complex x
 * (c64, c128, I/Q) or complex taps ({ re, im }) give a complex result (complex-convolution.ts).
 */
export function oaconvolve(x: RealBuffer, taps: ArrayLike<number>, options?: OaconvolveOptions): RealBuffer;
export function oaconvolve(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options?: ComplexCallOptions & { mode?: ConvolveMode | undefined },
): ComplexBuffer;
export function oaconvolve(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options: OaconvolveOptions | (ComplexCallOptions & { mode?: ConvolveMode | undefined }) = {},
): RealBuffer | ComplexBuffer {
  if (isComplexTaps(taps) || complexCall(x, options, 'oaconvolve'))
    return complexConvolution(x, taps, options as ComplexCallOptions, 'oaconvolve', (planes, h, o) => {
      oaconvolve(planes, h, o);
    });
  return oaconvolveReal(x as RealBuffer, taps, options as OaconvolveOptions);
}

function oaconvolveReal(x: RealBuffer, taps: ArrayLike<number>, options: OaconvolveOptions): RealBuffer {
  const h = checkTaps(taps, 'oaconvolve');
  const { p, batch, length } = filterSeries(x, options.batch, 'oaconvolve');
  const window = convolutionWindow(length, h.length, options.mode ?? 'full');
  const stream = resolveStream(x.context, options.stream);
  const y = resampledOutput(x, batch * window.outLength, options.output, stream, 'oaconvolve');
  enqueueFftConvolution({ x, y, h, p, batch, length, window, stream });
  return y;
}
