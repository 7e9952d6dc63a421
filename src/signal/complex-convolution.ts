/**
 * Convolution and correlation with complex operands: a complex signal (c64, c128, I/Q) and/or
 * complex taps ({ re, im } host arrays). With x = xr + j·xi and h = hr + j·hi,
 *   x * h = (xr*hr − xi*hi) + j·(xi*hr + xr*hi),
 * so the real convolution runs over the planes of x (xr and xi as series of their own) once with
 * hr and, for complex taps, once with hi, and one kernel joins the products (iq.ts). scipy's
 * correlate conjugates its second operand: correlate(x, h) = convolve(x, conj(reverse(h))).
 */
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { convolutionWindow, type ConvolveMode } from './convolve-geometry.js';
import { FilterCoefficientError } from './filter-errors.js';
import { filterSeries } from './filter-call.js';
import { checkTaps } from './firwin.js';
import { complexCall, planesCall, realThroughComplex, runPlanes, type ComplexCallOptions } from './iq.js';
import type { ComplexInput } from './samples.js';
import { COMPLEX_OF } from './workspace.js';
import { expectBuffer } from './launch.js';
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { resolveStream, type Stream } from '../runtime/stream.js';

/** Complex taps as two host arrays of the same length: the real and the imaginary parts (float64). */
export interface ComplexTaps {
  readonly re: ArrayLike<number>;
  readonly im: ArrayLike<number>;
}

/** Taps of a convolution or correlation: real numbers, or complex ones. */
export type Taps = ArrayLike<number> | ComplexTaps;

/** Whether `taps` are complex ({ re, im }, not an array). */
export function isComplexTaps(taps: unknown): taps is ComplexTaps {
  return typeof taps === 'object' && taps !== null && !('length' in taps) && 're' in taps && 'im' in taps;
}

/** Complex taps checked (each part as real taps are, the same length): float64 copies. FilterCoefficientError naming `what` otherwise. */
export function checkComplexTaps(taps: ComplexTaps, what: string): { re: Float64Array; im: Float64Array } {
  const re = checkTaps(taps.re, `${what} (real part)`);
  const im = checkTaps(taps.im, `${what} (imaginary part)`);
  if (re.length !== im.length)
    throw new FilterCoefficientError(
      `${what}: the taps' real part has ${re.length} values and the imaginary part ${im.length}; give both the same length`,
    );
  return { re, im };
}

/** scipy's correlate operand: the taps reversed and conjugated (real taps: reversed). */
export function correlationTaps(taps: Taps, what: string): Float64Array | { re: Float64Array; im: Float64Array } {
  if (!isComplexTaps(taps)) return checkTaps(taps, what).reverse();
  const { re, im } = checkComplexTaps(taps, what);
  return { re: re.reverse(), im: im.reverse().map((v) => -v) };
}

/** Options a complex convolution passes on to the real one for each product. */
export interface RealConvolveOptions {
  mode?: ConvolveMode | undefined;
  batch: number;
  stream: Stream;
  output: RealBuffer;
}

/** The real convolution a complex one runs (convolve, fftconvolve, oaconvolve with their method). */
export type RealConvolve = (x: RealBuffer, taps: Float64Array, options: RealConvolveOptions) => void;

/**
 * A convolution where x or the taps (or both) are complex: every check first (taps, series,
 * mode, the output: c64/c128, batch × the mode's length), then the real convolution per product
 * and the join. Returns the complex result.
 */
export function complexConvolution(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options: ComplexCallOptions & { mode?: ConvolveMode | undefined },
  what: string,
  real: RealConvolve,
): ComplexBuffer {
  const h = isComplexTaps(taps) ? checkComplexTaps(taps, what) : checkTaps(taps, what);
  const parts: { re: Float64Array; im?: Float64Array } = h instanceof Float64Array ? { re: h } : h;
  const ntaps = parts.re.length;
  const mode = options.mode ?? 'full';
  if (complexCall(x, options, what)) {
    const call = planesCall(x as ComplexInput, options, what, (n) => convolutionWindow(n, ntaps, mode).outLength);
    const im = parts.im;
    return runPlanes(call, im ? 2 : 1, (planes, batch, out, part) =>
      real(planes, part === 0 ? parts.re : im!, { mode, batch, stream: call.stream, output: out }),
    );
  }
  // A real signal, complex taps.
  const im = parts.im;
  if (!im) throw new TypeError(`${what}: neither x nor the taps are complex`);
  const { p, batch, length } = filterSeries(x as RealBuffer, options.batch, what);
  const outLength = convolutionWindow(length, ntaps, mode).outLength;
  const dtype = COMPLEX_OF[p];
  const stream = resolveStream(x.context, options.stream);
  let output: ComplexBuffer;
  if (options.output === undefined)
    output = DeviceBuffer.alloc(dtype, batch * outLength, { stream, label: `${what} output` }) as ComplexBuffer;
  else {
    expectBuffer(options.output, dtype, batch * outLength, `${what} output`);
    output = options.output;
  }
  return realThroughComplex(x as RealBuffer, batch, outLength, output, stream, (out, part) =>
    real(x as RealBuffer, part === 0 ? parts.re : im, { mode, batch, stream, output: out }),
  );
}
