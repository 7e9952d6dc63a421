/**
 * The analytic signal on the GPU, batched over series: scipy.signal.hilbert(x, N) computed as
 * scipy does, through the FFT: the spectrum of each series (zero-padded or truncated to N points),
 * positive frequencies doubled, negative ones zeroed, inverse FFT. Its modulus is the envelope and
 * the derivative of its unwrapped angle the instantaneous frequency. Enqueue only.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { positiveInteger } from '../runtime/value-checks.js';
import type { Stream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { filterSeries } from './filter-call.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { elementwise, expectBuffer, outputPlacement } from './launch.js';

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
  const stream = options.stream;
  const ctx = x.context;
  let out: ComplexBuffer;
  if (options.output !== undefined) {
    expectBuffer(options.output, complex, batch * n, 'hilbert output');
    out = options.output;
  } else out = DeviceBuffer.alloc(complex, batch * n, outputPlacement(ctx, stream, 'hilbert output')) as ComplexBuffer;
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
