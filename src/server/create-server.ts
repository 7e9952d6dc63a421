/**
 * createServer(): the HTTP front of a job engine and of the small-item batchers, for a user to
 * mount in their own program (`tscuda serve` runs one per worker process). It is the server's
 * registrar, as fastify's app.ts: it builds the server's parts, installs the one error handler,
 * registers the plugins (plugins/: settings, load shedding, accounting, pooled bodies and their
 * readers, batchers, the GPU's lifecycle), each the sole owner of its state behind the decorator
 * it adds, then the routes (routes/, one module per resource), which use those decorators.
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
import Fastify from 'fastify';
import {
  MAX_PARAM_CHARS,
  clientErrorHandler,
  frameworkErrors,
  installConnectAnswer,
  installErrorHandling,
  installExpectationAnswer,
  type ErrorContext,
} from './error-handler.js';
import { pinnedAllocator } from '../engine/pinned-allocator.js';
import { fusingEngine } from './fusion/fusing-engine.js';
import { DEFAULT_FUSION_BOUNDS } from './fusion/job-fuser.js';
import { ServerMetrics } from './metrics.js';
import { checkListenOptions, checkOptions, isLoggerInstance, resolveLimits } from './option-checks.js';
import { DEFAULT_LIMITS, type CreateServerOptions, type TscudaServer } from './options.js';
import { Accounting, accountingPlugin } from './plugins/accounting.js';
import { ServerBatchers, batchersPlugin } from './plugins/batchers.js';
import { RequestBodies, bodiesPlugin } from './plugins/bodies.js';
import { configPlugin, type ServerConfig } from './plugins/config.js';
import { GpuWork, gpuPlugin } from './plugins/gpu.js';
import { sheddingPlugin } from './plugins/shedding.js';
import { ROUTES } from './routes/index.js';
import { LoadShedding } from './shedding/index.js';

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
  // Small requests of one shape share an engine job (fusion/); its closures read the parts below only once jobs are submitted.
  const engine = fusingEngine(options.engine ?? null, {
    maxBatchDelayMs: limits.maxBatchDelayMs,
    maxSamples: Math.min(limits.maxSamples, DEFAULT_FUSION_BOUNDS.maxSamples),
    memory: { take: (bytes) => bodies.take(bytes), release: (buffer) => bodies.release(buffer) },
    onSubmitted: (requests) => metrics.fusedJob(requests),
    // readJob scanned every request's samples for NaN (job-io.ts) unless the engine searches them on the
    // GPU; then the fuser scans the requests it fuses, since one bad one must not fail the others.
    samplesChecked: options.engine?.checksSamples !== true,
  });
  const config: ServerConfig = {
    options,
    limits,
    paramContext: {
      extraFlags: options.extraFlags ?? [],
      maxTimeoutMs: limits.maxTimeoutMs,
      defaultTimeoutMs: limits.defaultTimeoutMs,
    },
    version: packageVersion(),
    startedAt: Date.now(),
  };
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
    // Called only once requests arrive, after `errors` exists.
    frameworkErrors: (error, request, reply) => frameworkErrors(errors)(error, request, reply),
  });
  installConnectAnswer(app.server);
  installExpectationAnswer(app.server);
  // The parts, each built once here and owned by its plugin. The metrics' sources read them only when scraped.
  const batchers = new ServerBatchers(options.batchers, limits.maxBatchDims);
  const metrics = new ServerMetrics(
    {
      engineStats: () => gpu.stats(),
      batcherStats: () => batchers.stats(),
      ready: () => gpu.notReadyReason() === null,
      admissionShare: () => shedding.admissionShare,
    },
    options.metricsLabels,
  );
  const accounting = new Accounting(metrics);
  const shedding = new LoadShedding({ limits, metrics, accounting, onLoadSample: options.onLoadSample });
  // Binary bodies are read into pooled Buffers (body-pool.ts says why), pinned where the engine lends pinned memory.
  const bodies = new RequestBodies(engine ? pinnedAllocator(engine) : undefined);
  // A queue's job service registers its series in the metrics' registry.
  const gpu = new GpuWork({ engine, options, limits, metrics });
  const errors: ErrorContext = {
    limits,
    accounting,
    metrics,
    logged: options.logger !== undefined && options.logger !== false,
  };

  // The one error handler first, on the app itself: it sees every route, and its checks run before any other hook.
  installErrorHandling(app, errors);
  // The plugins, in the order their request hooks run (shedding's admission before the accounting's
  // watch, so a refusal costs no more); on close their onClose hooks run in the reverse order: the
  // GPU's lets the requests in progress and the kept jobs finish, then the batchers close, and the
  // bodies' trimming, the metrics' monitor and the loop's sampler stop.
  void app.register(configPlugin, { config });
  void app.register(sheddingPlugin, { shedding });
  void app.register(accountingPlugin, { accounting });
  void app.register(bodiesPlugin, { bodies });
  void app.register(batchersPlugin, { batchers });
  void app.register(gpuPlugin, { gpu });
  for (const route of ROUTES) void app.register(route);
  /** The socket being opened by listen(), which close() waits for. */
  let listening: Promise<string> | null = null;
  /** Set once close() is called. */
  let closing: Promise<void> | null = null;

  return {
    app,
    metrics,
    jobView: (id) => gpu.jobs.localView(id),
    deleteJob: (id) => gpu.jobs.localDelete(id),
    get ready() {
      return gpu.notReadyReason() === null;
    },
    get notReadyReason() {
      return gpu.notReadyReason();
    },
    get pending() {
      return shedding.pending;
    },
    async listen(listenOptions = {}) {
      // fastify would listen after its close(): a socket that nothing closes, keeping the process alive.
      if (closing !== null)
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
      if (closing !== null)
        throw new Error(
          `close() was called while listen() was starting: ${address} is closed again; create a new server to serve`,
        );
      return address;
    },
    close() {
      if (closing !== null) return closing;
      gpu.beginClosing();
      let done!: () => void;
      closing = new Promise<void>((resolve) => (done = resolve));
      void (async () => {
        try {
          // A listen() under way opens its socket after fastify's close() would have looked: wait for it first.
          await Promise.allSettled([listening]);
          // fastify stops accepting, then runs the plugins' onClose hooks (above).
          await app.close();
          // The engine outlives every part that uses it.
          if (options.ownsEngine === true && engine !== null) await engine.close().catch(() => undefined);
        } finally {
          done();
        }
      })();
      return closing;
    },
  };
}
