/**
 * 16-bit samples: signals that arrive as i16 (ADCs, audio), f16 or bf16 go to the GPU in two
 * bytes per sample and are converted by the first kernel that reads them (framing, or the
 * whole-series detrend and window), so no pass of their own widens them. Results that go back to
 * the host can be rounded to f16/bf16 on the GPU (`narrow`) so the copy back moves two bytes too.
 * Complex series arrive as c64/c128, or as interleaved integer I/Q pairs (i8/i16 with `iq: true`,
 * as software-defined radios deliver them), which one kernel converts to c64/c128 (iq.ts).
 * INPUT_KINDS is the one table of what an input may hold and how it is read.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import { positiveInteger, shownValue } from '../runtime/value-checks.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { ComplexInputError } from './input-errors.js';
import { signalWorkspace as ws, type Precision } from './workspace.js';
import { elementwise, expectBuffer, precisionOf } from './launch.js';

/** 16-bit sample types a signal may arrive in: signed integers (scaled), IEEE half, bfloat16. */
export type SampleDType = 'i16' | 'f16' | 'bf16';
/** Integer types interleaved I/Q pairs may arrive in (software-defined radios: 8-bit and 16-bit ADCs). */
export type IqDType = 'i8' | 'i16';
/** 16-bit float types results may be returned in. */
export type HalfDType = 'f16' | 'bf16';
/** A device buffer of 16-bit samples. */
export type SampleBuffer = DeviceBuffer<'i16'> | DeviceBuffer<'f16'> | DeviceBuffer<'bf16'>;
/** A device buffer of interleaved integer I/Q pairs (I0, Q0, I1, Q1, ...), read with `iq: true`. */
export type IqBuffer = DeviceBuffer<'i8'> | DeviceBuffer<'i16'>;
/** Complex series: c64/c128 (interleaved re, im, as CuPy and NumPy lay complex out), or integer I/Q pairs (`iq: true`). */
export type ComplexInput = ComplexBuffer | IqBuffer;
/** What the signal operations that read a raw signal accept: f32/f64 series, 16-bit samples, or complex series. */
export type SignalInput = RealBuffer | SampleBuffer | ComplexInput;

/**
 * How a signal input of each kind is read: the one description of the input types.
 * - `domain`: real series, or complex ones (each element a (re, im) pair).
 * - `read`: 'native' (f32/f64/c64/c128, in the precision they hold), 'sample16' (16-bit samples
 *   converted, times the scale, by the first kernel that reads them), 'iq' (interleaved integer
 *   I/Q pairs converted, times the scale, to c64/c128 by a kernel of their own before the work).
 * - `dtype`: the DeviceBuffer dtype the kind arrives in (ci8 and ci16 are i8 and i16 buffers read
 *   with `iq: true`).
 * - `defaultScale`: the scale when none is given (full scale to ±1 for integers; native kinds take none).
 */
export const INPUT_KINDS = {
  f32: { dtype: 'f32', domain: 'real', read: 'native', defaultScale: 1 },
  f64: { dtype: 'f64', domain: 'real', read: 'native', defaultScale: 1 },
  i16: { dtype: 'i16', domain: 'real', read: 'sample16', defaultScale: 1 / 32768 },
  f16: { dtype: 'f16', domain: 'real', read: 'sample16', defaultScale: 1 },
  bf16: { dtype: 'bf16', domain: 'real', read: 'sample16', defaultScale: 1 },
  c64: { dtype: 'c64', domain: 'complex', read: 'native', defaultScale: 1 },
  c128: { dtype: 'c128', domain: 'complex', read: 'native', defaultScale: 1 },
  ci8: { dtype: 'i8', domain: 'complex', read: 'iq', defaultScale: 1 / 128 },
  ci16: { dtype: 'i16', domain: 'complex', read: 'iq', defaultScale: 1 / 32768 },
} as const satisfies Record<string, { dtype: DType; domain: 'real' | 'complex'; read: string; defaultScale: number }>;

/** A kind of signal input (a key of INPUT_KINDS). */
export type InputKind = keyof typeof INPUT_KINDS;

/** The i16 scale audio libraries use (full scale 32768 -> 1.0): the default for i16 input. */
export const DEFAULT_I16_SCALE = INPUT_KINDS.i16.defaultScale;

