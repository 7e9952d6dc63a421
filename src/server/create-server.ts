/**
 * createServer(): the HTTP front of a job engine and of the small-item batchers, for a user to
 * mount in their own program (`tscuda serve` runs one per worker process). It assembles small
 * parts around one state object (state.ts): body readers (body-readers.ts), load shedding
 * (shedding/), the one error handler (error-handler.ts) and the routes (routes/, one module per
 * resource).
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
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { installBodyReaders } from './body-readers.js';
import { toHttpError } from './errors.js';
import {
  MAX_PARAM_CHARS,
  clientErrorHandler,
  frameworkErrors,
  installConnectAnswer,
  installErrorHandling,
  installExpectationAnswer,
} from './error-handler.js';
import { pinnedAllocator } from '../engine/pinned-allocator.js';
import { observeJob } from './job-io.js';
import { fusingEngine } from './fusion/fusing-engine.js';
import { DEFAULT_FUSION_BOUNDS } from './fusion/job-fuser.js';
import { localJobService, type JobServiceContext } from './job-service.js';
import { ServerMetrics } from './metrics.js';
import { checkListenOptions, checkOptions, isLoggerInstance, resolveLimits } from './option-checks.js';
import { DEFAULT_LIMITS, type CreateServerOptions, type TscudaServer } from './options.js';
import { ROUTES } from './routes/index.js';
import { BufferPool } from '../runtime/memory/buffer-pool.js';
import { installShedding } from './shedding/index.js';
import { IdleTrim } from './shedding/body-pool.js';
import { BodyBudget } from './shedding/body-budget.js';
import { notReadyReason, requireGpu, type ServerState } from './state.js';

export { DEFAULT_LIMITS };
export type {
  CreateServerOptions,
  JobAnswer,
  JobView,
  LoadSample,
  PinoOptions,
  RemoteJobs,
  ServerLimits,
  TscudaServer,
} from './options.js';

/**
 * The kernel's queue of connections not yet accepted. Node's default is 511: a burst of more
 * clients than that overflows it, and the excess wait on TCP retries where no 429 can reach
 * them. 4096 is Linux's default cap (net.core.somaxconn).
 */
const LISTEN_BACKLOG = 4096;
/** Bytes of free request-body buffers kept for reuse (bodies beyond it are left to the garbage collector). */
const BODY_POOL_BYTES = 256 * 2 ** 20;
/** A body pool untouched this long, ms, is trimmed to BODY_POOL_IDLE_BYTES: a burst's memory goes back within twice this. */
const BODY_POOL_IDLE_MS = 5000;
/** Bytes of free body buffers kept once the server is idle. */
const BODY_POOL_IDLE_BYTES = 32 * 2 ** 20;

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

