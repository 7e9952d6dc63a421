/**
 * runQueueWorker()'s options and their checks: every option, and every member of the engine the
 * worker uses, is checked here before anything connects, so a mistake is one error naming it and
 * leaves nothing running (nor a worker that fails every job it takes).
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { JobEngineLike } from '../engine/types.js';
import { integerOption, knownKeys, shownValue } from '../runtime/value-checks.js';
import { DEFAULT_BLOB_CONNECTIONS, MAX_BLOB_CONNECTIONS } from './blob-pool.js';
import { blobStoresOption } from './blob-stores.js';
import { checkConnection, type QueueConnection } from './connection.js';
import {
  DEFAULT_PREFIX,
  DEFAULT_QUEUE_NAME,
  MAX_ATTEMPTS,
  nameOption,
  rateLimitOption,
  type RateLimit,
} from './options.js';

/** How long a job's lock lasts without renewal by default, ms. */
export const DEFAULT_LOCK_DURATION_MS = 30_000;
/** How often a worker looks for stalled jobs by default, ms (at most the lock's duration). */
export const DEFAULT_STALLED_INTERVAL_MS = 2000;

/** Options of runQueueWorker(). */
export interface QueueWorkerOptions {
  /** Redis: a URL or ioredis options. */
  connection: QueueConnection;
  /** The engine the jobs run on (the caller owns it: close it after the worker). */
  engine: JobEngineLike;
  /** Queue name and key prefix, as the clients'. */
  name?: string | undefined;
  prefix?: string | undefined;
  /** This worker's name in results and logs; default `<host>:<pid>:<random>`. */
  workerName?: string | undefined;
  /** Jobs held at once; default 3 per engine lane (the lane holds 2 on the GPU by default, a third is being fetched or stored). */
  concurrency?: number | undefined;
  /** Most starts of one job, whatever it asked for (a cap for all jobs this worker takes); default 100. */
  maxAttempts?: number | undefined;
  /** How long a job's lock lasts without renewal, ms: a dead worker's job is retried after about this. Default 30000. */
  lockDurationMs?: number | undefined;
  /**
   * How often this worker looks for stalled jobs (any worker's: one check per interval runs on
   * the whole queue), ms; default 2000 (or `lockDurationMs` when shorter). A job whose worker
   * died is started again within about `lockDurationMs` + 2 intervals.
   */
  stalledIntervalMs?: number | undefined;
  /** This worker's own cap on a result's bytes (the job's limit applies too); default 512 MiB. */
  maxResultBytes?: number | undefined;
  /** At most `max` jobs started per `durationMs` by this worker (the queue-wide limit is JobQueue's `rateLimit`). */
  rateLimit?: RateLimit | undefined;
  /** A line per event worth logging (start, retry, lost context, stop) and a summary every `logIntervalMs`; default none. A log that throws is ignored. */
  log?: ((line: string) => void) | undefined;
  /** Summary line period, ms; default 10000 (0: none). */
  logIntervalMs?: number | undefined;
  /** Connections carrying samples and results, per blob store (each value on the least busy one); default 4. */
  blobConnections?: number | undefined;
  /** Redis servers that hold the samples and results, as the clients list them (JobQueue's `blobStores`); default the queue's own Redis. */
  blobStores?: readonly QueueConnection[] | undefined;
}

/** Every key of QueueWorkerOptions, for the refusal of unknown ones. */
const WORKER_OPTION_KEYS = [
  'connection',
  'engine',
  'name',
  'prefix',
  'workerName',
  'concurrency',
  'maxAttempts',
  'lockDurationMs',
  'stalledIntervalMs',
  'maxResultBytes',
  'rateLimit',
  'log',
  'logIntervalMs',
  'blobConnections',
  'blobStores',
] as const satisfies readonly (keyof QueueWorkerOptions)[];
// A key added to the interface but not to the list fails to compile here.
const allListed: Exclude<keyof QueueWorkerOptions, (typeof WORKER_OPTION_KEYS)[number]> extends never ? true : never =
  true;
void allListed;

/** QueueWorkerOptions checked, with their defaults. */
export interface ResolvedWorkerOptions {
  connection: QueueConnection;
  engine: JobEngineLike;
  name: string;
  prefix: string;
  workerName: string;
  concurrency: number;
  maxAttempts: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxResultBytes: number;
  rateLimit: RateLimit | undefined;
  log: ((line: string) => void) | undefined;
  logIntervalMs: number;
  blobConnections: number;
  blobStores: QueueConnection[];
}

/**
 * Checks the members of `engine` the worker uses (a TypeError naming the first one that is wrong):
 * a missing one would otherwise fail every job it takes, or the start after it has connected.
 * `laneCount` only when it sets the default concurrency.
 */