/** The 16-bit sample types, for validation messages. */
export const SAMPLE_DTYPES: readonly SampleDType[] = ['i16', 'f16', 'bf16'];
/** The 16-bit output types. */
export const HALF_DTYPES: readonly HalfDType[] = ['f16', 'bf16'];

/** Options of the operations that take 16-bit or integer I/Q input. */
export interface SampleOptions {
  /**
   * 16-bit and I/Q input only: each sample (each I and Q) is multiplied by this as it is read
   * (finite, non-zero). Default: full scale to ±1 (1/32768 for i16, 1/128 for i8 I/Q), 1 for f16
   * and bf16.
   */
  scale?: number | undefined;
  /** 16-bit and I/Q input only: the precision the work runs in and results have (default 'f32'). */
  precision?: Precision | undefined;
  /** Read an i8 or i16 buffer as interleaved I/Q pairs (complex series of length / 2 samples); default false. */
  iq?: boolean | undefined;
}

/** Whether `dtype` is one of the 16-bit sample types. */
export function isSampleDType(dtype: unknown): dtype is SampleDType {
  return (
    typeof dtype === 'string' &&
    Object.hasOwn(INPUT_KINDS, dtype) &&
    INPUT_KINDS[dtype as InputKind].read === 'sample16'
  );
}

/** The scale samples of `kind` are read with: `scale` checked (finite, non-zero), or the kind's default. */
export function sampleScale(kind: SampleDType | 'ci8' | 'ci16', scale: unknown, what = 'scale'): number {
  if (scale === undefined) return INPUT_KINDS[kind].defaultScale;
  if (typeof scale !== 'number' || !Number.isFinite(scale) || scale === 0)
    throw new RangeError(`${what} must be a finite non-zero number, got ${String(scale)}`);
  return scale;
}

/**
 * The kind of `x` read with `iq`: i8/i16 with `iq: true` are I/Q pairs (ci8, ci16); other dtypes
 * are their own kind. TypeError naming `what` for a dtype no signal operation reads.
 */
export function inputKind(x: DeviceBuffer<DType>, iq: unknown, what: string): InputKind {
  if (iq !== undefined && typeof iq !== 'boolean')
    throw new TypeError(`${what} iq must be a boolean, got ${shownValue(iq)}`);
  const dtype = x.dtype as DType;
  if (iq === true) {
    if (dtype === 'i8' || dtype === 'i16') return `c${dtype}`;
    throw new TypeError(`${what} iq: true reads interleaved i8 or i16 I/Q pairs; "${x.label}" holds ${dtype}`);
  }
  if (dtype === 'i8')
    throw new TypeError(`${what} input "${x.label}" holds i8: read i8 only as interleaved I/Q pairs (iq: true)`);
  if (Object.hasOwn(INPUT_KINDS, dtype)) return dtype as InputKind;
  throw new TypeError(
    `${what} input "${x.label}" must be real (f32, f64), 16-bit samples (i16, f16, bf16) or complex (c64, c128, i8/i16 with iq: true), not ${dtype}`,
  );
}

/** How a signal input is read: the work's precision, its kind, its 16-bit or I/Q type, the scale and the series. */
export interface InputSeries {
  p: Precision;
  /** What x holds (see INPUT_KINDS). */
  kind: InputKind;
  /** Complex series (c64, c128 or I/Q): the work runs on complex samples, spectra come two-sided. */
  complex: boolean;
  /** The 16-bit sample type of real 16-bit input, else undefined. */
  sample: SampleDType | undefined;
  /** The integer type of I/Q input, else undefined. */
  iq: IqDType | undefined;
  scale: number;
  batch: number;
  /** Samples per series (complex samples for complex input: I/Q pairs count once). */
  length: number;
}

/** Which inputs an operation takes: real ones only (complex input is a ComplexInputError), or complex ones too. */
export type InputDomain = 'real' | 'real or complex';

/**
 * Reads a signal input: f32/f64/c64/c128 buffers run in their own precision (`scale` and
 * `precision` must not ask otherwise), 16-bit and I/Q ones in `options.precision` (default f32)
 * with their scale. Complex input where `accepts` is 'real' is a ComplexInputError naming `what`;
 * other mistakes TypeError/RangeError naming `what`. Pure: nothing is enqueued.
 */
