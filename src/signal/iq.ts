/**
 * Complex input on the GPU: interleaved integer I/Q pairs converted to c64/c128 (one kernel, the
 * scale applied as each value is read), and complex series split into real planes (the real parts
 * as B series, the imaginary parts as B more) and joined back, so that the filters and
 * convolutions, whose coefficients are real, run on complex signals through their real kernels:
 * with real coefficients the real and imaginary parts are filtered independently, exactly as
 * scipy's complex arithmetic does it.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import {
  inputSeries,
  type ComplexInput,
  type InputSeries,
  type IqBuffer,
  type SampleOptions,
  type SignalInput,
} from './samples.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { elementwise, expectBuffer } from './launch.js';

/** The most values one conversion or planes kernel takes (their counts are 32-bit). */
const MAX_VALUES = 2 ** 31 - 1;

/** Options of iqToComplex. */
export interface IqToComplexOptions {
  /** Each I and Q value is multiplied by this (finite, non-zero); default full scale to ±1 (1/128 for i8, 1/32768 for i16). */
  scale?: number | undefined;
  /** c64 ('f32', default) or c128 ('f64') output. */
  precision?: 'f32' | 'f64' | undefined;
  /** Write here (c64/c128, at least iq.length / 2 values); default a new buffer. */
  output?: ComplexBuffer | undefined;
  stream?: Stream | undefined;
}

/**
 * Interleaved integer I/Q pairs (I0, Q0, I1, Q1, ... in an i8 or i16 buffer of even length) to
 * complex values on the GPU: out[i] = (iq[2i] + j·iq[2i+1])·scale. Enqueue only.
 */
export function iqToComplex(iq: IqBuffer, options: IqToComplexOptions = {}): ComplexBuffer {
  const input = inputSeries(
    iq,
    { scale: options.scale, precision: options.precision, iq: true },
    'iqToComplex',
    'real or complex',
  );
  const n = pairsOf(input);
  const dtype = COMPLEX_OF[input.p];
  const stream = resolveStream(iq.context, options.stream);
  let out: ComplexBuffer;
  if (options.output === undefined)
    out = DeviceBuffer.alloc(dtype, n, { stream, label: 'iqToComplex output' }) as ComplexBuffer;
  else {
    expectBuffer(options.output, dtype, n, 'iqToComplex output');
    out = options.output;
  }
  enqueueIq(iq, input, out, stream);
  return out;
}

/** The I/Q pairs of an input, at most MAX_VALUES (the conversion kernel's count is 32-bit): checked before anything is allocated. */
function pairsOf(input: InputSeries): number {
  const n = input.batch * input.length;
  if (n > MAX_VALUES) throw new RangeError(`${n} I/Q pairs exceed 2^31 - 1 per call`);
  return n;
}

function enqueueIq(x: SignalInput, input: InputSeries, out: ComplexBuffer, stream: Stream): void {
  const n = pairsOf(input);
  ws.kernelNamed(x.context, `iq_to_complex_${input.iq!}_${input.p}`)(elementwise(n, stream), x, out, n, input.scale);
}

/**
 * The complex series of a complex input: c64/c128 input itself, or I/Q input converted into the
 * workspace scratch named `purpose` (a view of exactly batch × length values). Enqueue only.
 */
export function complexSeries(
  x: SignalInput,
  input: InputSeries,
  stream: Stream,
  purpose = 'iq-complex',
): ComplexBuffer {
  if (!input.complex) throw new TypeError(`complexSeries: "${x.label}" holds real ${input.kind} series`);
  if (input.iq === undefined) return x as ComplexBuffer;
  const n = pairsOf(input);
  const scratch = ws.scratch(x.context, stream, purpose, COMPLEX_OF[input.p], n);
  const out = (scratch.length === n ? scratch : scratch.view(0, n)) as ComplexBuffer;
  enqueueIq(x, input, out, stream);
  return out;
}

/** A workspace scratch of exactly `length` values (the real operations read a series' length off their input). */
function exactScratch<T extends DType>(
  x: DeviceBuffer<DType>,
  stream: Stream,
  purpose: string,
  dtype: T,
  length: number,
): DeviceBuffer<T> {
  const scratch = ws.scratch(x.context, stream, purpose, dtype, length);
  return scratch.length === length ? scratch : scratch.view(0, length);
}

/** The complex input of a real-coefficient operation resolved (pure): its series, and its output checked or to be made. */
export interface PlanesCall {
  x: ComplexInput;
  input: InputSeries;
  /** Output samples per series. */
  outLength: number;
  /** The caller's complex output (checked), or undefined: runPlanes makes one. */
  output: ComplexBuffer | undefined;
  what: string;
  stream: Stream;
}

/** Options every planes operation takes. */
export interface PlanesOptions extends SampleOptions {
  batch?: number | undefined;
  stream?: Stream | undefined;
  output?: DeviceBuffer<DType> | undefined;
}

/**
 * Reads a complex input for an operation that runs through planes, resolves its stream (x's
 * context's default stream without one), and checks its output of `outLength` complex samples per
 * series where the caller gives one (it may be x: the planes are copied out of x before anything
 * is written). Nothing is allocated or enqueued; call every other check of the operation before
 * runPlanes, which makes the output where none was given.
 */
