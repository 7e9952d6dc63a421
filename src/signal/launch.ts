/**
 * How the signal operations launch and check: the launch configs (one thread per item, one block
 * per row) on the stream the operation resolved at its entry (runtime/stream.ts resolveStream:
 * without `{ stream }`, the input's context's default stream), and the checks every operation
 * makes of its buffers (precision, dtype, length, a real series of a batch). CUDA-free apart from
 * the types.
 */
import type { Precision } from '../runtime/fft/precision.js';
import type { LaunchConfig } from '../runtime/kernel.js';
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import type { Stream } from '../runtime/stream.js';
import { positiveInteger } from '../runtime/value-checks.js';
import type { RealBuffer } from './buffers.js';
import { ComplexInputError } from './input-errors.js';

/** The precision of a real (f32/f64) or complex (c64/c128) buffer; TypeError for other dtypes. */
export function precisionOf(buffer: DeviceBuffer<DType>, what: string): Precision {
  switch (buffer.dtype) {
    case 'f32':
    case 'c64':
      return 'f32';
    case 'f64':
    case 'c128':
      return 'f64';
    default:
      throw new TypeError(`${what} "${buffer.label}" must hold f32, f64, c64 or c128, not ${buffer.dtype}`);
  }
}

/** Checks a buffer's dtype and that it holds at least `length` elements. */
export function expectBuffer(buffer: DeviceBuffer<DType>, dtype: DType, length: number, what: string): void {
  if (!(buffer instanceof DeviceBuffer)) throw new TypeError(`${what} must be a DeviceBuffer`);
  buffer.checkAlive();
  if (buffer.dtype !== dtype) throw new TypeError(`${what} "${buffer.label}" must hold ${dtype}, not ${buffer.dtype}`);
  if (buffer.length < length)
    throw new RangeError(`${what} "${buffer.label}" holds ${buffer.length} ${dtype} elements; ${length} are needed`);
}

/** An untyped view of a generated launcher (arguments are checked by the kernel's parameter block). */
export type Launch = (config: LaunchConfig, ...args: (DeviceBuffer<DType> | number)[]) => void;

/** Block size of every signal kernel (a power of two: the reductions need it). */
export const BLOCK = 256;
/** Grid cap: grid-stride loops cover the rest. */
const MAX_GRID = 8192;

/** Launch config for `total` independent items, one per thread. */
export function elementwise(total: number, stream: Stream): LaunchConfig {
  const grid = Math.max(1, Math.min(Math.ceil(total / BLOCK), MAX_GRID));
  return { grid, block: BLOCK, stream };
}

/** A real (f32/f64) input of `batch` series: its precision, the batch and the series length; TypeError/RangeError naming `what` otherwise. */
export function realSeries(
  x: RealBuffer,
  batch: number | undefined,
  what: string,
): { p: Precision; batch: number; length: number } {
  if (!(x instanceof DeviceBuffer)) throw new TypeError(`${what} input must be a DeviceBuffer`);
  const p = precisionOf(x, `${what} input`);
  if (x.dtype !== p)
    throw new ComplexInputError(`${what} takes real input only (f32 or f64); "${x.label}" holds complex ${x.dtype}`);
  const b = positiveInteger(batch ?? 1, 'batch');
  if (x.length % b !== 0) throw new RangeError(`${what} input of ${x.length} samples does not split into ${b} series`);
  return { p, batch: b, length: x.length / b };
}

/** Launch config for `rows` rows, one block per row. */
export function perRow(rows: number, stream: Stream): LaunchConfig {
  const grid = Math.max(1, Math.min(rows, 65535));
  return { grid, block: BLOCK, stream };
}
