/**
 * createServer(): the HTTP front of a job engine and of the small-item batchers, for a user to
 * mount in their own program (`tscuda serve` runs one per worker process).
 *
 * fastify because it validates bodies with JSON schemas before a handler runs, answers
 * `inject()` without a socket (every route is tested in CI without a GPU), and is among the
 * fastest Node.js frameworks; prom-client because it is the Prometheus client Node.js users
 * already scrape.
 *
 * Every accepted request gets an answer: a result, or an error naming why (429 full, 504
 * timeout, 503 when the GPU context is lost or the server is closing). close() stops
 * accepting and resolves once every accepted request and job has settled.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { BuiltinJobFlag, Job, JobEngineLike, JobResult, JobSpec } from '../engine/types.js';
import { AdmissionController, type LoopSample } from './admission.js';
import { TurnBudget, turnLimit } from './turn-budget.js';
import { BATCH_KINDS, parseBatchItems, type BatchFactories, type BatchItems, type BatchKind, type BatchSubmitter } from './batch.js';
import { BodyPool, readPooledBody, type BodyAllocator } from './body-pool.js';
import { decodeBinarySignal, decodeJsonSignal, encodeBinaryResultParts, encodeJsonResult, responseFormat, type ResponseFormat } from './codec.js';
import { HttpError, invalidField, toHttpError, type ErrorBody, type FailureReason } from './errors.js';
import { JobStore, type JobRecord, type JobRetention } from './jobs.js';
import { ServerMetrics } from './metrics.js';
import { headerParams, paramsFromStrings, parseJobParams, sampleDtype, type ParamContext, type RawParams } from './params.js';
import { BATCH_BODY_SCHEMA, JOB_BODY_SCHEMA, JOB_ID_PARAMS } from './schemas.js';

/** Limits of one server; every one has a default. */
export interface ServerLimits {
  /** Largest request body, bytes (413 beyond); default 256 MiB. */
  bodyLimitBytes: number;
  /** Most samples (B x N) in one job request (413 beyond); default 2^26. */
  maxSamples: number;
  /**
   * POST requests in progress beyond which new ones get 429 on their headers; default 4096. A request
   * counts from its headers (its body still arriving included) until its response is sent or its
   * connection closes, so this also bounds the request bodies held in memory.
   */
  maxPending: number;
  /** `timeout` of a request that gives none, ms; default 30000. */
  defaultTimeoutMs: number;
  /** Largest `timeout` a request may ask for, ms; default 600000. */
  maxTimeoutMs: number;
  /** `Retry-After` of a 429, seconds; default 1. */
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
  /** Finished asynchronous jobs kept, and for how long. */
  jobRetention: JobRetention;
  /** Items in one batch request (413 beyond); default 4096. */
  maxBatchItems: number;
  /** Floats per vector of a batch item (413 beyond); default 65536. */
  maxBatchDim: number;
  /** Distinct vector lengths served per batch kind (each has its own batcher); default 16. */
  maxBatchDims: number;
}

/** Default limits. */
export const DEFAULT_LIMITS: ServerLimits = {
  bodyLimitBytes: 256 * 1024 * 1024,
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
};

