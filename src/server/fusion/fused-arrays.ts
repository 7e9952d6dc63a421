/**
 * The arrays of a fused job: its requests' samples stacked into one batch, and its result cut
 * back into each request's rows. Every result array is row-major along the batch axis (series
 * after series: B x N waves, B x bins spectra, B x bands powers, one dominant cycle per series),
 * so a request's share is one contiguous run of it. CUDA-free.
 */
import { RESULT_ARRAY_FIELDS } from '../../engine/parameters.js';
import type { JobData, JobOutputArrays, JobResult } from '../../engine/types.js';

/** Reused host memory (the server's body pool): a Buffer of exactly `bytes`, 8-byte aligned, given back when no longer read. */
export interface FusionMemory {
  take(bytes: number): Buffer;
  release(buffer: Buffer): void;
}

/** Arrays the fused job reads or writes, and how to give their memory back once it no longer does. */
export interface BorrowedArray<T> {
  readonly array: T;
  /** Gives pooled memory back; nothing may read or write `array` afterwards. */
  release(): void;
}

type ArrayClass<T> = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  new (length: number): T;
  readonly BYTES_PER_ELEMENT: number;
};

/** An array of `like`'s class and `length` values, over pooled memory when a pool is given. */
function borrow<T extends JobData>(like: T, length: number, memory: FusionMemory | undefined): BorrowedArray<T> {
  const Class = like.constructor as ArrayClass<T>;
  if (memory === undefined) return { array: new Class(length), release: () => undefined };
  const buffer = memory.take(length * Class.BYTES_PER_ELEMENT);
  return { array: new Class(buffer.buffer, buffer.byteOffset, length), release: () => memory.release(buffer) };
}

/** The samples of `parts` one after the other, in one array of their (common) class. */
export function stackSamples(parts: readonly JobData[], memory: FusionMemory | undefined): BorrowedArray<JobData> {
  let total = 0;
  for (const part of parts) total += part.length;
  const stacked = borrow(parts[0]!, total, memory);
  let at = 0;
  for (const part of parts) {
    (stacked.array as Float32Array).set(part as Float32Array, at);
    at += part.length;
  }
  return stacked;
}

/**
 * Result arrays for the fused job where every request brought its own (`into`): one array per such
 * field, of their class and summed length, so the engine writes into reused memory and each
 * request's share is then copied into its own array. Fields some request left out are allocated
 * by the engine as usual.
 */
export function stackedOutputs(
  intos: readonly JobOutputArrays[],
  memory: FusionMemory | undefined,
): { into: JobOutputArrays; release(): void } {
  const into: Record<string, JobData> = {};
  const borrowed: BorrowedArray<JobData>[] = [];
  for (const field of RESULT_ARRAY_FIELDS) {
    let total = 0;
    for (const given of intos) {
      const array = given[field];
      if (array === undefined) {
        total = -1;
        break;
      }
      total += array.length;
    }
    if (total <= 0) continue;
    const stacked = borrow(intos[0]![field]!, total, memory);
    borrowed.push(stacked);
    into[field] = stacked.array;
  }
  return { into: into as JobOutputArrays, release: () => borrowed.forEach((b) => b.release()) };
}

/**
 * The result of `rows` series from series `start` of a fused job's `result`, as its request sees
 * it: its own batch, its own id, each result array cut to its rows and copied (into the request's
 * `into` array where it gave one, else a new array: a view would keep the whole fused result alive
 * for as long as any one answer is kept, as `/v1/jobs` keeps finished results), its own dominant
 * cycles.
 */
export function requestResult(
  result: JobResult,
  start: number,
  rows: number,
  into: JobOutputArrays,
  id: number,
): JobResult {
  const own: JobResult = { ...result, id, batch: rows };
  const target = own as unknown as Record<string, JobData | undefined>;
  const mine = into as Record<string, JobData | undefined>;
  for (const field of RESULT_ARRAY_FIELDS) {
    const array = result[field];
    if (array === undefined) continue;
    const perSeries = array.length / result.batch;
    const share = array.subarray(start * perSeries, (start + rows) * perSeries);
    const given = mine[field];
    if (given === undefined) target[field] = share.slice();
    else {
      (given as Float32Array).set(share as Float32Array);
      target[field] = given;
    }
  }
  if (result.dominant !== undefined) own.dominant = result.dominant.slice(start, start + rows);
  return own;
}
