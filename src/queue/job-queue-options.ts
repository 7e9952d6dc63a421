/**
 * The option and answer types of JobQueue, the queue's client: what `new JobQueue(...)` and
 * `submit()` take, and what `counts()` answers. Their defaults and limits are in options.ts.
 */
import type { Precision } from '../runtime/fft/precision.js';
import type { QueueConnection } from './connection.js';
import type { RateLimit } from './options.js';

/** Options of `new JobQueue(...)`. */
export interface JobQueueOptions {
  /** Redis: a URL (`redis://host:6379`) or ioredis options. */
  connection: QueueConnection;
  /** Queue name; workers must use the same. Default 'tscuda-jobs'. */
  name?: string | undefined;
  /** Redis key prefix; default 'tscuda'. */
  prefix?: string | undefined;
  /** The workers' arithmetic precision, for the result-size estimate at submit; default 'f32'. */
  precision?: Precision | undefined;
  /** Flags of stages registered on the workers' engines, which jobs may name. */
  stages?: readonly string[] | undefined;
  /** Largest result, bytes: a bigger estimate is refused at submit, a bigger result fails on the worker. Default 64 MiB (at most 512 MiB). */
  maxResultBytes?: number | undefined;
  /** Largest samples of one job, bytes; default 256 MiB (at most 512 MiB). */
  maxInputBytes?: number | undefined;
  /** How long a finished job and its result are kept, ms; default 1 hour (at most 7 days). */
  resultTtlMs?: number | undefined;
  /** How long a queued job's samples wait for a worker, ms; default 24 hours (at most 7 days). */
  inputTtlMs?: number | undefined;
  /** Tries per job when submit() gives none; default 3. */
  attempts?: number | undefined;
  /** A rate limit for the whole queue (every worker), stored in Redis by `ready()`. */
  rateLimit?: RateLimit | undefined;
  /** How often pending handles are checked against Redis besides its events (a net for events missed while Redis was away), ms; default 2000. */
  pollIntervalMs?: number | undefined;
  /** Connections carrying samples and results, per blob store (each value on the least busy one); default 4. */
  blobConnections?: number | undefined;
  /**
   * Redis servers that hold the samples and results (a job's on the one its id picks); default
   * the queue's own Redis. Every client and worker of the queue must list the same, in the same order.
   */
  blobStores?: readonly QueueConnection[] | undefined;
}

/** Options of `submit()`. */
export interface SubmitOptions {
  /** 1 (most urgent) .. 2097151; smaller runs first, equal ones in submit order. Default 1000. */
  priority?: number | undefined;
  /** Tries before the job fails (a worker lost mid-job counts as one); default the queue's `attempts`. */
  attempts?: number | undefined;
}

/** Jobs in the queue by state (BullMQ's counts). */
export interface QueueCounts {
  waiting: number;
  prioritized: number;
  delayed: number;
  active: number;
  completed: number;
  failed: number;
}
