/**
 * The first non-finite sample (a NaN or an infinity) of a signal, found on the GPU: one read of the
 * input, one atomicMin per thread that meets one (rare), the index left in a device cell that
 * the caller copies back with its results (no sync of its own). The job engine runs it on each
 * chunk's input as it arrives, so its submit need not scan samples on the CPU
 * (src/engine/finite-samples.ts states the rule). f16 and bf16 samples are read from their bits,
 * as the CPU reads them; i16 samples are always finite.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import { positiveInteger } from '../runtime/value-checks.js';
import type { SignalInput } from './samples.js';
import { elementwise, expectBuffer } from './launch.js';
import { signalWorkspace as ws } from './workspace.js';

/** What the index cell holds after the search when every sample is finite: all ones (2^64 - 1). */
export const ALL_FINITE = 0xffff_ffff_ffff_ffffn;

/** The sample types that can hold a NaN or an infinity (every one the signal layer reads but i16). */
export type FloatSampleDType = 'f32' | 'f64' | 'f16' | 'bf16';

/** Whether samples of `dtype` can be NaN or infinite (i16 cannot: nothing to search). */
export function canBeNonFinite(dtype: DType): dtype is FloatSampleDType {
  return dtype === 'f32' || dtype === 'f64' || dtype === 'f16' || dtype === 'bf16';
}

/** Options of findNonFinite. */
export interface NonFiniteOptions {
  /** Series the input holds (default 1): only so that no count passed to the kernel exceeds 2^31 - 1. */
  batch?: number | undefined;
  stream?: Stream | undefined;
}

/**
 * Enqueues, on `options.stream`, the reset of `first` (one u64 on the device) to ALL_FINITE and
 * the search of `input` (f32, f64, f16 or bf16 samples) for its first NaN or infinity: once the
 * stream has passed it, `first` holds that sample's index, or ALL_FINITE when every sample is
 * finite. Enqueue only (no allocation): it may be captured into a CUDA graph.
 */
export function findNonFinite(input: SignalInput, first: DeviceBuffer<'u64'>, options: NonFiniteOptions = {}): void {
  if (!(input instanceof DeviceBuffer)) throw new TypeError('findNonFinite input must be a DeviceBuffer');
  const dtype = input.dtype as DType;
  if (!canBeNonFinite(dtype))
    throw new TypeError(
      `findNonFinite input "${input.label}" must hold f32, f64, f16 or bf16 samples, not ${dtype}${dtype === 'i16' ? ' (i16 samples are always finite)' : ''}`,
    );
  expectBuffer(first, 'u64', 1, 'findNonFinite index');
  if (first.context !== input.context)
    throw new TypeError(`findNonFinite index "${first.label}" is in another context than its input "${input.label}"`);
  const batch = positiveInteger(options.batch ?? 1, 'findNonFinite batch');
  const n = input.length / batch;
  if (!Number.isInteger(n))
    throw new RangeError(`findNonFinite input of ${input.length} samples does not split into ${batch} series`);
  if (n > 2 ** 31 - 1 || batch > 2 ** 31 - 1)
    throw new RangeError(`findNonFinite of ${batch} series of ${n} samples: each count must be at most 2^31 - 1`);
  // All ones in both 32-bit halves of the cell (a bigger buffer is set whole: only its first element is read).
  const stream = resolveStream(input.context, options.stream);
  first.memset(0xffff_ffff, { stream });
  ws.kernelNamed(input.context, `first_non_finite_${dtype}`)(elementwise(input.length, stream), input, first, batch, n);
}
