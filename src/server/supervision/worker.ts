/**
 * The worker side of supervision: builds this process's engine (an entry may serve without one:
 * no GPU, health, info, metrics and 4xx still answer), serves on the port the cluster shares,
 * and reports to the primary. A worker that cannot start (its engine throws, its socket cannot
 * be bound) says so in one line and exits 1: the primary tells a failed start from a crash.
 * When its CUDA context is lost it answers every request it had accepted with 503 (retryable),
 * keeps answering 503 with `Connection: close` until its replacement is listening, then retires.
 * Retiring and shutting down are the same bounded drain (drain.ts); the exit code says whether
 * it completed (EXIT_CODES).
 */
import cluster from 'node:cluster';
import {
  createServer,
  type CreateServerOptions,
  type JobAnswer,
  type JobView,
  type LoadSample,
  type TscudaServer,
} from '../create-server.js';
import { guardRequests, type DrainGuard } from './drain.js';
import {
  CONFIG_ENV,
  DEFAULT_DRAIN_MS,
  EXIT_CODES,
  isProtocolMessage,
  type PrimaryMessage,
  type WorkerConfig,
  type WorkerMessage,
} from './protocol.js';
import { serverOptions, type ServeParts } from './server-options.js';
import { buildFailure, listenFailure } from './start-failure.js';
import { readyWithin } from './start-readiness.js';

/** What a worker entry builds for its process (server-options.ts defines it: serverOptions() maps it). */
export type WorkerParts = ServeParts;

/** A worker entry: how to build the engine and batchers from the config. */
export interface WorkerEntry {
  build(config: WorkerConfig): Promise<WorkerParts>;
  /** Extra createServer options (tests: hooks, limits). */
  serverOptions?: Partial<CreateServerOptions> | undefined;
}

/** Reads the configuration the supervisor put in the environment. */
export function workerConfig(): WorkerConfig {
  const text = process.env[CONFIG_ENV];
  if (text === undefined) throw new Error(`${CONFIG_ENV} is not set: a serve worker is started by the supervisor`);
  return JSON.parse(text) as WorkerConfig;
}

function send(message: WorkerMessage): void {
  // The primary may be gone (shutdown): a failed write is not an error of this worker.
  if (process.send !== undefined && process.connected) process.send(message, undefined, {}, () => undefined);
}

/** How long a lookup of another worker's job may take before it counts as unknown, ms. */
const QUERY_TIMEOUT_MS = 2000;

/** How long a leaving worker waits for its last IPC messages (its final counters) to go out, ms. */
const FLUSH_MS = 1000;

/** Sends `message`, then exits with `code` (once it is written, or after FLUSH_MS); never resolves. */
function sendThenExit(message: WorkerMessage | null, code: number): Promise<never> {
  const exit = (): never => process.exit(code);
  if (message !== null && process.send !== undefined && process.connected) {
    setTimeout(exit, FLUSH_MS).unref();
    process.send(message, undefined, {}, exit);
  } else exit();
  return new Promise<never>(() => undefined);
}

/** A start-up failure: one line to the primary (which prints it once), exit 1, no stack trace. */
function failStart(reason: string): Promise<never> {
  if (process.send === undefined) console.error(reason);
  return sendThenExit({ tscuda: 'start-failed', reason }, EXIT_CODES.failed);
}

