/**
 * The one rule for non-finite samples, for every way a job comes in (the engine's submit, the
 * queue's submit, the server's JSON and binary bodies, all through validateJob): a NaN or an
 * infinity among the samples is refused, naming the first one. On the GPU it would not fail: it
 * would spread through every frame's FFT and come back as a result of NaNs that looks computed.
 * i16 samples are always finite; f16 and bf16 are read from their bits.
 */
import type { JobData, JobDataType } from './types.js';
import { fail } from './field-checks.js';

/** Index of the first NaN or infinite sample of `data` (of type `dtype`), or -1 when all are finite. */
export function firstNonFinite(data: JobData, dtype: JobDataType): number {
  if (data instanceof Float32Array || data instanceof Float64Array) {
    // x * 0 is 0 for every finite x and NaN otherwise: one pass with no branch, then a second only to name the sample.
    let poison = 0;
    for (let i = 0; i < data.length; i++) poison += data[i]! * 0;
    if (poison === 0) return -1;
    for (let i = 0; i < data.length; i++) if (!Number.isFinite(data[i]!)) return i;
    return -1;
  }
  // Raw 16-bit float bits: an exponent of all ones is an infinity or a NaN.
  const exponent = dtype === 'f16' ? 0x7c00 : dtype === 'bf16' ? 0x7f80 : 0;
  if (exponent === 0) return -1;
  for (let i = 0; i < data.length; i++) if ((data[i]! & exponent) === exponent) return i;
  return -1;
}

/** Throws JobValidationError on `data` when a sample is NaN or infinite (see the file's comment). */
export function checkFiniteSamples(data: JobData, dtype: JobDataType): void {
  const at = firstNonFinite(data, dtype);
  if (at < 0) return;
  const value =
    data instanceof Float32Array || data instanceof Float64Array
      ? String(data[at])
      : `a non-finite ${dtype} (bits 0x${data[at]!.toString(16)})`;
  fail(`data[${at}]`, `is ${value}: samples must be finite (NaN and infinities are refused however the job comes in)`);
}
