/**
 * What a JobQueue sends for a job: its spec checked as the engine would check it (a job the engine
 * would refuse never enters the queue), with the queue's own limits on its samples and its result,
 * and its wire form (codec.ts), built before anything is stored.
 */
import { JobValidationError } from '../engine/errors.js';
import type { JobSpec } from '../engine/types.js';
import { checkFiniteSamples } from '../engine/finite-samples.js';
import { validateJob } from '../engine/validate.js';
import { dtypeOf, resultLayout, samplesToBuffer, type WireJob, type WireParams } from './codec.js';
import { ResultTooLargeError } from './errors.js';
import type { ResolvedQueueOptions } from './job-queue-options.js';
import { INPUT_ALONGSIDE_MAX_BYTES } from './options.js';

/** A job that may be queued: its samples, its abort signal, and the parameters that cross Redis. */
export interface CheckedSubmission {
  data: JobSpec['data'];
  signal: AbortSignal | undefined;
  params: WireParams;
}

/**
 * Checks `spec` for a queue with options `o`, throwing at once: JobValidationError (a bad field, a
 * sample that is not finite, a spec carrying `into`, samples over maxInputBytes) or
 * ResultTooLargeError (the estimated result is over maxResultBytes).
 */
export function checkSubmission(spec: JobSpec, o: ResolvedQueueOptions): CheckedSubmission {
  const job = validateJob(spec, { stages: o.stages });
  checkFiniteSamples(job.data, job.dtype, o.precision); // the queue's door (validateJob does not scan)
  if (spec.into !== undefined)
    throw new JobValidationError('into', 'is not carried through the queue: results come back as fresh arrays');
  const inputBytes = job.data.byteLength;
  if (inputBytes > o.maxInputBytes)
    throw new JobValidationError('data', `${inputBytes} bytes of samples exceed maxInputBytes = ${o.maxInputBytes}`);
  const resultBytes = resultLayout(job, o.precision).bytes;
  if (resultBytes > o.maxResultBytes)
    throw new ResultTooLargeError(resultBytes, o.maxResultBytes, 'estimated at submit');
  const { data, into: _into, signal, ...params } = spec;
  return { data, signal, params };
}

/**
 * The wire form of a checked job whose samples go under `inputKey` (and alongside the job itself
 * when small), over `stores` blob stores, with the queue's lifetimes and result limit. The samples
 * are `data`'s own bytes (no copy). Throws JobValidationError when the parameters are not JSON.
 */
export function wireJob(
  job: CheckedSubmission,
  inputKey: string,
  stores: number,
  o: ResolvedQueueOptions,
): { wire: WireJob; samples: Buffer } {
  try {
    JSON.stringify(job.params);
  } catch (error) {
    throw new JobValidationError('stageParams', `must be JSON (it crosses Redis): ${(error as Error).message}`);
  }
  const samples = samplesToBuffer(job.data);
  const wire: WireJob = {
    v: 1,
    stores,
    params: job.params,
    dtype: dtypeOf(job.data),
    samples: job.data.length,
    inputKey,
    ...(samples.byteLength <= INPUT_ALONGSIDE_MAX_BYTES ? { inputAlongside: true } : {}),
    inputTtlMs: o.inputTtlMs,
    maxResultBytes: o.maxResultBytes,
    resultTtlMs: o.resultTtlMs,
  };
  return { wire, samples };
}