export function planesCall(
  x: ComplexInput,
  options: PlanesOptions,
  what: string,
  outLength: (length: number) => number,
): PlanesCall {
  const input = inputSeries(x, options, what, 'real or complex');
  const n = outLength(input.length);
  const total = input.batch * Math.max(n, input.length);
  if (2 * total > MAX_VALUES)
    throw new RangeError(
      `${what}: ${input.batch} complex series of ${input.length} samples exceed 2^31 - 1 values per call`,
    );
  const dtype = COMPLEX_OF[input.p];
  const stream = resolveStream(x.context, options.stream);
  let output: ComplexBuffer | undefined;
  if (options.output !== undefined) {
    expectBuffer(options.output, dtype, input.batch * n, `${what} output`);
    output = options.output as ComplexBuffer;
  }
  return { x, input, outLength: n, output, stream, what };
}

/**
 * Runs a real operation over the planes of a complex call: `run(planes, batch, out)` enqueues it
 * over `batch` (2B) real series into `out` (2B × outLength), once per real coefficient set
 * (`parts` 1: real coefficients; 2: the real and the imaginary parts of complex ones, run(…, part)
 * told which), and the result is joined into the output (call.output, or a new buffer where
 * outputs go). Returns the output.
 */
export function runPlanes(
  call: PlanesCall,
  parts: 1 | 2,
  run: (planes: RealBuffer, batch: number, out: RealBuffer, part: 0 | 1) => void,
): ComplexBuffer {
  const { x, input, stream, outLength } = call;
  const { p, batch, length } = input;
  const ctx = x.context;
  const output =
    call.output ??
    (DeviceBuffer.alloc(COMPLEX_OF[p], batch * outLength, { stream, label: `${call.what} output` }) as ComplexBuffer);
  const c = complexSeries(x, input, stream);
  const planes = exactScratch(x, stream, 'complex-planes', p, 2 * batch * length) as RealBuffer;
  ws.kernel(ctx, 'complex_to_planes', p)(elementwise(batch * length, stream), c, planes, batch, length);
  const a = exactScratch(x, stream, 'complex-planes-a', p, 2 * batch * outLength) as RealBuffer;
  run(planes, 2 * batch, a, 0);
  let cPart = a;
  if (parts === 2) {
    cPart = exactScratch(x, stream, 'complex-planes-c', p, 2 * batch * outLength) as RealBuffer;
    run(planes, 2 * batch, cPart, 1);
  }
  ws.kernel(ctx, 'join_planes', p)(
    elementwise(batch * outLength, stream),
    a,
    cPart,
    output,
    batch,
    outLength,
    1,
    parts === 2 ? 1 : 0,
  );
  return output;
}

/**
 * A real signal through complex coefficients: `run(x, out, part)` enqueues the real operation with
 * the real (part 0) and the imaginary (part 1) coefficients, each into B real rows, joined as
 * y = a + j·c into `output` (batch × outLength complex).
 */
export function realThroughComplex(
  x: RealBuffer,
  batch: number,
  outLength: number,
  output: ComplexBuffer,
  stream: Stream,
  run: (out: RealBuffer, part: 0 | 1) => void,
): ComplexBuffer {
  const p = x.dtype;
  const a = exactScratch(x, stream, 'complex-planes-a', p, batch * outLength) as RealBuffer;
  const c = exactScratch(x, stream, 'complex-planes-c', p, batch * outLength) as RealBuffer;
  run(a, 0);
  run(c, 1);
  ws.kernel(x.context, 'join_planes', p)(elementwise(batch * outLength, stream), a, c, output, batch, outLength, 0, 1);
  return output;
}

/** Whether x is complex input (c64/c128, or i8/i16 read with `iq: true`): the operations that take both branch on it. */
export function isComplexInput(x: unknown, options: { iq?: boolean | undefined } = {}): x is ComplexInput {
  if (!(x instanceof DeviceBuffer)) return false;
  return x.dtype === 'c64' || x.dtype === 'c128' || options.iq === true;
}

/** What a filtering or convolution call on complex input takes: the series, the stream, I/Q reading, and a complex output. */
export interface ComplexCallOptions extends SampleOptions {
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write y here (c64 for f32 work, c128 for f64; batch × the output length); default a new buffer. */
  output?: ComplexBuffer | undefined;
}

/**
 * Whether a filtering or convolution call is complex (x c64/c128, or i8/i16 with `iq: true`).
 * A real call given I/Q options (`scale`, `precision`) is a TypeError naming `what`: they would be ignored.
 */
export function complexCall(x: unknown, options: object, what: string): boolean {
  const sampleOptions = options as SampleOptions;
  if (isComplexInput(x, sampleOptions)) return true;
  if (sampleOptions.scale !== undefined || sampleOptions.precision !== undefined)
    throw new TypeError(`${what}: scale and precision apply to I/Q input (iq: true) only; x is real`);
  return false;
}

/** Refuses a filter state with complex x (TypeError naming `what`): zi and zf are taken for real series only. */
export function refuseState(options: object, what: string): void {
  const state = options as { zi?: unknown; zf?: unknown };
  if (state.zi !== undefined || state.zf !== undefined)
    throw new TypeError(
      `${what}: zi and zf (the filter state) are taken for real x only; filter complex x without them`,
    );
}