/** Runs this process as a serve worker; resolves with the server once it listens. A worker that cannot start exits 1. */
export async function runWorker(entry: WorkerEntry): Promise<TscudaServer> {
  const config = workerConfig();
  let parts: WorkerParts;
  try {
    parts = await entry.build(config);
  } catch (error) {
    return failStart(buildFailure(error));
  }
  const workerId = cluster.worker?.id ?? 0;
  let peersReady = 0;
  // Jobs of other workers (ids `w<id>-<n>`) are asked of their owner through the primary.
  let nextQuery = 1;
  const queries = new Map<number, (answer: unknown) => void>();
  const metricsQueries = new Map<number, (text: string | null) => void>();
  const ask = (op: 'get' | 'delete', id: string): Promise<unknown> => {
    const m = /^w(\d+)-/.exec(id);
    const target = m === null ? NaN : Number(m[1]);
    if (!Number.isInteger(target) || target === workerId || process.send === undefined)
      return Promise.resolve(undefined);
    const requestId = nextQuery++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        queries.delete(requestId);
        resolve(undefined);
      }, QUERY_TIMEOUT_MS);
      queries.set(requestId, (answer) => {
        clearTimeout(timer);
        queries.delete(requestId);
        resolve(answer ?? undefined);
      });
      send({ tscuda: 'job-query', requestId, op, id, target });
    });
  };
  let leaving: Promise<never> | null = null;
  let guard: DrainGuard | null = null;
  let activate = (): void => undefined;
  let stopStandby = (): void => undefined;
  const base = serverOptions(config, parts);
  const server = createServer({
    ...base,
    ...(base.info === undefined ? {} : { info: () => ({ worker: workerId, ...base.info!() }) }),
    jobIdPrefix: `w${workerId}-`,
    metricsLabels: { worker: String(workerId) },
    peersReady: () => peersReady > 0,
    clusterMetrics: () =>
      new Promise<string | undefined>((resolve) => {
        const requestId = nextQuery++;
        const timer = setTimeout(() => {
          metricsQueries.delete(requestId);
          resolve(undefined);
        }, QUERY_TIMEOUT_MS * 3);
        metricsQueries.set(requestId, (text) => {
          clearTimeout(timer);
          metricsQueries.delete(requestId);
          resolve(text ?? undefined);
        });
        send({ tscuda: 'metrics-query', requestId });
      }),
    remoteJobs: {
      get: async (id) => (await ask('get', id)) as JobView | undefined,
      delete: async (id) => (await ask('delete', id)) as JobAnswer | undefined,
    },
    onLost: (error) => send({ tscuda: 'lost', reason: error instanceof Error ? error.message : String(error) }),
    // TSCUDA_SERVE_LOAD_TRACE=1: one JSON line per look of load shedding at the loop, on stderr (the serve bench keeps them).
    ...(process.env.TSCUDA_SERVE_LOAD_TRACE === '1'
      ? {
          onLoadSample: (sample: LoadSample) =>
            process.stderr.write(`load-trace ${workerId} ${JSON.stringify(sample)}\n`),
        }
      : {}),
    ...entry.serverOptions,
  });

  /** Drains and exits; `retiring`: this worker leaves while its peers serve (new connections go to them). */
  const leave = (retiring = false): Promise<never> => {
    leaving ??= (async (): Promise<never> => {
      // Bounded: a lost context or a client that never finishes its body cannot keep a leaving worker alive.
      const drainMs = config.drainMs ?? DEFAULT_DRAIN_MS;
      const outcome =
        guard === null
          ? // Not listening (a standby, or still starting): nothing to drain but the engine, within the same bound.
            {
              drained: await Promise.race([
                server.close().then(() => true),
                new Promise<boolean>((r) => setTimeout(r, drainMs, false)),
              ]),
            }
          : await guard.drain(drainMs, { acceptQueued: !retiring });
      // The counters of everything this worker answered, for the primary to keep once it is gone.
      const metrics = await server.metrics.registry.getMetricsAsJSON().catch(() => null);
      return sendThenExit(
        metrics === null ? null : { tscuda: 'final-metrics', metrics },
        outcome.drained ? EXIT_CODES.drained : EXIT_CODES.drainCut,
      );
    })();
    return leaving;
  };

  process.on('message', (m: unknown) => {
    if (!isProtocolMessage(m)) return;
    const message = m as PrimaryMessage;
    if (message.tscuda === 'peers') peersReady = message.ready;
    else if (message.tscuda === 'job-query') {
      const answer = message.op === 'get' ? server.jobView(message.id) : server.deleteJob(message.id);
      send({
        tscuda: 'job-answer',
        requestId: message.requestId,
        ...(message.replyTo === undefined ? {} : { replyTo: message.replyTo }),
        answer: answer ?? null,
      });
    } else if (message.tscuda === 'job-answer') queries.get(message.requestId)?.(message.answer);
    else if (message.tscuda === 'metrics-answer') metricsQueries.get(message.requestId)?.(message.text);
    else if (message.tscuda === 'metrics-collect') {
      server.metrics.registry.getMetricsAsJSON().then(
        (metrics) => send({ tscuda: 'metrics-json', requestId: message.requestId, metrics }),
        () => send({ tscuda: 'metrics-json', requestId: message.requestId, metrics: null }),
      );
    } else if (message.tscuda === 'cut') {
      // leave() first: it starts the drain (synchronously) that the cut then ends.
      void leave();
      guard?.cut('the supervisor cut the drain (a second signal)');
    } else if (message.tscuda === 'activate') activate();
    else if (message.tscuda === 'retire' || message.tscuda === 'shutdown') {
      stopStandby();
      void leave(message.tscuda === 'retire');
    }
  });
  // The primary coordinates shutdown; a signal sent to the whole process group (Ctrl-C, systemd's
  // control-group stop, a closed terminal's SIGHUP) is handled the same way. A primary that is
  // gone (even killed) disconnects: the worker drains and leaves, never outlives it.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void leave());
  process.on('disconnect', () => void leave());

  if (config.standby === true) {
    // Engine built, socket not taken: wait to be activated (or stopped).
    const activated = new Promise<boolean>((resolve) => {
      activate = () => resolve(true);
      stopStandby = () => resolve(false);
    });
    send({ tscuda: 'standby-ready' });
    if (!(await activated)) return server;
  }
  let address: string;
  try {
    address = await server.listen({ port: config.port, host: config.host });
  } catch (error) {
    return failStart(listenFailure(error, config.host, config.port));
  }
  guard = guardRequests(server);
  const listening = server;
  if (config.redis !== undefined) await readyWithin(() => listening.ready);
  send({ tscuda: 'listening', ready: server.ready, reason: server.notReadyReason, address });
  return server;
}