export function inputSeries(
  x: SignalInput,
  options: SampleOptions & { batch?: number | undefined },
  what: string,
  accepts: InputDomain = 'real',
): InputSeries {
  if (!(x instanceof DeviceBuffer)) throw new TypeError(`${what} input must be a DeviceBuffer`);
  const kind = inputKind(x as DeviceBuffer<DType>, options.iq, what);
  const info = INPUT_KINDS[kind];
  const complex = info.domain === 'complex';
  if (complex && accepts === 'real')
    throw new ComplexInputError(`${what} takes real input only; "${x.label}" holds complex ${kind} series`);
  const b = positiveInteger(options.batch ?? 1, 'batch');
  let values = x.length;
  if (info.read === 'iq') {
    if (values % 2 !== 0)
      throw new RangeError(
        `${what} I/Q input "${x.label}" of ${values} values is not whole (I, Q) pairs: the length must be even`,
      );
    values /= 2;
  }
  if (values % b !== 0) throw new RangeError(`${what} input of ${values} samples does not split into ${b} series`);
  const length = values / b;
  if (info.read !== 'native') {
    const p = options.precision ?? 'f32';
    if (p !== 'f32' && p !== 'f64')
      throw new TypeError(`${what} precision must be 'f32' or 'f64', got ${JSON.stringify(p)}`);
    const scale = sampleScale(kind as SampleDType | 'ci8' | 'ci16', options.scale, `${what} scale`);
    const iq = info.read === 'iq' ? (info.dtype as IqDType) : undefined;
    const sample = info.read === 'sample16' ? (kind as SampleDType) : undefined;
    return { p, kind, complex, sample, iq, scale, batch: b, length };
  }
  const p = precisionOf(x as DeviceBuffer<DType>, `${what} input`);
  if (options.scale !== undefined)
    throw new TypeError(`${what} scale applies to 16-bit and I/Q input only; "${x.label}" holds ${kind}`);
  if (options.precision !== undefined && options.precision !== p)
    throw new TypeError(
      `${what} precision ${JSON.stringify(options.precision)} differs from the input's ${kind}: ${kind} input runs in its own precision`,
    );
  return { p, kind, complex, sample: undefined, iq: undefined, scale: 1, batch: b, length };
}

/** Options of `narrow`. */
export interface NarrowOptions {
  /** Values to convert (default: all of `input`). */
  length?: number | undefined;
  stream?: Stream | undefined;
}

/**
 * Rounds f32/f64 values to f16 or bf16 on the GPU (round to nearest even; beyond the f16 range
 * ±Infinity): `output[i] = round(input[i])`. The last kernel before a 16-bit copy back.
 */
export function narrow(
  input: RealBuffer,
  output: DeviceBuffer<'f16'> | DeviceBuffer<'bf16'>,
  options: NarrowOptions = {},
): void {
  if (!(input instanceof DeviceBuffer)) throw new TypeError('narrow input must be a DeviceBuffer');
  const p = precisionOf(input, 'narrow input');
  if (input.dtype !== p)
    throw new TypeError(`narrow input "${input.label}" must be real (f32 or f64), not ${input.dtype}`);
  const out: unknown = output;
  if (!(out instanceof DeviceBuffer) || (out.dtype !== 'f16' && out.dtype !== 'bf16'))
    throw new TypeError(
      `narrow output must be an f16 or bf16 DeviceBuffer${out instanceof DeviceBuffer ? `, not ${out.dtype}` : ''}`,
    );
  const n = options.length === undefined ? input.length : positiveInteger(options.length, 'narrow length');
  if (n > 2 ** 31 - 1) throw new RangeError(`narrow of ${n} values exceeds 2^31 - 1 per call`);
  expectBuffer(input, p, n, 'narrow input');
  expectBuffer(output, output.dtype, n, 'narrow output');
  const stream = resolveStream(input.context, options.stream);
  ws.kernelNamed(input.context, `narrow_${p}_${output.dtype}`)(elementwise(n, stream), input, output, n);
}
