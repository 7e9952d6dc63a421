/**
 * The messages between the supervising primary and its worker processes (node:cluster IPC),
 * the configuration a worker receives in its environment, and the exit codes of both. CUDA-free.
 */
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Precision } from '../../runtime/fft/precision.js';
import type { QueueFrontLimits } from '../../queue/job-queue-options.js';

/**
 * Exit codes of `tscuda serve` and of its workers: 0 the drain completed (every accepted request
 * answered), 1 a failure (a worker could not start, or kept failing to start), 2 bad usage, 3 the
 * drain was cut (its deadline passed, or a second signal came) with requests unfinished.
 */
export const EXIT_CODES = { drained: 0, failed: 1, usage: 2, drainCut: 3 } as const;

/** Default bound of a graceful stop, ms: accepted requests get this long to finish before their connections are cut. */
export const DEFAULT_DRAIN_MS = 10_000;

/** A worker's metrics as prom-client's getMetricsAsJSON() gives them (the primary aggregates them). */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** What every worker of `tscuda serve` is configured with (JSON in TSCUDA_SERVE_CONFIG). */
export interface WorkerConfig {
  port: number;
  host: string;
  /** Lanes (streams) per device of each worker's engine. */
  lanes?: number | undefined;
  /** Queued jobs per worker beyond which requests get 429. */
  maxQueued?: number | undefined;
  precision?: Precision | undefined;
  /**
   * The devices of this process's engine, resolved by the one placement rule when the engine is
   * built: with `--workers 0` the --devices selection (every GPU by default; one engine over all of
   * them); a supervised worker gets its one device, devices[i % n] (the supervisor sets it). Left
   * out, JobEngine's own placement default applies.
   */
  devices?: 'all' | number[] | undefined;
  /** Limits of createServer (serverOptions() maps them). */
  maxPending?: number | undefined;
  maxEventLoopDelayMs?: number | undefined;
  maxTurnMs?: number | undefined;
  defaultTimeoutMs?: number | undefined;
  bodyLimitBytes?: number | undefined;
  jsonBodyLimitBytes?: number | undefined;
  bodyTimeoutMs?: number | undefined;
  /** Fusing small job requests: the window in ms (0: off). */
  maxBatchDelayMs?: number | undefined;
  /** Batch endpoints: items per batch and how long a partial batch waits. */
  batchMaxSize?: number | undefined;
  batchMaxWaitMs?: number | undefined;
  /** Log requests (fastify's logger). */
  log?: boolean | undefined;
  /** A standby worker: builds its engine, then waits for `activate` before it listens. */
  standby?: boolean | undefined;
  /** Bound of a graceful stop (drain), ms; default DEFAULT_DRAIN_MS. */
  drainMs?: number | undefined;
  /** `--redis URL`: `/v1/jobs` goes through this Redis-backed job queue (tscuda worker processes run the jobs). */
  redis?: string | undefined;
  /** `--queue NAME`: the queue's name (the workers' must match); default the queue's. */
  queueName?: string | undefined;
  /** `--prefix P`: the queue's Redis key prefix (the workers' must match); default the queue's. */
  queuePrefix?: string | undefined;
  /** `--blob-redis URL` (repeated): the Redis servers that hold the queue's samples and results (the workers' must match); default the `redis` one. */
  blobRedis?: string[] | undefined;
  /** `--command-timeout`, `--max-waiting-jobs`, `--max-waiting-mb`, `--input-ttl`: the queue front's bounds on Redis; default the queue's. */
  queueLimits?: QueueFrontLimits | undefined;
}

/** The environment variable holding the WorkerConfig. */
export const CONFIG_ENV = 'TSCUDA_SERVE_CONFIG';

/** A job lookup forwarded between workers (a GET or DELETE of a job another worker runs). */
export interface JobQuery {
  tscuda: 'job-query';
  requestId: number;
  op: 'get' | 'delete';
  id: string;
  /** The cluster worker id that owns the job (from its `w<id>-` prefix). */
  target: number;
  /** Set by the primary: the worker that asked. */
  replyTo?: number | undefined;
}

/** The owner's answer (a JobView for get, a JobAnswer for delete, null when unknown). */
export interface JobQueryAnswer {
  tscuda: 'job-answer';
  requestId: number;
  replyTo?: number | undefined;
  answer: unknown;
}

/** A worker asks for the metrics of every worker (its /metrics answers for the whole service). */
export interface MetricsQuery {
  tscuda: 'metrics-query';
  requestId: number;
}

/** The primary's answer: every worker's series, aggregated by prom-client (null when it failed). */
export interface MetricsAnswer {
  tscuda: 'metrics-answer';
  requestId: number;
  text: string | null;
}

/** The primary collects a worker's own series (to aggregate them with its peers' and its predecessors'). */
export interface MetricsCollect {
  tscuda: 'metrics-collect';
  requestId: number;
}

/** A worker's answer to metrics-collect (null when reading its registry failed). */
export interface MetricsJson {
  tscuda: 'metrics-json';
  requestId: number;
  metrics: MetricsSnapshot | null;
}

/** Worker -> primary. */
export type WorkerMessage =
  | MetricsQuery
  | MetricsJson
  /** The worker serves: `address` is the real one (the port the system picked for port 0). */
  | { tscuda: 'listening'; ready: boolean; reason: string | null; address: string }
  /** The worker cannot start (its socket or its engine): one line naming the problem; it exits 1 next. */
  | { tscuda: 'start-failed'; reason: string }
  /** A leaving worker's last counters, sent after its drain, so the service's counters never go back. */
  | { tscuda: 'final-metrics'; metrics: MetricsSnapshot }
  | { tscuda: 'lost'; reason: string }
  /** A standby worker has built its engine and waits for `activate`. */
  | { tscuda: 'standby-ready' }
  | JobQuery
  | JobQueryAnswer;

/** Primary -> worker. */
export type PrimaryMessage =
  /** How many other workers can serve now (a leaving worker then still reports ready). */
  | { tscuda: 'peers'; ready: number }
  /** Your replacement is serving: stop accepting, finish, exit. */
  | { tscuda: 'retire' }
  /** A standby worker takes a slot: listen now. */
  | { tscuda: 'activate' }
  /** Graceful shutdown of the whole service. */
  | { tscuda: 'shutdown' }
  /** Cut the drain now (a second signal): close every connection, exit with EXIT_CODES.drainCut. */
  | { tscuda: 'cut' }
  | MetricsCollect
  | MetricsAnswer
  | JobQuery
  | JobQueryAnswer;

/** True for an object carrying the `tscuda` tag of these protocols. */
export function isProtocolMessage(m: unknown): m is { tscuda: string } {
  return typeof m === 'object' && m !== null && typeof (m as { tscuda?: unknown }).tscuda === 'string';
}
