/**
 * The messages between the supervising primary and its worker processes (node:cluster IPC),
 * and the configuration a worker receives in its environment. CUDA-free.
 */

/** What every worker of `tscuda serve` is configured with (JSON in TSCUDA_SERVE_CONFIG). */
export interface WorkerConfig {
  port: number;
  host: string;
  /** Lanes (streams) per device of each worker's engine. */
  lanes?: number | undefined;
  /** Queued jobs per worker beyond which requests get 429. */
  maxQueued?: number | undefined;
  precision?: 'f32' | 'f64' | undefined;
  /** Device ordinals the workers are spread over (worker slot i takes devices[i % length]); default [0]. */
  devices?: number[] | undefined;
  /** This worker's device (set by the supervisor from `devices`). */
  device?: number | undefined;
  /** Limits of createServer. */
  maxPending?: number | undefined;
  maxEventLoopDelayMs?: number | undefined;
  maxTurnMs?: number | undefined;
  defaultTimeoutMs?: number | undefined;
  bodyLimitBytes?: number | undefined;
  /** Batch endpoints: items per batch and how long a partial batch waits. */
  batchMaxSize?: number | undefined;
  batchMaxWaitMs?: number | undefined;
  /** Log requests (fastify's logger). */
  log?: boolean | undefined;
  /** A standby worker: builds its engine, then waits for `activate` before it listens. */
  standby?: boolean | undefined;
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

/** Worker -> primary. */
export type WorkerMessage =
  | MetricsQuery
  | { tscuda: 'listening'; ready: boolean; reason: string | null; address: string }
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
  | MetricsAnswer
  | JobQuery
  | JobQueryAnswer;

/** True for an object carrying the `tscuda` tag of these protocols. */
export function isProtocolMessage(m: unknown): m is { tscuda: string } {
  return typeof m === 'object' && m !== null && typeof (m as { tscuda?: unknown }).tscuda === 'string';
}