/** Options of createServer(). */
export interface CreateServerOptions {
  /** The job engine; absent or null: no GPU (live 200, ready 503, GPU work 503). */
  engine?: JobEngineLike | null | undefined;
  /** Why there is no engine (e.g. the CudaUnavailableError's message), for ready and 503 bodies. */
  unavailableReason?: string | undefined;
  /** Batchers of the `/v1/batch/*` endpoints, made per vector length on first use. */
  batchers?: BatchFactories | undefined;
  limits?: Partial<ServerLimits> | undefined;
  /** fastify's logger option: false (default), true, or a pino-compatible logger. */
  logger?: boolean | FastifyBaseLogger | undefined;
  /** Flags of stages registered on the engine (registerStage names) that requests may ask for. */
  extraFlags?: readonly string[] | undefined;
  /** close() also closes the engine; default false (the caller owns it). */
  ownsEngine?: boolean | undefined;
  /** Prefix of asynchronous job ids (a cluster worker's id), so ids stay unique across workers. */
  jobIdPrefix?: string | undefined;
  /** Extra fields for `GET /v1/info` (devices, versions). */
  info?: (() => Record<string, unknown>) | undefined;
  /** Labels on every metric series (e.g. `{ worker: '2' }`). */
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

/** An asynchronous job as `GET /v1/jobs/:id` shows it. */
export interface JobView {
  id: string;
  status: string;
  result?: JobResult | undefined;
  error?: ErrorBody['error'] | undefined;
}

/** A response computed for another process (DELETE forwarded within a cluster). */
export interface JobAnswer {
  statusCode: number;
  body: Record<string, unknown>;
}

/** Where jobs of other workers are looked up (the cluster's IPC); undefined when unknown there too. */
export interface RemoteJobs {
  get(id: string): Promise<JobView | undefined>;
  delete(id: string): Promise<JobAnswer | undefined>;
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
  listen(options?: { port?: number | undefined; host?: string | undefined; backlog?: number | undefined }): Promise<string>;
  /** Stops accepting, finishes every accepted request and job, then frees the batchers (and the engine when owned). */
  close(): Promise<void>;
}

type JobEndpoint = BuiltinJobFlag;

/**
 * The kernel's queue of connections not yet accepted. Node's default is 511: a burst of more
 * clients than that overflows it, and the excess wait on TCP retries where no 429 can reach
 * them. 4096 is Linux's default cap (net.core.somaxconn).
 */
const LISTEN_BACKLOG = 4096;
/** Binary answers of at least this many bytes are written part by part instead of joined. */
const STREAM_RESULT_BYTES = 1 << 20;
/** Bytes of free request-body buffers kept for reuse (bodies beyond it are left to the garbage collector). */
const BODY_POOL_BYTES = 256 * 2 ** 20;

/** How often load shedding looks at the event loop, ms: short, so the admitted share follows the load within a few requests' time. */
const LOAD_SAMPLE_INTERVAL_MS = 50;
/** The refusal cache's key of `too_many_requests` (the `overloaded` ones are keyed 0..100 by the admitted percent). */
const FULL = -1;
/** The refusal cache's keys of the 429s for a request read in a loop turn past its limit: LONG_TURN - the limit in ms. */
const LONG_TURN = -2;
/** Resolution of the event-loop delay monitor, ms (its samples are late by at least this). */
const LOOP_DELAY_RESOLUTION_MS = 10;

interface InFlight {
  reject(error: HttpError): void;
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function queryStrings(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (query === null || typeof query !== 'object') return out;
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) {
    if (typeof v !== 'string') throw invalidField(k, 'is given more than once');
    out[k] = v;
  }
  return out;
}

function validationField(error: { instancePath?: string | undefined; params?: Record<string, unknown> | undefined }, context: string | undefined): string {
  const path = (error.instancePath ?? '')
    .split('/')
    .filter((p) => p !== '')
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('');
  const extra = error.params?.additionalProperty ?? error.params?.missingProperty;
  const name = typeof extra === 'string' ? (path === '' ? extra : `${path}.${extra}`) : path;
  return name === '' ? (context ?? 'body') : name;
}

/**
 * Pooled body memory from the engine's pinned arrays (hostBuffer), in its precision: a job reads a
 * body of that type, and writes its filtered wave, with no host copy. Plain memory when the
 * engine lends none, or can no longer (closed): arrays stay valid memory either way.
 */
function pinnedAllocator(engine: JobEngineLike): BodyAllocator | undefined {
  const lend = engine.hostBuffer?.bind(engine);
  const giveBack = engine.releaseHostBuffer?.bind(engine);
  if (!lend || !giveBack) return undefined;
  const size = engine.precision === 'f32' ? 4 : 8;
  const lent = new WeakMap<Buffer, Float32Array | Float64Array>();
  return {
    allocate(bytes: number): Buffer {
      let array: Float32Array | Float64Array;
      try {
        array = engine.precision === 'f32' ? lend('f32', bytes / size) : lend('f64', bytes / size);
      } catch {
        return Buffer.allocUnsafeSlow(bytes);
      }
      const buffer = Buffer.from(array.buffer, array.byteOffset, array.byteLength);
      lent.set(buffer, array);
      return buffer;
    },
    free(buffer: Buffer): void {
      const array = lent.get(buffer);
      if (array) giveBack(array);
    },
  };
}

/** The process's memory for /v1/info: resident set, the JavaScript heap in use, and memory outside it held by JavaScript objects (Buffers, typed arrays). */
function memoryFigures(): { rssBytes: number; heapUsedBytes: number; externalBytes: number } {
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed, externalBytes: m.external };
}

