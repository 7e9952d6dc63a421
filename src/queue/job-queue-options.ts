/**
 * The option and answer types of JobQueue, the queue's client: what `new JobQueue(...)` and
 * `submit()` take, and what `counts()` answers, and the checks of both options (their defaults
 * and limits are in options.ts).
 */
import type { Precision } from '../runtime/fft/precision.js';
import { integerOption, knownKeys, shownValue } from '../runtime/value-checks.js';
import { DEFAULT_BLOB_CONNECTIONS, MAX_BLOB_CONNECTIONS } from './blob-pool.js';
import { blobStoresOption } from './blob-stores.js';
import { checkConnection, type QueueConnection } from './connection.js';
import {
  DEFAULT_ATTEMPTS,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_INPUT_TTL_MS,
  DEFAULT_MAX_INPUT_BYTES,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_WAITING_BYTES,
  DEFAULT_MAX_WAITING_JOBS,
  DEFAULT_PREFIX,
  DEFAULT_PRIORITY,
  DEFAULT_QUEUE_NAME,
  DEFAULT_RESULT_TTL_MS,
  MAX_ATTEMPTS,
  MAX_BLOB_BYTES,
  MAX_PRIORITY,
  MAX_TTL_MS,
  MAX_WAITING_BYTES,
  nameOption,
  rateLimitOption,
  type RateLimit,
} from './options.js';

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
  /** Largest samples of one job, bytes; default 256 MiB (at most 512 MiB). Larger samples are refused with a JobValidationError naming `data`. */
  maxInputBytes?: number | undefined;
  /**
   * How long a finished job's result (its arrays, the bulk of its bytes) is kept, ms; default 1
   * hour (at most 7 days). The job's own small entry (status, scalars) is dropped by BullMQ past
   * the same age, but only when a later job of the queue finishes: until then its id still reads
   * as finished, its result as expired.
   */
  resultTtlMs?: number | undefined;
  /**
   * How long a queued job waits for a worker, ms; default 24 hours (at most 7 days). Its samples
   * expire then, it stops counting against `maxWaitingJobs`/`maxWaitingBytes`, a worker that takes
   * it later fails it (expired), and the client's sweep removes it from Redis.
   */
  inputTtlMs?: number | undefined;
  /** Jobs waiting for a worker (submitted, not started) this client admits; past it submit throws QueueFullError. Default 100000. */
  maxWaitingJobs?: number | undefined;
  /** Bytes of samples waiting in Redis for a worker this client admits; past it submit throws QueueFullError. Default 1 GiB. */
  maxWaitingBytes?: number | undefined;
  /**
   * How long each operation (submit, view, cancel, forget, counts, ready) waits for Redis, ms;
   * default 5000. Past it the operation fails with QueueUnavailableError and `reachable` is false
   * until Redis answers again. A submit gets 1 s more per 64 MiB of samples (their transfer).
   */
  commandTimeoutMs?: number | undefined;
  /** Tries per job when submit() gives none; default 3. */
  attempts?: number | undefined;
  /** A rate limit for the whole queue (every worker), stored in Redis once, by the first `submit()` or `ready()`. */
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

/** The options a queue front (`tscuda serve --redis`) takes as flags: its bounds on Redis. */
export type QueueFrontLimits = Pick<
  JobQueueOptions,
  'commandTimeoutMs' | 'maxWaitingJobs' | 'maxWaitingBytes' | 'inputTtlMs'
>;

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

/** Every key of JobQueueOptions, for the refusal of unknown ones (the `satisfies` keeps the list in step with the interface). */
const QUEUE_OPTION_KEYS = [
  'connection',
  'name',
  'prefix',
  'precision',
  'stages',
  'maxResultBytes',
  'maxInputBytes',
  'resultTtlMs',
  'inputTtlMs',
  'maxWaitingJobs',
  'maxWaitingBytes',
  'commandTimeoutMs',
  'attempts',
  'rateLimit',
  'pollIntervalMs',
  'blobConnections',
  'blobStores',
] as const satisfies readonly (keyof JobQueueOptions)[];
/** Every key of SubmitOptions. */
const SUBMIT_OPTION_KEYS = ['priority', 'attempts'] as const satisfies readonly (keyof SubmitOptions)[];
// A key added to an interface but not to its list fails to compile here.
const allListed: [
  Exclude<keyof JobQueueOptions, (typeof QUEUE_OPTION_KEYS)[number]>,
  Exclude<keyof SubmitOptions, (typeof SUBMIT_OPTION_KEYS)[number]>,
] extends [never, never]
  ? true
  : never = true;
