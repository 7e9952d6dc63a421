/** `tscuda serve`: the HTTP server over the job engine, in supervised worker processes. */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reportUsageError } from '../options.js';
import { createServer } from '../../server/create-server.js';
import { checkRedis } from '../../queue/index.js';
import { serverOptions } from '../../server/supervision/server-options.js';
import { guardRequests, type DrainOutcome } from '../../server/supervision/drain.js';
import { buildPartsOrNone } from '../../server/supervision/gpu-parts.js';
import { DEFAULT_DRAIN_MS, EXIT_CODES, type WorkerConfig } from '../../server/supervision/protocol.js';
import { buildFailure, listenFailure } from '../../server/supervision/start-failure.js';
import { superviseWorkers, type SupervisorEnd } from '../../server/supervision/supervisor.js';
import type { CliCommand } from '../command.js';
import { CommandReport } from '../report.js';
import { readyWithin } from '../../server/supervision/start-readiness.js';
import { stopSignals, type StopSignals } from './serve-signals.js';
import { QUEUE_FRONT_USAGE, redisMemoryWarning } from './serve-queue.js';
import { parseServeArgs, type ServePlan } from './serve-options.js';
import { deviceOptionsUsage } from '../device-option.js';

const USAGE = `usage: tscuda serve [options]
Serves the FFT job engine and the small-item batchers over HTTP (see the README, "Serving").
GPU work runs in --workers supervised processes sharing one socket: a worker whose CUDA context
is lost answers what it accepted with 503 (retryable) and is replaced. Without a GPU the server
still starts: /v2/health/live is 200, /v2/health/ready is 503 with the reason.
  --port N            TCP port (default 8000; 0 picks a free one)
  --host H            address to bind (default 127.0.0.1; 0.0.0.0 for all interfaces)
  --workers N         worker processes (at most 4 per CPU and 256); 0 serves in this
                      process, unsupervised. Default: half the CPUs, at most 8 per GPU of
                      --devices, at least 1 (one process moves about one core's worth of HTTP)
${deviceOptionsUsage(22, 'worker i runs on devices[i % n]; with --workers 0 one engine spans them all')}
  --standby N         experimental: spare workers with their engine built (default 0), to
                      replace a worker whose context is lost; each spare holds a CUDA context
                      (needs --workers >= 1)
  --lanes N           lanes (CUDA streams) per worker's engine (default 4)
  --max-queued N      queued jobs per worker before 429 (default 1024)
  --max-pending N     POSTs in progress per worker (counted from their headers) before 429 (default 4096)
  --max-lag MS        shed load: while the event loop runs more than MS behind, take a
                      shrinking share of new jobs, 429 the rest (default 50, 0 = off)
  --max-turn MS       shed load within a loop turn: once one turn has spent MS reading a
                      flood of new requests, 429 the rest it reads (default 25, 0 = off)
  --precision P       f32 (default) or f64 arithmetic on the GPU
  --timeout MS        timeout of a request that gives none (default 30000, 1..2147483647)
  --body-limit MB     largest request body in MiB (default 256, at most 511: a JSON body is
                      read as one string, and V8's longest string is 512 MiB)
  --json-limit MB     largest JSON body in MiB (default 1, at most 256 and --body-limit);
                      large signals go binary
  --body-timeout MS   how long a body may take to arrive once its headers are in, 408 past
                      it (default 30000)
  --drain MS          bound of a graceful stop (default 10000): requests still unfinished
                      then have their connections cut
  --redis URL         /v1/jobs through a Redis-backed job queue (redis://host:6379): any
                      server answers any job id, \`tscuda worker\` processes run the jobs, and
                      a server without a GPU is a front (ready while Redis answers)
  --queue NAME        the job queue's name (default tscuda-jobs; the workers' must match)
  --prefix P          the job queue's Redis key prefix (default tscuda; the workers' must match)
  --blob-redis URL    a Redis that holds the queue's samples and results (repeat for several;
                      default the --redis one; the workers' must match, in the same order)
${QUEUE_FRONT_USAGE}
  --batch-size N      items per batch of the /v1/batch endpoints (default 256)
  --batch-wait MS     how long a partial batch waits (default 1)
  --max-batch-delay-ms MS
                      fuse job requests of one shape arriving within MS of the first into
                      one GPU job, each answered on its own (default 1, 0 = off)
  --log               log every request (JSON lines on stdout)
  --json              failures, and the address once listening, as JSON objects on stdout
  --help              this text
SIGTERM, SIGINT or SIGHUP stops gracefully: stop accepting, finish what was accepted (new
requests on open connections get 503 shutting_down), exit 0; 3 when the --drain bound or a
second signal cut it. A worker that cannot start (port in use, bad --host, engine) exits 1.
example: tscuda serve --port 8000 --workers 2 --lanes 4
         curl -s localhost:8000/v2/health/ready`;

/** The exit code of a stop, with its one line when the drain was cut. */
function stopCode(drained: boolean, log: (line: string) => void, detail: string): number {
  if (drained) return EXIT_CODES.drained;
  log(`drain cut: ${detail}; exit ${EXIT_CODES.drainCut}`);
  return EXIT_CODES.drainCut;
}

/** The worker entry next to this build (the .ts source under tsx, the .js in dist). */
function workerEntry(): string {
  const here = fileURLToPath(import.meta.url);
  return fileURLToPath(new URL(`../../server/supervision/worker-main${extname(here)}`, import.meta.url));
}

/**
 * The Node flags of the worker processes. From a source checkout the entry is TypeScript: bin/tscuda.js
 * registered tsx in this process only (its API, not a flag), so the workers get `--import tsx`
 * themselves, resolved from here so that it works from any working directory.
 */