/** Builds the server; call `listen()` to serve on a socket, or use `app.inject()`. */
export function createServer(options: CreateServerOptions = {}): TscudaServer {
  checkOptions(options);
  const limits = resolveLimits(options.limits);
  // Small requests of one shape share an engine job (fusion/); its closures read `state` only once jobs are submitted.
  const engine = fusingEngine(options.engine ?? null, {
    maxBatchDelayMs: limits.maxBatchDelayMs,
    maxSamples: Math.min(limits.maxSamples, DEFAULT_FUSION_BOUNDS.maxSamples),
    memory: { take: (bytes) => state.bodies.take(bytes), release: (buffer) => state.bodies.release(buffer) },
    onSubmitted: (requests) => state.metrics.fusedJob(requests),
    // readJob scanned every request's samples for NaN (job-io.ts): once is enough.
    samplesChecked: true,
  });
  const app = Fastify({
    // fastify 5 takes a logger of the caller's as loggerInstance, and only options as logger.
    ...(isLoggerInstance(options.logger) ? { loggerInstance: options.logger } : { logger: options.logger ?? false }),
    bodyLimit: limits.bodyLimitBytes,
    http: {
      // Node answers a missing Host with a bare 400; the error handler answers it in the documented shape.
      requireHostHeader: false,
      // Headers trickled in: 408 once headersTimeoutMs passes, looked for every second at most.
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(limits.headersTimeoutMs / 4))),
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    // Answers are serialized by their routes' response schemas; a result's arrays (up to
    // limits.maxJsonResultValues numbers) go through JSON.stringify whole: native speed, and a
    // non-finite value is null as JSON has it, where the per-item path throws on NaN.
    serializerOpts: { largeArrayMechanism: 'json-stringify', largeArraySize: 1 },
    routerOptions: { maxParamLength: MAX_PARAM_CHARS },
    clientErrorHandler,
    // Called only once requests arrive, after `state` exists.
    frameworkErrors: (error, request, reply) => frameworkErrors(state)(error, request, reply),
  });
  installConnectAnswer(app.server);
  installExpectationAnswer(app.server);
  // Its closures read `state` only once requests arrive.
  const jobContext: JobServiceContext = {
    requireEngine: () => requireGpu(state),
    retention: limits.jobRetention,
    retryAfterS: limits.retryAfterS,
    idPrefix: options.jobIdPrefix ?? '',
    remote: options.remoteJobs,
    observe: (result) => observeJob(state, '/v1/jobs', result),
  };
  // Binary bodies are read into pooled Buffers (body-pool.ts says why), handed back after a burst.
  const bodies = new BufferPool(BODY_POOL_BYTES, engine ? pinnedAllocator(engine) : undefined);
  const state: ServerState = {
    options,
    limits,
    engine,
    paramContext: {
      extraFlags: options.extraFlags ?? [],
      maxTimeoutMs: limits.maxTimeoutMs,
      defaultTimeoutMs: limits.defaultTimeoutMs,
    },
    metrics: new ServerMetrics(
      {
        engineStats: () => {
          if (engine === null || state.lostError !== null) return null;
          try {
            return engine.stats();
          } catch {
            return null;
          }
        },
        batcherStats: () =>
          [...state.batchers.values()].map((b) => {
            const m = b.submitter.metrics;
            return {
              kind: b.kind,
              dim: b.dim,
              batches: m?.batches ?? 0,
              items: m?.items ?? 0,
              fillRate: m?.fillRate ?? 0,
              queued: m?.queued ?? 0,
            };
          }),
        ready: () => notReadyReason(state) === null,
        admissionShare: () => state.admission?.share ?? 1,
      },
      options.metricsLabels,
    ),
    bodies,
    bodyTrim: new IdleTrim(bodies, { idleMs: BODY_POOL_IDLE_MS, keepBytes: BODY_POOL_IDLE_BYTES }),
    bodyBudget: new BodyBudget(limits.maxBodyBytesInFlight),
    pooledBodies: new WeakMap(),
    failureReasons: new WeakMap(),
    inFlight: new Set(),
    handlers: new Set(),
    batchers: new Map(),
    // Made below, once the metrics registry exists (a queue's service registers its metrics there).
    jobs: undefined as unknown as ServerState['jobs'],
    admission: null,
    lostError: null,
    closing: null,
    pending: 0,
    onIdle: undefined,
    version: packageVersion(),
    startedAt: Date.now(),
  };
  state.jobs = (options.jobs ?? localJobService)({ ...jobContext, registry: state.metrics.registry });

  if (engine !== null) {
    engine.lost.catch((error: unknown) => {
      if (state.lostError !== null) return;
      state.lostError = error ?? new Error('context lost');
      const answer = toHttpError(
        Object.assign(new Error(String((error as Error | undefined)?.message ?? error)), { sticky: true }),
        limits.retryAfterS,
      );
      for (const f of [...state.inFlight]) f.reject(answer);
      state.jobs.failAll(answer);
      options.onLost?.(error);
    });
  }

  installErrorHandling(app, state);
  const stopShedding = installShedding(app, state);
  /** The socket being opened by listen(), which close() waits for. */
  let listening: Promise<string> | null = null;
  installBodyReaders(app, state);
  installAccounting(app, state);
  for (const route of ROUTES) route(app, state);

  return {
    app,
    metrics: state.metrics,
    jobView: (id) => state.jobs.localView(id),
    deleteJob: (id) => state.jobs.localDelete(id),
    get ready() {
      return notReadyReason(state) === null;
    },
    get notReadyReason() {
      return notReadyReason(state);
    },
    get pending() {
      return state.pending;
    },
    async listen(listenOptions = {}) {
      // fastify would listen after its close(): a socket that nothing closes, keeping the process alive.
      if (state.closing !== null)
        throw new Error('listen() after close(): this server is closing or closed; create a new one to serve again');
      checkListenOptions(listenOptions);
      const attempt = app.listen({
        port: listenOptions.port ?? 8000,
        host: listenOptions.host ?? '127.0.0.1',
        backlog: listenOptions.backlog ?? LISTEN_BACKLOG,
      });
      listening = attempt;
      const address = await attempt;
      // close() came while the socket was being opened: it waited for this attempt and closes the socket.
      if (state.closing !== null)
        throw new Error(
          `close() was called while listen() was starting: ${address} is closed again; create a new server to serve`,
        );
      return address;
    },
    close() {
      if (state.closing !== null) return state.closing;
      let done!: () => void;
      state.closing = new Promise<void>((resolve) => (done = resolve));
      void (async () => {
        try {
          // A listen() under way opens its socket after fastify's close() would have looked: wait for it first.
          await Promise.allSettled([listening]);
          await Promise.allSettled([app.close(), ...state.handlers]);
          while (state.handlers.size > 0) await Promise.allSettled([...state.handlers]);
          if (state.pending > 0) await new Promise<void>((resolve) => (state.onIdle = resolve));
          await state.jobs.settled();
          await state.jobs.close?.();
          await Promise.allSettled([...state.batchers.values()].map((b) => b.submitter.close?.()));
          if (options.ownsEngine === true && engine !== null) await engine.close().catch(() => undefined);
        } finally {
          stopShedding();
          state.bodyTrim.stop();
          state.metrics.dispose();
          done();
        }
      })();
      return state.closing;
    },
  };
}

