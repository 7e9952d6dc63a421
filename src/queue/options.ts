/**
 * The queue's options shared by its client and its workers, with bounded defaults: every limit
 * that holds memory in Redis (samples, results, how long they stay) has one, so a client that
 * never collects its results cannot fill Redis.
 */
import { integerOption, knownKeys, shownValue } from '../runtime/value-checks.js';

/** Default queue name (the Redis keys are `<prefix>:<name>:...`). */
export const DEFAULT_QUEUE_NAME = 'tscuda-jobs';
/** Default key prefix; with Redis Cluster use a hash tag, e.g. `{tscuda}`, so a queue's keys share a slot. */
export const DEFAULT_PREFIX = 'tscuda';
/** Largest result kept, bytes (64 MiB). */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 2 ** 20;
/** Largest samples of one job, bytes (256 MiB, the server's body limit). */
export const DEFAULT_MAX_INPUT_BYTES = 256 * 2 ** 20;
/** Redis refuses strings over 512 MB: no limit may exceed it. */
export const MAX_BLOB_BYTES = 512 * 2 ** 20;
/** How long a finished job and its result are kept (1 hour). */
export const DEFAULT_RESULT_TTL_MS = 3_600_000;
/** How long a queued job's samples wait for a worker (24 hours). */
export const DEFAULT_INPUT_TTL_MS = 86_400_000;
/** Longest time-to-live accepted (7 days). */
export const MAX_TTL_MS = 7 * 86_400_000;
/** How long a client's operation (submit, view, cancel, forget, counts, ready) waits for Redis to answer, ms (5 s): then it fails with QueueUnavailableError. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5000;
/** Jobs waiting for a worker (not yet started) that a client admits, by default; past it submit throws QueueFullError. */
export const DEFAULT_MAX_WAITING_JOBS = 100_000;
/** Bytes of samples waiting in Redis for a worker that a client admits, by default (1 GiB); past it submit throws QueueFullError. */
export const DEFAULT_MAX_WAITING_BYTES = 2 ** 30;
/** The most bytes of waiting samples a client may admit (1 TiB: far past any Redis' memory). */
export const MAX_WAITING_BYTES = 2 ** 40;

/** Tries per job by default (a retry follows a worker lost mid-job or a retryable failure). */
export const DEFAULT_ATTEMPTS = 3;
/** Most tries a job may ask for. */
export const MAX_ATTEMPTS = 100;
/** Priority of a job that gives none; smaller runs first (BullMQ's order), 1 is the most urgent. */
export const DEFAULT_PRIORITY = 1000;
/** Largest priority (BullMQ's limit). */
export const MAX_PRIORITY = 2_097_151;
/** Backoff before a retry after a retryable failure, ms (doubling per attempt). */
export const RETRY_BACKOFF_MS = 500;

/**
 * Largest samples sent alongside their job's add instead of before it, bytes. Small samples land
 * long before a worker can ask for them (the add, a worker's wake-up and its moveToActive come
 * first), so the client's store no longer costs a round trip in a row; larger ones would often
 * make the worker wait for them, and their round trip is mostly the transfer anyway.
 */
export const INPUT_ALONGSIDE_MAX_BYTES = 256 * 1024;
/**
 * How long a worker waits for samples sent alongside their job that it finds missing, ms: they
 * may still be on their way (another connection, maybe another Redis). Past this the client
 * stopped or lost its blob store mid-submit, and the job fails with that reason.
 */
export const INPUT_ARRIVAL_WAIT_MS = 2000;
/**
 * What a worker leaves under a job's samples key when it gave up waiting for them (1 byte: never
 * a whole number of samples). The client stores its samples only where the key is empty (SET NX),
 * so exactly one of the two wins: samples that land first are run, a marker that lands first makes
 * the late samples bounce and the client's submit reject, and nothing runs a job whose submit failed.
 */
export const INPUT_GIVEN_UP = 'x';

/** A rate limit: at most `max` jobs started per `durationMs`, over every worker of the queue. */
export interface RateLimit {
  max: number;
  durationMs: number;
}

/** Checks a queue name or prefix: BullMQ joins keys with ':', so neither may contain one. */
export function nameOption(name: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.{}-]{1,100}$/.test(value))
    throw new TypeError(
      `${name} must be 1-100 characters of letters, digits, _ . - { } (no ':'), got ${shownValue(value)}`,
    );
  return value;
}

/** Checks a rate limit option. */
export function rateLimitOption(name: string, value: unknown): RateLimit | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError(`${name} must be { max, durationMs }, got ${shownValue(value)}`);
  knownKeys(value, ['max', 'durationMs'], name);
  const r = value as Partial<RateLimit>;
  // Both are required: a missing one would fall back to 0, which BullMQ reads as "no limit".
  if (r.max === undefined || r.durationMs === undefined)
    throw new TypeError(
      `${name} needs both max and durationMs, got { max: ${shownValue(r.max)}, durationMs: ${shownValue(r.durationMs)} }`,
    );
  return {
    max: integerOption(`${name}.max`, r.max, 0, 1, 1e9),
    durationMs: integerOption(`${name}.durationMs`, r.durationMs, 0, 1, 86_400_000),
  };
}

/** The Redis keys of a queue's blobs, beside BullMQ's own keys of the same queue. */
export class BlobKeys {
  readonly #base: string;

  constructor(prefix: string, name: string) {
    this.#base = `${prefix}:${name}:blob`;
  }

  /** A job's samples. */
  input(id: string): string {
    return `${this.#base}:in:${id}`;
  }

  /** A job's result as written by its `attempt`-th run (a retry never overwrites what an earlier run wrote). */
  result(id: string, attempt: number): string {
    return `${this.#base}:out:${id}:${attempt}`;
  }

  /** Marks a job cancelled (BullMQ removes a cancelled job; this says why it is gone). */
  cancelled(id: string): string {
    return `${this.#base}:cancelled:${id}`;
  }
}
