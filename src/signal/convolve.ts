/**
 * Convolution of many series with one kernel on the GPU: scipy.signal.convolve (direct summation
 * or through the FFT, chosen by scipy's cost model) and fftconvolve, with the modes full, same and valid.
 * f32 and f64 series (complex ones through complex-convolution.ts); the taps are host numbers (float64). The direct path sums in float64; the
 * FFT path (fft-convolution.ts: whole-length or overlap-save blocks) runs cuFFT in the series' precision. Enqueue only; every check runs before GPU work.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { complexConvolution, isComplexTaps, type Taps } from './complex-convolution.js';
import { complexCall, type ComplexCallOptions } from './iq.js';
import type { ComplexInput } from './samples.js';
import { convolutionMethod, convolutionWindow, type ConvolveMethod, type ConvolveMode } from './convolve-geometry.js';
import { filterSeries } from './filter-call.js';
import { coefficientTable } from './filter-tables.js';
import { checkTaps } from './firwin.js';
import { enqueueFftConvolution } from './fft-convolution.js';
import { signalWorkspace as ws } from './workspace.js';
import { elementwise, expectBuffer } from './launch.js';

/** Options of convolve and fftconvolve. */
export interface ConvolveOptions {
  /** 'full' (default: length + taps − 1 samples per series), 'same' (length) or 'valid' (|length − taps| + 1). */
  mode?: ConvolveMode | undefined;
  /** convolve only: 'auto' (default: as scipy's choose_conv_method predicts faster for one series, see convolutionMethod), 'direct' or 'fft'. */
  method?: ConvolveMethod | undefined;
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (x's dtype, batch × the mode's length); default a new buffer. Must not be x. */
  output?: RealBuffer | undefined;
}

/** Options of convolve and fftconvolve where x or the taps are complex: the mode and method, I/Q reading, a complex output. */
export interface ComplexConvolveOptions extends ComplexCallOptions {
  mode?: ConvolveMode | undefined;
  method?: ConvolveMethod | undefined;
}

/**
 * scipy.signal.convolve(x, taps, mode, method) for each series of x: batch × the mode's length.
 * x may be complex (c64, c128, I/Q with `iq: true`) and the taps complex ({ re, im }): the
 * result is then complex (complex-convolution.ts).
 */
export function convolve(x: RealBuffer, taps: ArrayLike<number>, options?: ConvolveOptions): RealBuffer;
export function convolve(x: RealBuffer | ComplexInput, taps: Taps, options?: ComplexConvolveOptions): ComplexBuffer;
export function convolve(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options: ConvolveOptions | ComplexConvolveOptions = {},
): RealBuffer | ComplexBuffer {
  if (isComplexTaps(taps) || complexCall(x, options, 'convolve')) {
    const method = options.method;
    // The method is checked before anything is enqueued (its choice by size is made per product).
    if (method !== undefined) convolutionMethod(method, 1, 1);
    return complexConvolution(x, taps, options as ComplexConvolveOptions, 'convolve', (planes, h, o) => {
      convolve(planes, h, { ...o, method });
    });
  }
  return convolveReal(x as RealBuffer, taps, options as ConvolveOptions);
}

function convolveReal(x: RealBuffer, taps: ArrayLike<number>, options: ConvolveOptions): RealBuffer {
  const h = checkTaps(taps, 'convolve');
  const { p, batch, length } = filterSeries(x, options.batch, 'convolve');
  const window = convolutionWindow(length, h.length, options.mode ?? 'full');
  const method = convolutionMethod(options.method ?? 'auto', length, h.length, options.mode ?? 'full');
  const ctx = x.context;
  const stream = resolveStream(ctx, options.stream);
  const y = convolutionOutput(x, batch * window.outLength, options, stream);
  if (method === 'direct') {
    const table = coefficientTable(ctx, 'taps', h, stream);
    ws.filterKernel(ctx, `convolve_direct_${p}`)(
      elementwise(batch * window.outLength, stream),
      x,
      y,
      table,
      batch,
      length,
      h.length,
      window.outLength,
      window.start,
    );
    return y;
  }
  enqueueFftConvolution({ x, y, h, p, batch, length, window, stream });
  return y;
}

/** scipy.signal.fftconvolve(x, taps, mode) for each series of x: convolve through the FFT (real or complex operands, as convolve). */
export function fftconvolve(
  x: RealBuffer,
  taps: ArrayLike<number>,
  options?: Omit<ConvolveOptions, 'method'>,
): RealBuffer;
export function fftconvolve(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options?: Omit<ComplexConvolveOptions, 'method'>,
): ComplexBuffer;
export function fftconvolve(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options: Omit<ConvolveOptions, 'method'> | Omit<ComplexConvolveOptions, 'method'> = {},
): RealBuffer | ComplexBuffer {
  return convolve(x as RealBuffer, taps as ArrayLike<number>, { ...(options as ConvolveOptions), method: 'fft' });
}

/** The output: `options.output` checked (x's dtype, `length` elements, not x), or a new buffer for work on `stream`. */
function convolutionOutput(x: RealBuffer, length: number, options: ConvolveOptions, stream: Stream): RealBuffer {
  if (options.output === undefined)
    return DeviceBuffer.alloc(x.dtype, length, { stream, label: 'convolve output' }) as RealBuffer;
  if (options.output === x)
    throw new TypeError('convolve: output must not be x (each output sample reads several input samples)');
  expectBuffer(options.output, x.dtype, length, 'convolve output');
  return options.output;
}
