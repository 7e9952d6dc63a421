/**
 * The analytic signal on the GPU, batched over series: scipy.signal.hilbert(x, N) computed as
 * scipy does, through the FFT: the spectrum of each series (zero-padded or truncated to N points),
 * positive frequencies doubled, negative ones zeroed, inverse FFT. Its modulus is the envelope and
 * the derivative of its unwrapped angle the instantaneous frequency. Enqueue only.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { positiveInteger } from '../runtime/value-checks.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { filterOutput, filterSeries, type FilterCallOptions } from './filter-call.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { elementwise, expectBuffer } from './launch.js';

/** Options of hilbert. */
export interface HilbertOptions {
  /** Points of the transform (and of each output series); default the series length. */
  N?: number | undefined;
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (c64 for f32 x, c128 for f64 x, batch × N); default a new buffer. */
  output?: ComplexBuffer | undefined;
}

/** scipy.signal.hilbert(x, N, axis=-1): the analytic signal of each series, batch × N complex (c64 for f32, c128 for f64). */
export function hilbert(x: RealBuffer, options: HilbertOptions = {}): ComplexBuffer {
  const { p, batch, length } = filterSeries(x, options.batch, 'hilbert');
  const n = positiveInteger(options.N ?? length, 'hilbert: N');
  const complex = COMPLEX_OF[p];
  const ctx = x.context;
  const stream = resolveStream(ctx, options.stream);
  let out: ComplexBuffer;
  if (options.output !== undefined) {
    expectBuffer(options.output, complex, batch * n, 'hilbert output');
    out = options.output;
  } else out = DeviceBuffer.alloc(complex, batch * n, { stream, label: 'hilbert output' }) as ComplexBuffer;
  if (n <= 2) {
    // Every weight is 1 for N <= 2 (DC and Nyquist only): the analytic signal is the signal itself.
    ws.filterKernel(ctx, `real_to_complex_${p}`)(elementwise(batch * n, stream), x, out, batch, length, n);
    return out;
  }
  let input: RealBuffer = x;
  if (n !== length) {
    input = ws.scratch(ctx, stream, 'hilbert-input', p, batch * n) as RealBuffer;
    ws.filterKernel(ctx, `fit_rows_${p}`)(elementwise(batch * n, stream), x, input, batch, length, n);
  }
  const half = ws.scratch(ctx, stream, 'hilbert-half', complex, batch * (Math.floor(n / 2) + 1));
  ws.realForward(ctx, p, n, batch, input, half, stream);
  ws.filterKernel(ctx, `analytic_spectrum_${p}`)(elementwise(batch * n, stream), half, out, batch, n);
  ws.complexInPlace(ctx, p, n, batch, out, 'inverse', stream);
  return out;
}

/**
 * np.abs(scipy.signal.hilbert(x)) for each series: the analytic envelope, batch × length reals of
 * x's precision. The analytic signal lives in the signal layer's scratch of the stream; y may be x
 * (the modulus is written after the transform has read x).
 */
export function envelope(x: RealBuffer, options: FilterCallOptions = {}): RealBuffer {
  const { p, batch, length } = filterSeries(x, options.batch, 'envelope');
  const stream = resolveStream(x.context, options.stream);
  const y = filterOutput(x, options, stream, 'envelope');
  const total = batch * length;
  const analytic = ws.scratch(x.context, stream, 'envelope-analytic', COMPLEX_OF[p], total) as ComplexBuffer;
  hilbert(x, { batch, stream, output: analytic });
  // |z| of every element: the magnitude kernel over one row of all the batch's samples.
  ws.kernel(x.context, 'magnitude', p)(elementwise(total, stream), analytic, y, 1, total, total, 1);
  return y;
}