function checkEngine(engine: unknown, needsLaneCount: boolean): asserts engine is JobEngineLike {
  const kind = '(engine must be a JobEngine or a JobEngineLike)';
  if (typeof engine !== 'object' || engine === null)
    throw new TypeError(`engine must be a JobEngine or a JobEngineLike, got ${shownValue(engine)}`);
  const e = engine as Record<string, unknown>;
  if (typeof e.submit !== 'function')
    throw new TypeError(`engine.submit must be a function ${kind}, got ${shownValue(e.submit)}`);
  if (typeof (e.lost as { catch?: unknown } | null | undefined)?.catch !== 'function')
    throw new TypeError(`engine.lost must be a Promise ${kind}, got ${shownValue(e.lost)}`);
  // The layout of the results the engine writes in the worker's memory follows its precision.
  if (e.precision !== 'f32' && e.precision !== 'f64')
    throw new TypeError(`engine.precision must be 'f32' or 'f64' ${kind}, got ${shownValue(e.precision)}`);
  if (needsLaneCount && (typeof e.laneCount !== 'number' || !Number.isSafeInteger(e.laneCount) || e.laneCount < 1))
    throw new TypeError(
      `engine.laneCount must be a positive integer ${kind} (or give concurrency), got ${shownValue(e.laneCount)}`,
    );
  // Named in the worker's first log line.
  if (typeof e.label !== 'string')
    throw new TypeError(`engine.label must be a string ${kind}, got ${shownValue(e.label)}`);
  if (!Array.isArray(e.devices))
    throw new TypeError(`engine.devices must be an array of device ordinals ${kind}, got ${shownValue(e.devices)}`);
  // Optional: the worker's memory comes from the engine's pinned arrays when it lends them (both, or neither is used).
  for (const name of ['hostBuffer', 'releaseHostBuffer'])
    if (e[name] !== undefined && typeof e[name] !== 'function')
      throw new TypeError(`engine.${name} must be a function when present, got ${shownValue(e[name])}`);
}

/** A worker's name (in results and logs), as given or undefined; a TypeError naming `option` otherwise (the CLI's --name checks it by this rule too). */
export function checkWorkerName(option: string, value: unknown): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 200))
    throw new TypeError(`${option} must be a string of 1-200 characters, got ${shownValue(value)}`);
  return value;
}

/** Checks runQueueWorker()'s options (a TypeError or RangeError naming the option) and fills in the defaults. */
export function resolveWorkerOptions(options: unknown): ResolvedWorkerOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(
      `runQueueWorker options must be an object with a connection and an engine, got ${shownValue(options)}`,
    );
  knownKeys(options, WORKER_OPTION_KEYS, 'runQueueWorker options');
  const o = options as QueueWorkerOptions;
  const connection = checkConnection(o.connection, 'connection');
  const engine: unknown = o.engine;
  checkEngine(engine, o.concurrency === undefined);
  const givenName = checkWorkerName('workerName', o.workerName);
  const lockDurationMs = integerOption('lockDurationMs', o.lockDurationMs, DEFAULT_LOCK_DURATION_MS, 100, 3_600_000);
  const log: unknown = o.log;
  if (log !== undefined && typeof log !== 'function')
    throw new TypeError(`log must be a function that takes a line (e.g. console.log), got ${shownValue(log)}`);
  return {
    connection,
    engine,
    name: nameOption('name', o.name, DEFAULT_QUEUE_NAME),
    prefix: nameOption('prefix', o.prefix, DEFAULT_PREFIX),
    workerName: givenName ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    // The default is read only when none is given: an engine without laneCount is fine then.
    concurrency: integerOption(
      'concurrency',
      o.concurrency,
      o.concurrency === undefined ? Math.max(1, engine.laneCount * 3) : 1,
      1,
      4096,
    ),
    maxAttempts: integerOption('maxAttempts', o.maxAttempts, MAX_ATTEMPTS, 1, MAX_ATTEMPTS),
    lockDurationMs,
    stalledIntervalMs: integerOption(
      'stalledIntervalMs',
      o.stalledIntervalMs,
      Math.min(DEFAULT_STALLED_INTERVAL_MS, lockDurationMs),
      100,
      3_600_000,
    ),
    maxResultBytes: integerOption('maxResultBytes', o.maxResultBytes, 512 * 2 ** 20, 1, 512 * 2 ** 20),
    rateLimit: rateLimitOption('rateLimit', o.rateLimit),
    log: log as ((line: string) => void) | undefined,
    logIntervalMs: integerOption('logIntervalMs', o.logIntervalMs, 10_000, 0, 86_400_000),
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
