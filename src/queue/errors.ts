/**
 * The queue's named errors. Like the engine's, they are matched by `name` across processes (a
 * failed job's reason travels through Redis as text), so each message names what went wrong.
 * A job id in a message is cut (clip): `queue.job(id)` takes any string, and a megabyte one is
 * not echoed back whole (the `jobId` field keeps it).
 */
import { clip } from '../runtime/value-checks.js';

/** Redis could not be reached (at start, or while a command needed it): nothing was queued. */
export class QueueUnavailableError extends Error {
  override readonly name: string = 'QueueUnavailableError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The job's result would exceed `maxResultBytes`: the engine's class, where the queue's client and worker check it too. */
export { ResultTooLargeError } from '../engine/errors.js';

/** The job failed on a worker (after its last attempt); `reason` is BullMQ's failedReason. */
export class QueueJobError extends Error {
  override readonly name: string = 'QueueJobError';
  /** The queue's id of the job. */
  readonly jobId: string;
  /** Why the last attempt failed, as the worker reported it. */
  readonly reason: string;
  /** Times a worker started the job (retries after a lost worker included). */
  readonly attempts: number;

  constructor(jobId: string, reason: string, attempts: number) {
    super(`job ${clip(jobId)} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${reason}`);
    this.jobId = jobId;
    this.reason = reason;
    this.attempts = attempts;
  }
}

/** The queue holds no job of that id: never submitted, or finished longer than its time-to-live ago. */
export class UnknownQueueJobError extends Error {
  override readonly name: string = 'UnknownQueueJobError';
  readonly jobId: string;

  constructor(jobId: string, detail = 'never submitted, or finished and dropped after its time-to-live') {
    super(`job ${clip(jobId)}: no such job in the queue (${detail})`);
    this.jobId = jobId;
  }
}

/**
 * The job was cancelled before a worker took it. Named `JobCancelledError` like the engine's, so
 * code (and the server's error mapping) that knows the engine's cancellation knows this one.
 */
export class QueueJobCancelledError extends Error {
  override readonly name: string = 'JobCancelledError';
  readonly jobId: string;

  constructor(jobId: string) {
    super(`job ${clip(jobId)} was cancelled before a worker took it`);
    this.jobId = jobId;
  }
}

/**
 * The queue holds as many waiting jobs, or as many bytes of waiting samples, as its client admits
 * (`maxWaitingJobs`, `maxWaitingBytes`), or Redis is out of memory: nothing was queued; retry
 * once workers have taken some. A front answers 429 `queue_full`.
 */
export class QueueFullError extends Error {
  override readonly name: string = 'QueueFullError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