void allListed;

/** JobQueueOptions checked, with their defaults. */
export interface ResolvedQueueOptions {
  connection: QueueConnection;
  name: string;
  prefix: string;
  precision: Precision;
  stages: ReadonlySet<string>;
  maxResultBytes: number;
  maxInputBytes: number;
  resultTtlMs: number;
  inputTtlMs: number;
  maxWaitingJobs: number;
  maxWaitingBytes: number;
  commandTimeoutMs: number;
  attempts: number;
  rateLimit: RateLimit | undefined;
  pollIntervalMs: number;
  blobConnections: number;
  blobStores: QueueConnection[];
}

/** Checks `new JobQueue(options)`'s options (a TypeError or RangeError naming the option) and fills in the defaults. */
export function resolveQueueOptions(options: unknown): ResolvedQueueOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(`JobQueue options must be an object with a connection, got ${shownValue(options)}`);
  knownKeys(options, QUEUE_OPTION_KEYS, 'JobQueue options');
  const o = options as JobQueueOptions;
  const connection = checkConnection(o.connection, 'connection');
  const precision = o.precision ?? 'f32';
  if (precision !== 'f32' && precision !== 'f64')
    throw new TypeError(`precision must be 'f32' or 'f64', got ${shownValue(precision)}`);
  if (o.stages !== undefined && (!Array.isArray(o.stages) || o.stages.some((s) => typeof s !== 'string')))
    throw new TypeError('stages must be an array of stage names');
  return {
    connection,
    name: nameOption('name', o.name, DEFAULT_QUEUE_NAME),
    prefix: nameOption('prefix', o.prefix, DEFAULT_PREFIX),
    precision,
    stages: new Set(o.stages ?? []),
    maxResultBytes: integerOption('maxResultBytes', o.maxResultBytes, DEFAULT_MAX_RESULT_BYTES, 1, MAX_BLOB_BYTES),
    maxInputBytes: integerOption('maxInputBytes', o.maxInputBytes, DEFAULT_MAX_INPUT_BYTES, 1, MAX_BLOB_BYTES),
    resultTtlMs: integerOption('resultTtlMs', o.resultTtlMs, DEFAULT_RESULT_TTL_MS, 1, MAX_TTL_MS),
    inputTtlMs: integerOption('inputTtlMs', o.inputTtlMs, DEFAULT_INPUT_TTL_MS, 1, MAX_TTL_MS),
    maxWaitingJobs: integerOption('maxWaitingJobs', o.maxWaitingJobs, DEFAULT_MAX_WAITING_JOBS, 1, 1e9),
    maxWaitingBytes: integerOption(
      'maxWaitingBytes',
      o.maxWaitingBytes,
      DEFAULT_MAX_WAITING_BYTES,
      1,
      MAX_WAITING_BYTES,
    ),
    commandTimeoutMs: integerOption('commandTimeoutMs', o.commandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_MS, 10, 600_000),
    attempts: integerOption('attempts', o.attempts, DEFAULT_ATTEMPTS, 1, MAX_ATTEMPTS),
    rateLimit: rateLimitOption('rateLimit', o.rateLimit),
    pollIntervalMs: integerOption('pollIntervalMs', o.pollIntervalMs, 2000, 10, 3_600_000),
    blobConnections: integerOption(
      'blobConnections',
      o.blobConnections,
      DEFAULT_BLOB_CONNECTIONS,
      1,
      MAX_BLOB_CONNECTIONS,
    ),
    blobStores: blobStoresOption(o.blobStores, connection),
  };
}

/** Checks `submit()`'s options (`attempts` defaults to the queue's): a TypeError or RangeError naming the option. */
export function resolveSubmitOptions(
  options: unknown,
  defaultAttempts: number,
): { priority: number; attempts: number } {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(
      `submit options must be an object ({ priority, attempts }), got ${options === null ? 'null' : shownValue(options)}`,
    );
  knownKeys(options, SUBMIT_OPTION_KEYS, 'submit options');
  const o = options as SubmitOptions;
  return {
    priority: integerOption('priority', o.priority, DEFAULT_PRIORITY, 1, MAX_PRIORITY),
    attempts: integerOption('attempts', o.attempts, defaultAttempts, 1, MAX_ATTEMPTS),
  };
}
