/**
 * An engine's limits and whether a job fits them, decided before it is queued: its queue bound
 * (`maxQueued`), its result arrays within `maxResultBytes` (host memory the engine would
 * allocate), and a chunk of it within every lane's memory; and the chunks it then runs in on a
 * lane. CUDA-free.
 */
import { minChunkFrames, planFrameChunks, planRowChunks, type FrameChunk } from './chunks.js';
import { JobValidationError, ResultTooLargeError } from './errors.js';
import type { LaneRunner } from './lane-runner.js';
import { resultArrayClass, resultArrays } from './result-arrays.js';
import type { NormalizedJob } from './validate.js';
import type { Precision } from '../runtime/fft/precision.js';
import { positiveInteger } from '../runtime/value-checks.js';

/** Default bound of an engine's queue. */
const DEFAULT_MAX_QUEUED = 1024;
/** Default host memory of one job's result arrays: with the lanes' jobs in flight, what bounds an engine's result memory. */
export const DEFAULT_MAX_RESULT_BYTES = 2 ** 30;

/**
 * The core's options checked, defaults filled in: by the core, and by JobEngine before it makes
 * any lane (a refusal then leaves no stream or buffer behind).
 */
export function coreOptions(options: {
  maxQueued?: number | undefined;
  precision?: Precision | undefined;
  maxResultBytes?: number | undefined;
}): {
  maxQueued: number;
  precision: Precision;
  maxResultBytes: number;
} {
  const maxQueued = positiveInteger(options.maxQueued ?? DEFAULT_MAX_QUEUED, 'maxQueued');
  const precision = options.precision ?? 'f32';
  if (precision !== 'f32' && precision !== 'f64')
    throw new TypeError(`precision must be 'f32' or 'f64', got ${String(precision)}`);
  const maxResultBytes = positiveInteger(options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, 'maxResultBytes');
  return { maxQueued, precision, maxResultBytes };
}

/** Host bytes of the result arrays the engine would allocate for `job` (those given in `into` are the caller's). */
export function allocatedResultBytes(job: NormalizedJob, precision: Precision): number {
  let bytes = 0;
  for (const { field, length, element } of resultArrays(job, precision))
    if (job.into[field] === undefined) bytes += length * resultArrayClass(element).BYTES_PER_ELEMENT;
  return bytes;
}

/** Throws ResultTooLargeError or JobValidationError (`data`) when `job` does not fit an engine of `runners`. */
export function checkJobFits(
  job: NormalizedJob,
  runners: readonly LaneRunner[],
  precision: Precision,
  maxResultBytes: number,
): void {
  const resultBytes = allocatedResultBytes(job, precision);
  if (resultBytes > maxResultBytes) throw new ResultTooLargeError(resultBytes, maxResultBytes, 'estimated at submit');
  if (job.framing) {
    const need = minChunkFrames(job.framing);
    const fits = Math.min(...runners.map((r) => r.maxFrames?.(job) ?? 0));
    if (!(fits >= need))
      throw new JobValidationError(
        'data',
        `${job.batch} series framed by nperseg = ${job.framing.nperseg} need ${need} frames per chunk, a lane holds ${fits}; submit fewer series per job`,
      );
    return;
  }
  const fits = Math.min(...runners.map((r) => r.maxRows(job)));
  if (!(fits >= 1))
    throw new JobValidationError(
      'data',
      `a series of ${job.length} samples does not fit in a lane with these flags; use shorter series or a framed stft (nperseg)`,
    );
}

/** The chunks a job runs in on `runner`: runs of whole series, or (framed stft) runs of whole frames of every series. */
export function planJobChunks(
  job: NormalizedJob,
  runner: LaneRunner,
): { start: number; rows: number; frames?: FrameChunk | undefined }[] {
  const f = job.framing;
  if (!f) return planRowChunks(job.batch, Math.max(1, runner.maxRows(job)));
  const maxFrames = runner.maxFrames?.(job) ?? f.frames;
  return planFrameChunks(f, maxFrames).map((frames) => ({ start: 0, rows: job.batch, frames }));
}