/** Builds the server; call `listen()` to serve on a socket, or use `app.inject()`. */
export function createServer(options: CreateServerOptions = {}): TscudaServer {
  const limits: ServerLimits = { ...DEFAULT_LIMITS, ...options.limits, jobRetention: { ...DEFAULT_LIMITS.jobRetention, ...options.limits?.jobRetention } };
  for (const name of ['maxEventLoopDelayMs', 'maxTurnMs'] as const) {
    const v = limits[name];
    if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw new RangeError(`limits.${name} must be a finite number of ms >= 0 (0 turns it off), got ${String(v)}`);
  }
  const engine = options.engine ?? null;
  const paramContext: ParamContext = { extraFlags: options.extraFlags ?? [], maxTimeoutMs: limits.maxTimeoutMs, defaultTimeoutMs: limits.defaultTimeoutMs };
  const jobs = new JobStore(limits.jobRetention);
  const inFlight = new Set<InFlight>();
  const handlers = new Set<Promise<unknown>>();
  const batchers = new Map<string, { kind: BatchKind; dim: number; submitter: BatchSubmitter<unknown> }>();
  const failureReasons = new WeakMap<FastifyRequest, FailureReason>();
  const version = packageVersion();
  const startedAt = Date.now();
  let lostError: unknown = null;
  let closing: Promise<void> | null = null;
  let pending = 0;
  /**
   * The 429s, made once each and kept with their JSON: under a flood most answers are refusals,
   * and a new Error (with its stack trace) and a serialization per refusal cost the loop a
   * measurable share of what refusing is meant to save.
   */
  const refusals = new Map<number, { error: HttpError; json: string }>();
  /** Keyed by a number (no key string built per refusal): the admitted percent, or FULL. */
  const refusal = (key: number, make: () => HttpError): { error: HttpError; json: string } => {
    let r = refusals.get(key);
    if (r === undefined) {
      const error = make();
      r = { error, json: JSON.stringify(error.toJSON()) };
      refusals.set(key, r);
    }
    return r;
  };
  /** Triton's REJECT: the requests in progress are at the limit. */
  const tooManyRequests = (): { error: HttpError; json: string } =>
    refusal(
      FULL,
      () =>
        new HttpError(429, 'too_many_requests', `${limits.maxPending} requests in progress (the limit); retry after ${limits.retryAfterS} s`, {
          retryable: true,
          retryAfterS: limits.retryAfterS,
        }),
    );
  /** Load shedding's 429: the event loop is the bottleneck; `share` of new work is taken now. */
  const overloaded = (share: number): { error: HttpError; json: string } => {
    const percent = Math.round(share * 100);
    return refusal(
      percent,
      () =>
        new HttpError(
          429,
          'overloaded',
          `the server is overloaded: its event loop runs behind (limit ${limits.maxEventLoopDelayMs} ms), so it takes ${percent} % of new work; retry after ${limits.retryAfterS} s`,
          { retryable: true, retryAfterS: limits.retryAfterS },
        ),
    );
  };

  /** The turn budget's 429: the loop turn reading this request has run past `ms` (keyed below every other refusal). */
  const longTurn = (ms: number): { error: HttpError; json: string } =>
    refusal(
      LONG_TURN - ms,
      () =>
        new HttpError(
          429,
          'overloaded',
          `the server is overloaded: its event loop had spent over ${ms} ms of one turn reading new requests (the limit) when this one came; retry after ${limits.retryAfterS} s`,
          { retryable: true, retryAfterS: limits.retryAfterS },
        ),
    );

  const notReadyReason = (): string | null => {
    if (closing !== null) return 'the server is shutting down';
    if (engine === null) return options.unavailableReason ?? 'no GPU engine (no CUDA device or driver)';
    if (lostError !== null) return `the GPU context was lost (${lostError instanceof Error ? lostError.message : String(lostError)}); this worker is being replaced`;
    return null;
  };

  /** POSTs that reached admission since the last look at the loop. */
  let arrivals = 0;
  /** POSTs refused by the turn budget since the last look. */
  let refusedInLongTurns = 0;
  const turnBudget = limits.maxTurnMs > 0 ? new TurnBudget(limits.maxTurnMs) : null;
  /** The turn budget's limits under a flood and before one (turnLimit), made once. */
  const floodTurn = turnLimit(limits, true);
  const quietTurn = turnLimit(limits, false);
  const admission = limits.maxEventLoopDelayMs > 0 ? new AdmissionController({ targetLagMs: limits.maxEventLoopDelayMs }) : null;
  /** Stops the sampler of load shedding (close()). */
  let stopSampling = (): void => undefined;
  if (admission !== null) {
    const delay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
    delay.enable();
    let utilization = performance.eventLoopUtilization();
    let last = performance.now();
    const sampler = setInterval(() => {
      const now = performance.now();
      const used = performance.eventLoopUtilization();
      // The monitor's mean, and this timer's own lateness: one iteration longer than the interval
      // leaves the monitor few samples, but shows here in full.
      const monitored = delay.count > 0 ? delay.mean / 1e6 - LOOP_DELAY_RESOLUTION_MS : 0;
      const sample = {
        lagMs: Math.max(0, monitored, now - last - LOAD_SAMPLE_INTERVAL_MS),
        utilization: performance.eventLoopUtilization(used, utilization).utilization,
        arrivals,
        refusedInLongTurns,
      } satisfies LoopSample;
      arrivals = 0;
      delay.reset();
      utilization = used;
      last = now;
      admission.update(sample);
      const counts = admission.takeCounts();
      refusedInLongTurns = 0;
      if (options.onLoadSample) {
        // A mistake in the caller's tracing must not take the server down from inside a timer.
        try {
          options.onLoadSample({ ...sample, share: admission.share, ...counts, pending });
        } catch (error) {
          process.emitWarning(`createServer onLoadSample threw: ${error instanceof Error ? error.message : String(error)}`, { code: 'TSCUDA_LOAD_SAMPLE_FAILED' });
        }
      }
    }, LOAD_SAMPLE_INTERVAL_MS);
    sampler.unref();
    stopSampling = () => {
      clearInterval(sampler);
      delay.disable();
    };
  }

  const metrics = new ServerMetrics(
    {
      engineStats: () => {
        if (engine === null || lostError !== null) return null;
        try {
          return engine.stats();
        } catch {
          return null;
        }
      },
      batcherStats: () =>
        [...batchers.values()].map((b) => {
          const m = b.submitter.metrics;
          return { kind: b.kind, dim: b.dim, batches: m?.batches ?? 0, items: m?.items ?? 0, fillRate: m?.fillRate ?? 0, queued: m?.queued ?? 0 };
        }),
      ready: () => notReadyReason() === null,
      admissionShare: () => admission?.share ?? 1,
    },
    options.metricsLabels,
  );

  if (engine !== null) {
    engine.lost.catch((error: unknown) => {
      if (lostError !== null) return;
      lostError = error ?? new Error('context lost');
      const answer = toHttpError(Object.assign(new Error(String((error as Error | undefined)?.message ?? error)), { sticky: true }), limits.retryAfterS);
      for (const f of [...inFlight]) f.reject(answer);
      for (const r of jobs.unfinished) {
        jobs.finish(r, { error: answer, status: 'error' });
      }
      options.onLost?.(error);
    });
  }

  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: limits.bodyLimitBytes,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  });

  // Binary bodies are read into pooled Buffers (body-pool.ts says why); each goes back once the
  // job reading it has settled (handOverBody), or once the response is sent when no job took it.
  const bodies = new BodyPool(BODY_POOL_BYTES, engine ? pinnedAllocator(engine) : undefined);
  const pooledBodies = new WeakMap<FastifyRequest, Buffer>();
  app.addContentTypeParser('application/octet-stream', (request, payload, done) => {
    readPooledBody(payload, request.headers['content-length'], limits.bodyLimitBytes, bodies).then(
      (body) => {
        pooledBodies.set(request, body);
        done(null, body);
      },
      (error: Error) => done(error, undefined),
    );
  });
  /**
   * A pooled array for the filtered wave of a synchronous stft job (its largest result: the size of
   * its input), so the response's biggest part is not fresh memory each time.
   */
  const pooledFiltered = (spec: JobSpec, precision: 'f32' | 'f64'): { buffer: Buffer; array: Float32Array | Float64Array } | undefined => {
    if (!spec.flags.includes('stft') || spec.into?.filtered !== undefined) return undefined;
    const n = spec.data.length;
    const buffer = bodies.take(n * (precision === 'f32' ? 4 : 8));
    const array = precision === 'f32' ? new Float32Array(buffer.buffer, buffer.byteOffset, n) : new Float64Array(buffer.buffer, buffer.byteOffset, n);
    return { buffer, array };
  };
  /** The job now reads the request's pooled body: it goes back to the pool when the job settles. */
  const handOverBody = (request: FastifyRequest, job: Job): void => {
    const body = pooledBodies.get(request);
    if (body === undefined) return;
    pooledBodies.delete(request);
    const release = (): void => bodies.release(body);
    job.result.then(release, release);
  };

  const fail = (request: FastifyRequest, reply: FastifyReply, error: HttpError): FastifyReply => {
    failureReasons.set(request, error.reason);
    if (error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS));
    if (error.statusCode === 503 && error.code === 'gpu_lost') reply.header('connection', 'close');
    return reply.code(error.statusCode).type('application/json').send(error.toJSON());
  };

  /**
   * Answers a refusal (a cached 429) on the headers, straight on the socket: the reply is hijacked,
   * so none of fastify's send path and hooks run for it (a flood is mostly refusals; this is the
   * path the loop must be fastest on). onResponse still counts it in the metrics.
   */
  const refuse = (request: FastifyRequest, reply: FastifyReply, r: { error: HttpError; json: string }): void => {
    failureReasons.set(request, r.error.reason);
    reply.hijack();
    reply.raw.writeHead(429, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(r.json), 'retry-after': String(limits.retryAfterS) });
    reply.raw.end(r.json);
  };

  // Admission on the headers: a POST counts as in progress from here until its response is done
  // (or its connection goes), so a full server refuses new work before reading a body it would
  // only drop, and the bodies being read count against the limit: under an open-loop flood the
  // requests in progress, and the memory their bodies hold, stay bounded by maxPending.
  /** Each admitted request's response, with its endpoint (the pending gauge's label). */
  const admitted = new WeakMap<ServerResponse, string>();
  /** One listener for every admitted response (no closure per request): 'finish', or 'close' when the connection goes first. */
  function leave(this: ServerResponse): void {
    const endpoint = admitted.get(this);
    if (endpoint === undefined) return;
    admitted.delete(this);
    pending--;
    metrics.pending.dec({ endpoint });
    if (pending === 0) onIdle?.();
  }
  /** Set while close() waits for the last admitted request's response. */
  let onIdle: (() => void) | undefined;
  app.setErrorHandler(
    (
      error: Error & {
        statusCode?: number | undefined;
        code?: string | undefined;
        validation?: { instancePath?: string | undefined; params?: Record<string, unknown> | undefined; message?: string | undefined }[] | undefined;
        validationContext?: string | undefined;
      },
      request,
      reply,
    ) => {
      let answer: HttpError;
      if (error instanceof HttpError) answer = error;
      else if (error.validation !== undefined && error.validation.length > 0) {
        const first = error.validation[0]!;
        const field = validationField(first, error.validationContext);
        const unknown = first.params?.additionalProperty !== undefined;
        answer = new HttpError(400, unknown ? 'unknown_field' : 'invalid_field', `${field}: ${unknown ? 'unknown parameter' : (first.message ?? 'is invalid')}`, { field });
      } else if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        answer = new HttpError(
          415,
          'unsupported_media_type',
          `content-type: ${String(request.headers['content-type'])} is not accepted; send application/json or application/octet-stream`,
          { field: 'content-type' },
        );
      } else if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        answer = new HttpError(413, 'body_too_large', `body: larger than the limit of ${limits.bodyLimitBytes} bytes`, { field: 'body' });
      } else if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
        answer = new HttpError(400, 'malformed_json', 'body: empty, expected a JSON object', { field: 'body' });
      } else if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
        answer = new HttpError(400, 'malformed_json', `body: malformed JSON (${error.message})`, { field: 'body' });
      } else if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        answer = new HttpError(error.statusCode, (error.code ?? 'bad_request').toLowerCase(), error.message);
      } else {
        request.log.error(error);
        answer = new HttpError(500, 'internal', error.message, { reason: 'OTHER' });
      }
      return fail(request, reply, answer);
    },
  );

  app.setNotFoundHandler((request, reply) => fail(request, reply, new HttpError(404, 'not_found', `${request.method} ${request.url}: no such route`, { field: 'url' })));

  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'POST') {
      done();
      return;
    }
    arrivals++;
    // Asked first, for every POST: the budget counts the turn's new requests. Before a flood is seen
    // a turn may read more than 64 for maxEventLoopDelayMs; the refusals that cut a flood's first long
    // turn there start the pressure, faster than looks at the loop can (they need two late ones).
    const limit = admission !== null && admission.underPressure ? floodTurn : quietTurn;
    const inLongTurn = turnBudget !== null && turnBudget.overBudget(limit.ms, limit.arrivals);
    if (pending >= limits.maxPending) {
      refuse(request, reply, tooManyRequests());
      return;
    }
    if (inLongTurn) {
      refusedInLongTurns++;
      refuse(request, reply, longTurn(limit.ms));
      return;
    }
    if (admission !== null && !admission.admit()) {
      refuse(request, reply, overloaded(admission.share));
      return;
    }
    const endpoint = request.routeOptions.url ?? 'unknown';
    admitted.set(reply.raw, endpoint);
    pending++;
    metrics.pending.inc({ endpoint });
    // 'finish' once the response is handed to the socket, 'close' also when the connection goes first.
    reply.raw.once('finish', leave);
    reply.raw.once('close', leave);
    done();
  });

  app.addHook('onSend', async (request, reply, payload) => {
    // A worker that lost its context moves its keep-alive clients to a healthy worker.
    if (lostError !== null) reply.header('connection', 'close');
    const endpoint = request.routeOptions.url ?? 'unknown';
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) metrics.bytesOut.inc({ endpoint }, Buffer.byteLength(payload));
    else if (payload instanceof Readable) metrics.bytesOut.inc({ endpoint }, Number(reply.getHeader('content-length') ?? 0)); // a streamed answer (sendResult sets its length)
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const body = pooledBodies.get(request);
    if (body !== undefined) {
      pooledBodies.delete(request);
      bodies.release(body);
    }
    const endpoint = request.routeOptions.url ?? 'unknown';
    if (endpoint === '/metrics' || endpoint.startsWith('/v2/health')) return;
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > 0) metrics.bytesIn.inc({ endpoint }, length);
    metrics.requestDuration.observe({ endpoint }, reply.elapsedTime / 1000);
    if (reply.statusCode < 400) metrics.requestSuccess.inc({ endpoint });
    else metrics.fail(endpoint, failureReasons.get(request) ?? (reply.statusCode === 429 ? 'REJECTED' : reply.statusCode < 500 ? 'INVALID' : 'OTHER'));
  });

  const requireGpu = (): JobEngineLike => {
    const reason = notReadyReason();
    if (reason !== null || engine === null) {
      const retryable = closing !== null || lostError !== null;
      throw new HttpError(503, lostError !== null ? 'gpu_lost' : closing !== null ? 'shutting_down' : 'gpu_unavailable', reason ?? 'no engine', {
        retryable,
        ...(retryable ? { retryAfterS: 1 } : {}),
      });
    }
    return engine;
  };

  /** Runs a GPU handler (its request was admitted on its headers): keeps close() waiting for it, turns its errors into responses. */
  const track = (request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>): Promise<FastifyReply> => {
    const run = (async (): Promise<FastifyReply> => {
      try {
        return await work();
      } catch (error) {
        return fail(request, reply, toHttpError(error, limits.retryAfterS));
      }
    })();
    handlers.add(run);
    void run.finally(() => handlers.delete(run));
    return run;
  };

  /** The signal and parameters of a job request, from a JSON or a binary body. */
  const readJob = (request: FastifyRequest, endpointFlag: JobEndpoint | undefined, precision: 'f32' | 'f64'): { spec: JobSpec; timeoutMs: number } => {
    const body: unknown = request.body;
    let raw: RawParams;
    let data: Float32Array | Float64Array;
    if (Buffer.isBuffer(body)) {
      raw = paramsFromStrings({ ...headerParams(request.headers), ...queryStrings(request.query) });
      const dtype = raw.dtype === undefined ? 'f32' : sampleDtype(raw.dtype);
      delete raw.dtype;
      data = decodeBinarySignal(body, dtype);
    } else if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const query = queryStrings(request.query);
      const first = Object.keys(query)[0];
      if (first !== undefined) throw new HttpError(400, 'unknown_field', `${first}: query parameters are read only with binary bodies; put it in the JSON body`, { field: first });
      const { signal, ...rest } = body as Record<string, unknown>;
      raw = rest;
      const dtype = raw.dtype === undefined ? precision : sampleDtype(raw.dtype);
      delete raw.dtype;
      const decoded = decodeJsonSignal(signal, dtype);
      data = decoded.data;
      if (decoded.rows !== undefined) {
        if (raw.batch !== undefined && raw.batch !== decoded.rows) throw invalidField('batch', `is ${String(raw.batch)} but the signal has ${decoded.rows} rows`);
        raw.batch = decoded.rows;
      }
    } else {
      throw new HttpError(415, 'unsupported_media_type', 'body: expected a JSON object (application/json) or samples (application/octet-stream)', { field: 'content-type' });
    }
    if (data.length > limits.maxSamples)
      throw new HttpError(413, 'too_many_samples', `signal: ${data.length} samples, at most ${limits.maxSamples} per request`, { field: 'signal' });
    const parsed = parseJobParams(raw, data.length, paramContext, endpointFlag);
    return { spec: { ...parsed.spec, data, timeoutMs: parsed.timeoutMs }, timeoutMs: parsed.timeoutMs };
  };

  /** Waits for a job, or its deadline (504, and the job is cancelled if still queued), or the loss of the context (503). */
  const awaitJob = (job: Job, timeoutMs: number): Promise<JobResult> =>
    new Promise<JobResult>((resolve, reject) => {
      const entry: InFlight = {
        reject: (error) => {
          clearTimeout(timer);
          inFlight.delete(entry);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        const status = job.status;
        job.cancel();
        entry.reject(new HttpError(504, 'timeout', `the job did not finish within its timeout of ${timeoutMs} ms (it was ${status})`, { field: 'timeout' }));
      }, timeoutMs);
      inFlight.add(entry);
      job.result.then(
        (result) => {
          clearTimeout(timer);
          inFlight.delete(entry);
          resolve(result);
        },
        (error: unknown) => entry.reject(toHttpError(error, limits.retryAfterS)),
      );
    });

  const sendResult = (reply: FastifyReply, result: JobResult, format: ResponseFormat, code = 200): FastifyReply => {
    if (format === 'binary') {
      // A large answer's arrays are written one after the other, not joined into one copy first; a
      // stream costs more than the copy for small answers, which are joined.
      const b = encodeBinaryResultParts(result);
      const r = reply.code(code).type('application/octet-stream').header('x-tscuda-fields', b.fields).header('x-tscuda-result', b.meta);
      if (b.parts.length > 1 && b.byteLength >= STREAM_RESULT_BYTES) return r.header('content-length', String(b.byteLength)).send(Readable.from(b.parts));
      return r.send(b.parts.length === 1 ? b.parts[0]! : Buffer.concat(b.parts, b.byteLength));
    }
    return reply.code(code).send(encodeJsonResult(result));
  };

  const observeJob = (endpoint: string, result: JobResult): void => {
    metrics.queueDuration.observe({ endpoint }, result.timings.queuedMs / 1000);
    metrics.computeDuration.observe({ endpoint }, result.timings.runMs / 1000);
    metrics.gpuDuration.observe({ endpoint }, result.timings.gpuMs / 1000);
    metrics.batchSize.observe({ endpoint }, result.batch);
  };

  const jobBodySchema = { content: { 'application/json': { schema: JOB_BODY_SCHEMA }, 'application/octet-stream': { schema: {} } } };

  for (const flag of ['stft', 'cycles', 'wavelet'] as const) {
    const endpoint = `/v1/${flag}`;
    app.post(endpoint, { schema: { body: jobBodySchema } }, (request, reply) =>
      track(request, reply, async () => {
        const format = responseFormat(request.headers.accept);
        // Bad input is refused as such even when no GPU could run it.
        const { spec, timeoutMs } = readJob(request, flag, engine?.precision ?? 'f32');
        const gpu = requireGpu();
        const filtered = pooledFiltered(spec, gpu.precision);
        let job: Job;
        try {
          job = gpu.submit(filtered ? { ...spec, into: { ...spec.into, filtered: filtered.array } } : spec);
        } catch (error) {
          if (filtered) bodies.release(filtered.buffer);
          throw error;
        }
        handOverBody(request, job);
        if (filtered) {
          // Back to the pool once the job no longer writes it and the response no longer reads it.
          const sent = new Promise<void>((resolve) => reply.raw.once('close', resolve));
          const release = (): void => bodies.release(filtered.buffer);
          void Promise.allSettled([job.result, sent]).then(release);
        }
        job.result.catch(() => undefined);
        // A client that hangs up while its job is still queued frees the queue slot.
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) job.cancel();
        });
        const result = await awaitJob(job, timeoutMs);
        observeJob(endpoint, result);
        return sendResult(reply, result, format);
      }),
    );
  }

  let nextJobId = 1;
  app.post('/v1/jobs', { schema: { body: jobBodySchema } }, (request, reply) =>
    track(request, reply, async () => {
      const { spec, timeoutMs } = readJob(request, undefined, engine?.precision ?? 'f32');
      const gpu = requireGpu();
      const job = gpu.submit(spec);
      handOverBody(request, job);
      const id = `${options.jobIdPrefix ?? ''}${nextJobId++}`;
      let settle!: () => void;
      const record: JobRecord = {
        id,
        job,
        submittedAt: Date.now(),
        status: 'queued',
        finishedAt: undefined,
        result: undefined,
        error: undefined,
        settled: new Promise<void>((resolve) => (settle = resolve)),
      };
      jobs.add(record);
      awaitJob(job, timeoutMs).then(
        (result) => {
          observeJob('/v1/jobs', result);
          jobs.finish(record, { result });
          settle();
        },
        (error: unknown) => {
          const answer = toHttpError(error, limits.retryAfterS);
          jobs.finish(record, { error: answer, status: answer.code === 'cancelled' ? 'cancelled' : 'error' });
          settle();
        },
      );
      return reply
        .code(202)
        .header('location', `/v1/jobs/${id}`)
        .send({ id, status: 'queued', href: `/v1/jobs/${id}` });
    }),
  );

  const unknownJob = (id: string): HttpError =>
    new HttpError(404, 'unknown_job', `id: no job ${JSON.stringify(id)} (unknown, or finished more than ${limits.jobRetention.ttlMs} ms ago and no longer kept)`, { field: 'id' });
  const statusOf = (record: JobRecord): string => (record.finishedAt === undefined && record.job !== null ? record.job.status : record.status);

  /** A job of this server as GET shows it (also answered to other workers of a cluster). */
  const jobView = (id: string): JobView | undefined => {
    const record = jobs.get(id);
    if (record === undefined) return undefined;
    const view: JobView = { id: record.id, status: statusOf(record) };
    if (record.result !== undefined) view.result = record.result;
    if (record.error !== undefined) view.error = record.error.toJSON().error;
    return view;
  };

  /** DELETE of a job of this server: the status code and body. */
  const deleteJob = (id: string): JobAnswer | undefined => {
    const record = jobs.get(id);
    if (record === undefined) return undefined;
    if (record.finishedAt !== undefined) {
      jobs.delete(record.id);
      return { statusCode: 200, body: { id: record.id, status: record.status, deleted: true } };
    }
    if (record.job !== null && record.job.cancel()) {
      jobs.finish(record, { error: new HttpError(499, 'cancelled', 'cancelled by DELETE', { reason: 'CANCELED' }), status: 'cancelled' });
      return { statusCode: 200, body: { id: record.id, status: 'cancelled', deleted: false } };
    }
    return {
      statusCode: 409,
      body: { ...new HttpError(409, 'job_running', `id: job ${record.id} is running and cannot be cancelled; it finishes on its own`, { field: 'id' }).toJSON() },
    };
  };

  app.get<{ Params: { id: string } }>('/v1/jobs/:id', { schema: { params: JOB_ID_PARAMS } }, async (request, reply) => {
    const format = responseFormat(request.headers.accept);
    const id = request.params.id;
    const view = jobView(id) ?? (options.remoteJobs === undefined ? undefined : await options.remoteJobs.get(id));
    if (view === undefined) throw unknownJob(id);
    if (view.result !== undefined) {
      if (format === 'binary') return sendResult(reply.header('x-tscuda-job-status', 'ready'), view.result, format);
      return reply.send({ id: view.id, status: 'ready', result: encodeJsonResult(view.result) });
    }
    if (view.error !== undefined) return reply.send({ id: view.id, status: view.status, error: view.error });
    return reply.code(202).send({ id: view.id, status: view.status });
  });

  app.delete<{ Params: { id: string } }>('/v1/jobs/:id', { schema: { params: JOB_ID_PARAMS } }, async (request, reply) => {
    const id = request.params.id;
    const answer = deleteJob(id) ?? (options.remoteJobs === undefined ? undefined : await options.remoteJobs.delete(id));
    if (answer === undefined) throw unknownJob(id);
    if (answer.statusCode >= 400) failureReasons.set(request, 'INVALID');
    return reply.code(answer.statusCode).send(answer.body);
  });

  const batcherFor = <K extends BatchKind>(kind: K, dim: number): BatchSubmitter<BatchItems[K]> => {
    const key = `${kind}:${dim}`;
    const known = batchers.get(key);
    if (known !== undefined) return known.submitter as BatchSubmitter<BatchItems[K]>;
    const factory = options.batchers?.[kind] as ((dim: number) => BatchSubmitter<BatchItems[K]>) | undefined;
    if (factory === undefined) throw new HttpError(503, 'batcher_unavailable', `this server has no ${kind} batcher`);
    const sameKind = [...batchers.values()].filter((b) => b.kind === kind).length;
    if (sameKind >= limits.maxBatchDims)
      throw invalidField('items', `vectors of ${dim} values would need a new ${kind} batcher; this server serves at most ${limits.maxBatchDims} vector lengths per kind`);
    const submitter = factory(dim);
    batchers.set(key, { kind, dim, submitter: submitter as BatchSubmitter<unknown> });
    return submitter;
  };

  for (const kind of BATCH_KINDS) {
    const endpoint = `/v1/batch/${kind}`;
    app.post(endpoint, { schema: { body: BATCH_BODY_SCHEMA } }, (request, reply) =>
      track(request, reply, async () => {
        const format = responseFormat(request.headers.accept);
        const { items, dim } = parseBatchItems(kind, request.body, limits.maxBatchItems, limits.maxBatchDim);
        if (options.batchers?.[kind] === undefined || closing !== null || lostError !== null) requireGpu();
        const timeoutMs = (request.body as { timeout?: number | undefined }).timeout ?? limits.defaultTimeoutMs;
        if (timeoutMs > limits.maxTimeoutMs) throw invalidField('timeout', `must be at most ${limits.maxTimeoutMs} ms, got ${timeoutMs}`);
        const batcher = batcherFor(kind, dim);
        const abort = new AbortController();
        const outputs = await new Promise<Float32Array[]>((resolve, reject) => {
          const entry: InFlight = {
            reject: (error) => {
              clearTimeout(timer);
              inFlight.delete(entry);
              abort.abort(error);
              reject(error);
            },
          };
          const timer = setTimeout(
            () => entry.reject(new HttpError(504, 'timeout', `the items were not computed within the timeout of ${timeoutMs} ms`, { field: 'timeout' })),
            timeoutMs,
          );
          inFlight.add(entry);
          batcher.submit(items, { wait: false, signal: abort.signal }).then(
            (out) => {
              clearTimeout(timer);
              inFlight.delete(entry);
              resolve(out);
            },
            (error: unknown) => entry.reject(toHttpError(error, limits.retryAfterS)),
          );
        });
        metrics.batchSize.observe({ endpoint }, items.length);
        if (format === 'binary') {
          const packed = new Float32Array(outputs.length * dim);
          outputs.forEach((o, i) => packed.set(o, i * dim));
          return reply.type('application/octet-stream').header('x-tscuda-fields', `outputs=f32[${outputs.length},${dim}]`).send(Buffer.from(packed.buffer));
        }
        return reply.send({ outputs: outputs.map((o) => Array.from(o)) });
      }),
    );
  }

  app.get('/v2/health/live', async () => ({ live: true }));
  app.get('/v2/health/ready', async (_request, reply) => {
    const reason = notReadyReason();
    if (reason === null) return { ready: true };
    if (closing === null && lostError !== null && options.peersReady?.() === true) return { ready: true, note: 'this worker is leaving; another serves' };
    return reply.code(503).send({ ready: false, reason });
  });
  // In a cluster every worker's series (labelled worker="<id>"); `?scope=worker` for this process only.
  app.get<{ Querystring: { scope?: string | undefined } }>('/metrics', async (request, reply) => {
    const all = request.query.scope === 'worker' || options.clusterMetrics === undefined ? undefined : await options.clusterMetrics();
    return reply.type(metrics.contentType).send(all ?? (await metrics.expose()));
  });
  app.get('/v1/info', async () => ({
    name: 'tscuda',
    version,
    node: process.versions.node,
    pid: process.pid,
    uptimeS: (Date.now() - startedAt) / 1000,
    ...memoryFigures(),
    ready: notReadyReason() === null,
    reason: notReadyReason(),
    engine: engine === null ? null : { label: engine.label, precision: engine.precision, lanes: engine.laneCount, devices: engine.devices },
    flags: ['stft', 'cycles', 'wavelet', ...paramContext.extraFlags],
    batch: BATCH_KINDS.filter((k) => options.batchers?.[k] !== undefined),
    limits,
    ...options.info?.(),
  }));

  const server: TscudaServer = {
    app,
    metrics,
    jobView,
    deleteJob,
    get ready() {
      return notReadyReason() === null;
    },
    get notReadyReason() {
      return notReadyReason();
    },
    get pending() {
      return pending;
    },
    async listen(listenOptions = {}) {
      return app.listen({ port: listenOptions.port ?? 8000, host: listenOptions.host ?? '127.0.0.1', backlog: listenOptions.backlog ?? LISTEN_BACKLOG });
    },
    close() {
      if (closing !== null) return closing;
      let done!: () => void;
      closing = new Promise<void>((resolve) => (done = resolve));
      void (async () => {
        try {
          await Promise.allSettled([app.close(), ...handlers]);
          while (handlers.size > 0) await Promise.allSettled([...handlers]);
          if (pending > 0) await new Promise<void>((resolve) => (onIdle = resolve));
          await Promise.allSettled(jobs.unfinished.map((r) => r.settled));
          await Promise.allSettled([...batchers.values()].map((b) => b.submitter.close?.()));
          if (options.ownsEngine === true && engine !== null) await engine.close().catch(() => undefined);
        } finally {
          stopSampling();
          metrics.dispose();
          done();
        }
      })();
      return closing;
    },
  };
  return server;
}
