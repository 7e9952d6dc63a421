/**
 * What Redis says about one job, read the same way by every client: its status (BullMQ's state
 * mapped onto the engine's statuses), and once finished its result (scalars from BullMQ, arrays
 * from the result key) or why it failed.
 */
import { Job as BullJob, type Queue } from 'bullmq';
import type { BlobPool } from './blob-pool.js';
import type { JobResult, JobStatus } from '../engine/types.js';
import { unpackResult, type QueueRunInfo, type WireResult } from './codec.js';
import { QueueJobCancelledError, QueueJobError, UnknownQueueJobError } from './errors.js';
import type { BlobKeys } from './options.js';
import type { QueueCounts } from './job-queue-options.js';

/** A job's status in the queue: the engine's, and 'unknown' for an id Redis does not hold (never submitted, or dropped after its TTL). */
export type QueueJobStatus = JobStatus | 'unknown';

/** A finished job's result: the engine's result fields, and who ran it how many times. */
export type QueueJobResult = JobResult & { queue: QueueRunInfo };

/** One job as any client sees it. */
export interface QueueJobView {
  id: string;
  status: QueueJobStatus;
  /** Times a worker started it so far. */
  attempts: number;
  /** Once `ready`. */
  result?: QueueJobResult | undefined;
  /** Once `error` (QueueJobError, or UnknownQueueJobError when the result expired) or `cancelled` (a JobCancelledError). */
  error?: Error | undefined;
}

/** Reads job `id`'s view from Redis. Rejects only when Redis cannot be read. */
export async function readOutcome(queue: Queue, blobs: BlobPool, keys: BlobKeys, id: string): Promise<QueueJobView> {
  // The state first, then the job: read the other way round, a job that completes in between
  // would be 'completed' without the return value its fetched copy lacks.
  const state = await queue.getJobState(id);
  const job = state === 'unknown' ? undefined : await BullJob.fromId(queue, id);
  if (job === undefined) {
    if ((await blobs.control.exists(keys.cancelled(id))) === 1)
      return { id, status: 'cancelled', attempts: 0, error: new QueueJobCancelledError(id) };
    return { id, status: 'unknown', attempts: 0 };
  }
  const attempts = job.attemptsStarted ?? 0;
  switch (state) {
    case 'active':
      return { id, status: 'running', attempts };
    case 'completed':
      return completedView(blobs, id, job.returnvalue, attempts);
    case 'failed':
      return {
        id,
        status: 'error',
        attempts,
        error: new QueueJobError(id, job.failedReason || 'no reason given', attempts),
      };
    case 'unknown':
      return { id, status: 'unknown', attempts };
    default:
      // waiting, prioritized, delayed (a retry's backoff), paused, waiting-children.
      return { id, status: 'queued', attempts };
  }
}

/**
 * A completed job's view from its return value (BullMQ's, or the one its 'completed' event carried):
 * reads the result's arrays. A return value or stored result that cannot be decoded (another
 * program's, a corrupt one) is the job's failure, a QueueJobError saying why: read again, it would
 * fail the same way forever. Rejects only when Redis cannot be read.
 */
export async function completedView(
  blobs: BlobPool,
  id: string,
  returnvalue: unknown,
  attempts?: number,
): Promise<QueueJobView> {
  let wire: WireResult;
  try {
    wire = wireResultOf(returnvalue);
  } catch (error) {
    return unreadable(id, attempts ?? 0, error);
  }
  const tries = attempts ?? wire.run.attempts;
  const buffer = await blobs.get(wire.resultKey, wire.bytes);
  if (buffer === null)
    return {
      id,
      status: 'error',
      attempts: tries,
      error: new UnknownQueueJobError(id, 'its result expired after its time-to-live (resultTtlMs)'),
    };
  let result: QueueJobResult;
  try {
    result = unpackResult(wire.scalars, wire.arrays, buffer) as QueueJobResult;
  } catch (error) {
    return unreadable(id, tries, error);
  }
  result.queue = wire.run;
  return { id, status: 'ready', attempts: tries, result };
}

/** A return value as a WireResult, or a throw naming what is wrong with it. */
function wireResultOf(returnvalue: unknown): WireResult {
  const wire = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as Partial<WireResult> | null;
  if (wire === null || typeof wire !== 'object' || wire.v !== 1)
    throw new Error('the worker stored no result of format 1');
  const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null;
  if (
    typeof wire.resultKey !== 'string' ||
    !Number.isSafeInteger(wire.bytes) ||
    !Array.isArray(wire.arrays) ||
    !isObject(wire.scalars) ||
    typeof wire.run?.attempts !== 'number'
  )
    throw new Error('the return value lacks resultKey, bytes, arrays, scalars or run');
  return wire as WireResult;
}

function unreadable(id: string, attempts: number, error: unknown): QueueJobView {
  const why = error instanceof Error ? error.message : String(error);
  return {
    id,
    status: 'error',
    attempts,
    error: new QueueJobError(id, `its stored result cannot be read: ${why}`, attempts),
  };
}

/** The queue's jobs by state, as BullMQ counts them (a missing state is 0). */
export async function readCounts(queue: Queue): Promise<QueueCounts> {
  const c = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed');
  return {
    waiting: c.waiting ?? 0,
    prioritized: c.prioritized ?? 0,
    delayed: c.delayed ?? 0,
    active: c.active ?? 0,
    completed: c.completed ?? 0,
    failed: c.failed ?? 0,
  };
}
