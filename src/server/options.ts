/**
 * What createServer() takes and returns: its options, its limits (each with a default) and the
 * running server's interface. Types only, and the default limits.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import type { JobEngineLike, JobResult } from '../engine/types.js';
import type { BatchFactories } from './batch.js';
import type { JobRetention } from './jobs.js';
import type { ServerMetrics } from './metrics.js';
import type { LoopSample } from './shedding/admission.js';
import type { JobAnswer, JobService, JobServiceContext, JobView, RemoteJobs } from './job-service.js';

export type { JobAnswer, JobView, RemoteJobs };

/**
 * Limits of one server; every one has a default (a limit left out or undefined takes it).
 * createServer() refuses an unknown key and a value outside the range each one gives.
 */
export interface ServerLimits {
  /** Largest binary request body (`application/octet-stream`), bytes (413 beyond): a positive integer, at most 2 GiB (2^31) on every Node line; default 256 MiB. */
  bodyLimitBytes: number;
  /**
   * Largest JSON request body, bytes (413 beyond, naming binary bodies); default 1 MiB. Parsing JSON
   * costs the event loop and the heap many times its size (a number is an object until it is copied
   * into a typed array): 1 MiB of numbers parses in a few ms, 16 MiB in 100-200 ms during which the
   * worker answers nothing, health included. So JSON carries small signals; large ones go binary,
   * which is read straight into pooled memory. A positive integer, at most 256 MiB; never above
   * `bodyLimitBytes` (it is lowered to it).
   */
  jsonBodyLimitBytes: number;
  /**
   * How long a request body may take to arrive once its headers are read, ms (408 beyond); default
   * 30000; a positive integer up to 2^31-1. Bounds a client that trickles its body, or announces
   * more than it sends.
   */
  bodyTimeoutMs: number;
  /**
   * Bytes of request bodies the server holds at once, all requests together, from their first byte
   * until their response is done (429 `bodies_full`, retryable, for the body whose chunk would pass
   * it); default 1 GiB. A positive integer; never below `bodyLimitBytes` (it is raised to it).
   */
  maxBodyBytesInFlight: number;
  /**
   * How long a request's headers may take to arrive once its connection has sent its first byte,
   * ms (408 beyond, answered within a second of it); default 10000; a positive integer up to
   * 2^31-1. Bounds a client that trickles its headers (Node's own bound is 60 s, found up to 30 s
   * late).
   */
  headersTimeoutMs: number;
  /** Most samples (B x N) in one job request (413 beyond): a positive integer; default 2^26. */
  maxSamples: number;
  /**
   * POST requests in progress beyond which new ones get 429 on their headers; default 4096. A request
   * counts from its headers (its body still arriving included) until its response is sent or its
   * connection closes, so this also bounds the request bodies held in memory. An integer in
   * 0..2^24; 0 refuses every POST (GETs are still answered).
   */
  maxPending: number;
  /** `timeout` of a request that gives none, ms in (0, 2^31-1]; default 30000. */
  defaultTimeoutMs: number;
  /** Largest `timeout` a request may ask for, ms in (0, 2^31-1] (the most a Node timer holds); default 600000. */
  maxTimeoutMs: number;
  /** `Retry-After` of a 429 (and of a 503 when the job queue is away), whole seconds (the header's form) in 0..86400; default 1. */
  retryAfterS: number;
  /**
   * Load shedding: while the event loop's mean delay exceeds this many milliseconds with the loop
   * busy and a flood of new requests arriving, the worker takes a shrinking share of new job and
   * batch requests (POSTs) and answers the rest 429 `overloaded` on their headers; once the loop
   * runs on time again the share climbs back (admission.ts). Health, metrics and job status always
   * answer.
   * When the loop itself is the bottleneck no queue fills, so `maxPending` alone never trips.
   * 0 turns it off; default 50.
   */
  maxEventLoopDelayMs: number;
  /**
   * Load shedding inside one event-loop turn: a POST whose headers are read once the turn reading
   * them has run this many milliseconds, with more than 16 new requests read in it, gets 429
   * `overloaded` at once (turn-budget.ts), while the worker is under a flood (adaptive admission
   * is shedding, or was within the last second). Before a flood is seen the same holds at
   * `maxEventLoopDelayMs` past 64 new requests in the turn, and such a refusal starts the flood's
   * shedding: a closed loop of up to 64 clients is served; a flood's first long turn is cut. It
   * bounds how long a flood holds the loop, and so how long anything, a refusal included, waits to
   * be read. With `maxEventLoopDelayMs` 0 it always applies. 0 turns it off; default 25.
   */
  maxTurnMs: number;
  /** Finished asynchronous jobs kept, and for how long (only the keys of JobRetention). */
  jobRetention: JobRetention;
  /** Items in one batch request (413 beyond): a positive integer; default 4096. */
  maxBatchItems: number;
  /** Floats per vector of a batch item (413 beyond): a positive integer; default 65536. */
  maxBatchDim: number;
  /** Distinct vector lengths served per batch kind (each has its own batcher): a positive integer; default 16. */
  maxBatchDims: number;
  /**
   * Result values a JSON answer may hold (406 beyond, naming `Accept: application/octet-stream`):
   * JSON text of a result takes ~20 bytes and the event loop's time per value; default 4,194,304
   * (about 80 MB of text). Binary answers have no such bound.
   */
  maxJsonResultValues: number;
  /**
   * Fusing small job requests (Triton's dynamic batcher): requests with the same parameters, sample
   * type and series length that arrive within this many ms of the first go to the engine as one job,
   * and each is answered with its own rows (server/fusion/). Each is validated alone first; deadlines
   * and cancellation stay per request. A number of ms in [0, 2^31-1]; 0 turns fusing off; default 1.
   */
  maxBatchDelayMs: number;
}