/** Response headers and metrics of every answer: bytes out, durations, successes and failures by reason. */
function installAccounting(app: FastifyInstance, state: ServerState): void {
  const { metrics } = state;
  app.addHook('onRequest', (request, reply, done) => {
    // A connection that closes before its response is sent: counted, whatever the stage. Closed
    // either way, the request's body no longer counts against the bodies' bound.
    reply.raw.once('close', () => {
      state.bodyBudget.release(request.raw);
      if (!reply.raw.writableFinished) metrics.aborted.inc({ endpoint: request.routeOptions.url ?? 'unknown' });
    });
    done();
  });
  // Callback style, not async: every answer passes both, and an async hook costs a promise each.
  app.addHook('onSend', (request, reply, payload, done) => {
    // A worker that lost its context moves its keep-alive clients to a healthy worker.
    if (state.lostError !== null) reply.header('connection', 'close');
    const endpoint = request.routeOptions.url ?? 'unknown';
    if (typeof payload === 'string' || Buffer.isBuffer(payload))
      metrics.bytesOut.inc({ endpoint }, Buffer.byteLength(payload));
    else if (payload instanceof Readable)
      metrics.bytesOut.inc({ endpoint }, Number(reply.getHeader('content-length') ?? 0)); // a streamed answer (sendResult sets its length)
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const body = state.pooledBodies.get(request);
    if (body !== undefined) {
      state.pooledBodies.delete(request);
      state.bodies.release(body);
    }
    const endpoint = request.routeOptions.url ?? 'unknown';
    if (endpoint !== '/metrics' && !endpoint.startsWith('/v2/health')) {
      metrics.requestDuration.observe({ endpoint }, reply.elapsedTime / 1000);
      if (reply.statusCode < 400) metrics.requestSuccess.inc({ endpoint });
      else
        metrics.fail(
          endpoint,
          state.failureReasons.get(request) ??
            (reply.statusCode === 429 ? 'REJECTED' : reply.statusCode < 500 ? 'INVALID' : 'OTHER'),
        );
    }
    done();
  });
}
