/**
 * 16-bit samples: signals that arrive as i16 (ADCs, audio), f16 or bf16 go to the GPU in two
 * bytes per sample and are converted by the first kernel that reads them (framing, or the
 * whole-series detrend and window), so no pass of their own widens them. Results that go back to
 * the host can be rounded to f16/bf16 on the GPU (`narrow`) so the copy back moves two bytes too.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import type { Stream } from '../runtime/stream.js';
import { positiveInteger } from '../runtime/value-checks.js';
import type { RealBuffer } from './buffers.js';
import { elementwise, expectBuffer, precisionOf, signalWorkspace as ws, type Precision } from './workspace.js';

/** 16-bit sample types a signal may arrive in: signed integers (scaled), IEEE half, bfloat16. */
export type SampleDType = 'i16' | 'f16' | 'bf16';
/** 16-bit float types results may be returned in. */
export type HalfDType = 'f16' | 'bf16';
/** A device buffer of 16-bit samples. */
export type SampleBuffer = DeviceBuffer<'i16'> | DeviceBuffer<'f16'> | DeviceBuffer<'bf16'>;
/** What the signal operations that read a raw signal accept: f32/f64 series, or 16-bit samples. */
export type SignalInput = RealBuffer | SampleBuffer;

/** The i16 scale audio libraries use (full scale 32768 -> 1.0): the default for i16 input. */
export const DEFAULT_I16_SCALE = 1 / 32768;

/** The 16-bit sample types, for validation messages. */
export const SAMPLE_DTYPES: readonly SampleDType[] = ['i16', 'f16', 'bf16'];
/** The 16-bit output types. */
export const HALF_DTYPES: readonly HalfDType[] = ['f16', 'bf16'];

/** Options of the operations that take 16-bit input. */
export interface SampleOptions {
  /**
   * 16-bit input only: each sample is multiplied by this as it is read (finite, non-zero). Default
   * 1/32768 for i16 (full scale to ±1), 1 for f16 and bf16.
   */
  scale?: number | undefined;
  /** 16-bit input only: the precision the work runs in and results have (default 'f32'). */
  precision?: Precision | undefined;
}

/** Whether `dtype` is one of the 16-bit sample types. */
export function isSampleDType(dtype: unknown): dtype is SampleDType {
  return dtype === 'i16' || dtype === 'f16' || dtype === 'bf16';
}

/** The scale 16-bit samples of `dtype` are read with: `scale` checked (finite, non-zero), or the default (1/32768 for i16, else 1). */
export function sampleScale(dtype: SampleDType, scale: unknown, what = 'scale'): number {
  if (scale === undefined) return dtype === 'i16' ? DEFAULT_I16_SCALE : 1;
  if (typeof scale !== 'number' || !Number.isFinite(scale) || scale === 0)
    throw new RangeError(`${what} must be a finite non-zero number, got ${String(scale)}`);
  return scale;
}

/** How a signal input is read: the work's precision, its 16-bit type (undefined for f32/f64) and the scale. */
export interface InputSeries {
  p: Precision;
  sample: SampleDType | undefined;
  scale: number;
  batch: number;
  length: number;
}

/**
 * Reads a signal input: f32/f64 buffers run in their own precision (`scale` and `precision` must
 * not ask otherwise), 16-bit ones in `options.precision` (default f32) with their scale.
 * TypeError/RangeError naming `what` otherwise.
 */
export function inputSeries(
  x: SignalInput,
  options: SampleOptions & { batch?: number | undefined },
  what: string,
): InputSeries {
  if (!(x instanceof DeviceBuffer)) throw new TypeError(`${what} input must be a DeviceBuffer`);
  const b = positiveInteger(options.batch ?? 1, 'batch');
  if (x.length % b !== 0) throw new RangeError(`${what} input of ${x.length} samples does not split into ${b} series`);
  const dtype = x.dtype as DType;
  if (isSampleDType(dtype)) {
    const p = options.precision ?? 'f32';
    if (p !== 'f32' && p !== 'f64')
      throw new TypeError(`${what} precision must be 'f32' or 'f64', got ${JSON.stringify(p)}`);
    return {
      p,
      sample: dtype,
      scale: sampleScale(dtype, options.scale, `${what} scale`),
      batch: b,
      length: x.length / b,
    };
  }
  const p = precisionOf(x as DeviceBuffer<DType>, `${what} input`);
  if (dtype !== p)
    throw new TypeError(
      `${what} input "${x.label}" must be real (f32, f64) or 16-bit samples (i16, f16, bf16), not ${dtype}`,
    );
  if (options.scale !== undefined)
    throw new TypeError(`${what} scale applies to 16-bit input only; "${x.label}" holds ${dtype}`);
  if (options.precision !== undefined && options.precision !== p)
    throw new TypeError(
      `${what} precision ${JSON.stringify(options.precision)} differs from the input's ${dtype}: f32/f64 input runs in its own precision`,
    );
  return { p, sample: undefined, scale: 1, batch: b, length: x.length / b };
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
  ws.kernelNamed(input.context, `narrow_${p}_${output.dtype}`)(elementwise(n, options.stream), input, output, n);
}