function workerExecArgv(entry: string): string[] | undefined {
  if (!entry.endsWith('.ts') || process.execArgv.some((a) => /(^|[\\/=])tsx([\\/]|$)/.test(a) || a === 'tsx'))
    return undefined;
  return [...process.execArgv, '--import', import.meta.resolve('tsx')];
}

async function serve(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = await parseServeArgs(args);
  } catch (error) {
    // The one reporter of every command: one line (not the 30-line usage), or JSON with --json.
    return reportUsageError('serve', (error as Error).message, args);
  }
  if (parsed.help) {
    console.log(USAGE);
    return 0;
  }
  // Listened for before anything starts, so that no signal finds the process without its handlers.
  const signals = stopSignals();
  try {
    return await serveParsed(parsed, signals, new CommandReport('serve', parsed.json));
  } finally {
    signals.dispose();
  }
}

/** serve() once the options are good, with the stop signals already caught. */
async function serveParsed(
  parsed: Omit<ServePlan, 'help' | 'json'>,
  signals: StopSignals,
  report: CommandReport,
): Promise<number> {
  const { workers, config, workerDevices } = parsed;
  const log = (line: string): void => console.error(`[serve] ${line}`);
  if (config.redis !== undefined) {
    // Redis unreachable at start: one line and exit 1 (once running, a lost Redis is retried and ready says so).
    try {
      for (const url of [config.redis, ...(config.blobRedis ?? [])]) await checkRedis(url);
    } catch (error) {
      return report.fail((error as Error).message, EXIT_CODES.failed, (error as Error).name);
    }
    // Said once at start: a Redis without a memory limit is the one an attacker can fill.
    for (const url of [config.redis, ...(config.blobRedis ?? [])]) {
      const warning = await redisMemoryWarning(url);
      if (warning !== undefined) log(warning);
    }
  }
  const drainMs = config.drainMs ?? DEFAULT_DRAIN_MS;
  if (workers === 0) return serveInProcess(config, drainMs, log, signals, report);
  const entry = workerEntry();
  if (signals.received !== null) {
    log(`${signals.received}: stopped before any worker started`);
    return EXIT_CODES.drained;
  }
  const supervisor = superviseWorkers({
    workers,
    standby: parsed.standby,
    workerEntry: entry,
    execArgv: workerExecArgv(entry),
    config,
    devices: workerDevices,
    log,
  });
  signals.onAgain((signal) => {
    log(`${signal} again: cutting the drain`);
    supervisor.cut();
  });
  const signalled = signals.first;
  let address: string;
  try {
    const first = await Promise.race([supervisor.started, signalled.then(() => null)]);
    if (first === null) return stopped(await supervisor.stop(), log, report);
    address = first;
  } catch (error) {
    return report.fail((error as Error).message, EXIT_CODES.failed, (error as Error).name);
  }
  log(`${workers} worker(s) on ${address}, ${supervisor.readyWorkers} ready`);
  report.result({ listening: address, workers, ready: supervisor.readyWorkers });
  const signal = await Promise.race([signalled, supervisor.ended.then(() => null)]);
  if (signal !== null) log(`${signal}: stopping the workers gracefully (at most ${drainMs} ms)`);
  return stopped(await supervisor.stop(), log, report);
}

/** The exit code of a supervisor's end, with its one line. */
function stopped(end: SupervisorEnd, log: (line: string) => void, report: CommandReport): number {
  if (end.kind === 'failed') return report.fail(end.reason, EXIT_CODES.failed, 'ServeError');
  return stopCode(
    end.drained,
    log,
    `${end.cutWorkers} worker(s) had requests unfinished at the bound (or a second signal)`,
  );
}

/** `--workers 0`: one server in this process, the same start-up failures and the same bounded drain. */
async function serveInProcess(
  config: WorkerConfig,
  drainMs: number,
  log: (line: string) => void,
  signals: StopSignals,
  report: CommandReport,
): Promise<number> {
  let parts;
  try {
    parts = await buildPartsOrNone(config);
  } catch (error) {
    return report.fail(buildFailure(error), EXIT_CODES.failed, 'ServeError');
  }
  const server = createServer(serverOptions(config, parts));
  let address: string;
  try {
    address = await server.listen({ port: config.port, host: config.host });
  } catch (error) {
    await server.close();
    return report.fail(listenFailure(error, config.host, config.port), EXIT_CODES.failed, 'ServeError');
  }
  const guard = guardRequests(server);
  if (config.redis !== undefined) await readyWithin(() => server.ready);
  const devices =
    parts.engine === null
      ? ''
      : `, device${parts.engine.devices.length === 1 ? '' : 's'} ${parts.engine.devices.join(',')}`;
  log(
    `listening on ${address} (in this process${devices}${server.ready ? '' : `; not ready: ${server.notReadyReason}`})`,
  );
  report.result({ listening: address, workers: 0, ready: server.ready });
  signals.onAgain((again) => {
    log(`${again} again: cutting the drain`);
    guard.cut(`a second signal (${again})`);
  });
  const signal = await signals.first;
  log(`${signal}: finishing accepted requests (at most ${drainMs} ms)`);
  const outcome: DrainOutcome = await guard.drain(drainMs);
  return stopCode(outcome.drained, log, `${outcome.cutReason ?? ''}, ${outcome.unfinished} request(s) unfinished`);
}

/** `tscuda serve`. */
export const serveCommand: CliCommand = {
  name: 'serve',
  summary: 'HTTP server over the job engine and batchers, in supervised GPU worker processes (--help)',
  usage: USAGE,
  run: serve,
};