/** Default limits. */
export const DEFAULT_LIMITS: ServerLimits = {
  bodyLimitBytes: 256 * 1024 * 1024,
  jsonBodyLimitBytes: 1024 * 1024,
  bodyTimeoutMs: 30_000,
  maxBodyBytesInFlight: 2 ** 30,
  headersTimeoutMs: 10_000,
  maxSamples: 1 << 26,
  maxPending: 4096,
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 600_000,
  retryAfterS: 1,
  maxEventLoopDelayMs: 50,
  maxTurnMs: 25,
  jobRetention: { maxFinished: 1024, ttlMs: 300_000 },
  maxBatchItems: 4096,
  maxBatchDim: 65_536,
  maxBatchDims: 16,
  maxJsonResultValues: 1 << 22,
  maxBatchDelayMs: 1,
};

/** pino's options, as fastify's `logger` option takes them (`{ level: 'warn' }`). */
export type PinoOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>;

/** Options of createServer(). */
export interface CreateServerOptions {
  /** The job engine; absent or null: no GPU (live 200, ready 503, GPU work 503). */
  engine?: JobEngineLike | null | undefined;
  /** Why there is no engine (e.g. the CudaUnavailableError's message), for ready and 503 bodies. */
  unavailableReason?: string | undefined;
  /** Batchers of the `/v1/batch/*` endpoints, made per vector length on first use. */
  batchers?: BatchFactories | undefined;
  /** Limits over DEFAULT_LIMITS: any of them, and of `jobRetention` any of its keys (the others keep their defaults). */
  limits?:
    (Partial<Omit<ServerLimits, 'jobRetention'>> & { jobRetention?: Partial<JobRetention> | undefined }) | undefined;
  /** Logging: false (default), true (pino at info), pino's options (`{ level: 'warn' }`), or a logger of your own (pino or compatible: info, error, warn, debug, trace, fatal, child). */
  logger?: boolean | PinoOptions | FastifyBaseLogger | undefined;
  /** Flags of stages registered on the engine (registerStage names) that requests may ask for. */
  extraFlags?: readonly string[] | undefined;
  /** close() also closes the engine; default false (the caller owns it). */
  ownsEngine?: boolean | undefined;
  /** Prefix of asynchronous job ids (a cluster worker's id: routing within a cluster reads it), before a random part. */
  jobIdPrefix?: string | undefined;
  /**
   * Where `/v1/jobs` keeps its jobs; default: in this process (the engine and a bounded table). A
   * scale-out queue passes its own (`serve --redis`).
   */
  jobs?: ((context: JobServiceContext) => JobService) | undefined;
  /** `GET /v1/info` also shows process details (pid, Node version, memory, uptime); default false (they help an attacker more than a client). */
  exposeProcessInfo?: boolean | undefined;
  /** Extra fields for `GET /v1/info` (devices, versions); keep process internals out of it (see exposeProcessInfo). */
  info?: (() => Record<string, unknown>) | undefined;
  /** Labels on every metric series (e.g. `{ worker: '2' }`): Prometheus names (`[a-zA-Z_][a-zA-Z0-9_]*`, not `__...`), none the server's series use (`endpoint`, ...), string values. */
  metricsLabels?: Record<string, string> | undefined;
  /** In a cluster: whether another worker can serve; readiness is then true while one can. */
  peersReady?: (() => boolean) | undefined;
  /** Called once when `engine.lost` rejects (the worker then leaves and is replaced). */
  onLost?: ((error: unknown) => void) | undefined;
  /** Called with every look load shedding takes at the event loop (every 50 ms), for tracing; only while shedding is on (`maxEventLoopDelayMs` > 0). */
  onLoadSample?: ((sample: LoadSample) => void) | undefined;
  /** In a cluster: the exposition of every worker's metrics (undefined: serve this server's own). */
  clusterMetrics?: (() => Promise<string | undefined>) | undefined;
  /** In a cluster: GET/DELETE of a job id this server does not know ask the other workers here. */
  remoteJobs?: RemoteJobs | undefined;
}

/** One look at the event loop by load shedding, with what admission did since the previous one. */
export interface LoadSample extends LoopSample {
  /** The share of new work admitted after this look. */
  share: number;
  /** POSTs admitted, and refused as overload by the share, since the previous look. */
  admitted: number;
  refused: number;
  /** POSTs refused since the previous look because the loop turn reading them had run past `maxTurnMs`. */
  refusedInLongTurns: number;
  /** Requests in progress now. */
  pending: number;
}

/** A running server. */
export interface TscudaServer {
  /** A job of this server as GET shows it, for other workers of a cluster. */
  jobView(id: string): JobView | undefined;
  /** DELETE of a job of this server, for other workers of a cluster. */
  deleteJob(id: string): JobAnswer | undefined;
  /** The fastify instance: add routes, hooks, or `inject()` requests. */
  readonly app: FastifyInstance;
  readonly metrics: ServerMetrics;
  /** Whether GPU work can run now (engine present, context not lost, not closing). */
  readonly ready: boolean;
  /** Why not ready, or null. */
  readonly notReadyReason: string | null;
  /** Requests in progress (synchronous jobs and batch requests). */
  readonly pending: number;
  /**
   * Starts listening; resolves with the address. Port 0 picks a free port. `backlog` is the
   * kernel's queue of connections not yet accepted (default 4096, capped by net.core.somaxconn).
   */
  listen(options?: {
    port?: number | undefined;
    host?: string | undefined;
    backlog?: number | undefined;
  }): Promise<string>;
  /** Stops accepting, finishes every accepted request and job, then frees the batchers (and the engine when owned). */
  close(): Promise<void>;
}
