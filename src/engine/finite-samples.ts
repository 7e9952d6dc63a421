/**
 * The one rule for non-finite samples, for every way a job comes in: a NaN or an infinity among the
 * samples is refused with a JobValidationError naming the first one (`data[i]`). On the GPU it
 * would not fail: it would spread through every frame's FFT and come back as a result of NaNs that
 * looks computed. i16 samples are always finite; f16 and bf16 are read from their bits.
 *
 * Where it is enforced: the doors scan a request's samples on the CPU before anything is fused or
 * queued (the server's binary bodies, its JSON decoder, the request fuser, JobQueue.submit), so a
 * bad request never fails another; the engine's own submit does not scan (a scan on its hot path
 * cost more than the job's GPU work), its lanes find the first non-finite sample on the GPU as the
 * input arrives (signal/non-finite.ts), and such a job rejects with the same error once it ran,
 * its result discarded. CUDA-free.
 */
import { JobValidationError } from './errors.js';
import type { JobData, JobDataType } from './types.js';
import type { Precision } from '../runtime/fft/precision.js';

/** Accumulators of the float scan: one chain of adds is bound by an add's latency, eight run at memory speed. */
const FLOAT_LANES = 8;
/** Accumulators of the 16-bit scan (two samples per 32-bit word each). */
const WORD_LANES = 4;

/**
 * Whether every value of `x` is finite, in one pass with no branch: x * 0 is 0 (or -0) for every
 * finite x and NaN otherwise. Each accumulator sums its own eighth of `x`, so the adds of one
 * iteration do not wait for one another.
 */
function floatsFinite(x: Float32Array | Float64Array): boolean {
  const length = x.length;
  const q = Math.floor(length / FLOAT_LANES);
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let e = 0;
  let f = 0;
  let g = 0;
  let h = 0;
  for (let i = 0; i < q; i++) {
    a += x[i]! * 0;
    b += x[i + q]! * 0;
    c += x[i + 2 * q]! * 0;
    d += x[i + 3 * q]! * 0;
    e += x[i + 4 * q]! * 0;
    f += x[i + 5 * q]! * 0;
    g += x[i + 6 * q]! * 0;
    h += x[i + 7 * q]! * 0;
  }
  for (let i = FLOAT_LANES * q; i < length; i++) a += x[i]! * 0;
  return a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0 && g === 0 && h === 0;
}

/**
 * Whether no 16-bit float of `x` has an exponent of all ones (`exponent`: its bits), two samples per
 * 32-bit word: (bits & exponent) plus the exponent's lowest bit carries into the sign bit exactly
 * when the exponent is all ones, and the carries are ORed together.
 */
function halvesFinite(x: Uint16Array, exponent: number): boolean {
  if (x.length === 0) return true;
  let start = 0;
  // An Int32Array view needs 4-byte alignment: an odd first sample is checked alone.
  if (x.byteOffset % 4 !== 0) {
    if ((x[0]! & exponent) === exponent) return false;
    start = 1;
  }
  const pairs = Math.floor((x.length - start) / 2);
  if (start + 2 * pairs < x.length && (x[x.length - 1]! & exponent) === exponent) return false;
  const w = new Int32Array(x.buffer, x.byteOffset + 2 * start, pairs);
  const mask = exponent * 0x10001;
  const carry = (exponent & -exponent) * 0x10001;
  const q = Math.floor(pairs / WORD_LANES);
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  for (let i = 0; i < q; i++) {
    a |= (w[i]! & mask) + carry;
    b |= (w[i + q]! & mask) + carry;
    c |= (w[i + 2 * q]! & mask) + carry;
    d |= (w[i + 3 * q]! & mask) + carry;
  }
  for (let i = WORD_LANES * q; i < pairs; i++) a |= (w[i]! & mask) + carry;
  return ((a | b | c | d) & (0x8000 * 0x10001)) === 0;
}

/** The exponent bits of a 16-bit float type (all ones: an infinity or a NaN), 0 for a type that is always finite. */
function exponentBits(dtype: JobDataType): number {
  return dtype === 'f16' ? 0x7c00 : dtype === 'bf16' ? 0x7f80 : 0;
}

/** Whether every sample of `data` (of type `dtype`) is finite: one branch-free pass (the doors' common case). */
export function allFinite(data: JobData, dtype: JobDataType): boolean {
  if (data instanceof Float32Array || data instanceof Float64Array) return floatsFinite(data);
  const exponent = exponentBits(dtype);
  return exponent === 0 || halvesFinite(data as Uint16Array, exponent);
}

/**
 * Index of the first NaN or infinite sample of `data` (of type `dtype`), or -1 when all are finite.
 * `computedIn` 'f32': the precision the samples are computed in, where f64 samples are converted to
 * f32 on the way (an f32 engine's): beyond the f32 range they are infinite there, and count so.
 */
export function firstNonFinite(data: JobData, dtype: JobDataType, computedIn?: Precision): number {
  if (computedIn === 'f32' && data instanceof Float64Array) {
    // One pass, NaN and infinities included (their fround is not finite either); no call per sample.
    for (let i = 0; i < data.length; i++) if (!Number.isFinite(Math.fround(data[i]!))) return i;
    return -1;
  }
  // The branch-free pass first; a second only to name the sample.
  if (allFinite(data, dtype)) return -1;
  if (data instanceof Float32Array || data instanceof Float64Array) return data.findIndex((v) => !Number.isFinite(v));
  const exponent = exponentBits(dtype);
  return (data as Uint16Array).findIndex((bits) => (bits & exponent) === exponent);
}

/**
 * The JobValidationError for sample `at` of `data` (of type `dtype`), a NaN or an infinity; or, as
 * an f32 engine found it, an f64 sample beyond the f32 range (infinite once converted).
 */
export function nonFiniteSampleError(data: JobData, dtype: JobDataType, at: number): JobValidationError {
  const v = data[at]!;
  const value =
    data instanceof Float32Array || data instanceof Float64Array
      ? Number.isFinite(v)
        ? `${v}, infinite in f32 (this engine's precision)`
        : String(v)
      : `a non-finite ${dtype} (bits 0x${v.toString(16)})`;
  return new JobValidationError(
    `data[${at}]`,
    `is ${value}: samples must be finite (NaN and infinities are refused however the job comes in)`,
  );
}

/**
 * Throws JobValidationError on `data` when a sample is NaN or infinite (see the file's comment), in
 * `computedIn` too (firstNonFinite): what each door runs.
 */
export function checkFiniteSamples(data: JobData, dtype: JobDataType, computedIn?: Precision): void {
  const at = firstNonFinite(data, dtype, computedIn);
  if (at >= 0) throw nonFiniteSampleError(data, dtype, at);
}
