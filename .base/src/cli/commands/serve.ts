/** `tscuda serve`: the HTTP server over the job engine, in supervised worker processes. */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createServer } from '../../server/create-server.js';
import { buildPartsOrNone } from '../../server/gpu-parts.js';
import type { WorkerConfig } from '../../server/protocol.js';
import { superviseWorkers } from '../../server/supervisor.js';
import type { CliCommand } from '../command.js';

const USAGE = `usage: tscuda serve [options]
Serves the FFT job engine and the small-item batchers over HTTP (see the README, "Serving").
GPU work runs in --workers supervised processes sharing one socket: a worker whose CUDA context
is lost answers what it accepted with 503 (retryable) and is replaced. Without a GPU the server
still starts: /v2/health/live is 200, /v2/health/ready is 503 with the reason.
  --port N            TCP port (default 8000; 0 picks a free one)
  --host H            address to bind (default 127.0.0.1; 0.0.0.0 for all interfaces)
  --workers N         worker processes (default 1); 0 serves in this process, unsupervised
  --devices L         GPUs the workers spread over: "0", "0,1" or "all" (default 0)
  --standby N         experimental: spare workers with their engine built (default 0), to
                      replace a worker whose context is lost; each spare holds a CUDA context
  --lanes N           lanes (CUDA streams) per worker's engine (default 4)
  --max-queued N      queued jobs per worker before 429 (default 1024)
  --max-pending N     POSTs in progress per worker (counted from their headers) before 429 (default 4096)
  --max-lag MS        shed load: while the event loop runs more than MS behind, take a
                      shrinking share of new jobs, 429 the rest (default 50, 0 = off)
  --max-turn MS       shed load within a loop turn: once one turn has spent MS reading a
                      flood of new requests, 429 the rest it reads (default 25, 0 = off)
  --precision P       f32 (default) or f64 arithmetic on the GPU
  --timeout MS        timeout of a request that gives none (default 30000)
  --body-limit MB     largest request body in MiB (default 256)
  --batch-size N      items per batch of the /v1/batch endpoints (default 256)
  --batch-wait MS     how long a partial batch waits (default 1)
  --log               log every request (JSON lines on stdout)
  --help              this text
SIGTERM or SIGINT stops gracefully: stop accepting, finish what was accepted, exit 0.
example: tscuda serve --port 8000 --workers 2 --lanes 4
         curl -s localhost:8000/v2/health/ready`;

class UsageError extends Error {}

function integer(name: string, v: string | undefined, fallback: number, min: number): number {
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`--${name} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  return Number(v);
}

async function deviceList(v: string | undefined): Promise<number[]> {
  if (v === undefined) return [0];
  if (v === 'all') {
    try {
      const { Device } = await import('../../runtime/device.js');
      const n = Device.count();
      return n > 0 ? Array.from({ length: n }, (_, i) => i) : [0];
    } catch {
      return [0];
    }
  }
  if (!/^\d+(,\d+)*$/.test(v)) throw new UsageError(`--devices must be "all" or ordinals like 0,1; got ${JSON.stringify(v)}`);
  return v.split(',').map(Number);
}

/** Parses the options into the workers' configuration and the worker count. */
export async function parseServeArgs(args: string[]): Promise<{ help: true } | { help: false; workers: number; standby: number; config: WorkerConfig }> {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      workers: { type: 'string' },
      standby: { type: 'string' },
      devices: { type: 'string' },
      lanes: { type: 'string' },
      'max-queued': { type: 'string' },
      'max-pending': { type: 'string' },
      'max-lag': { type: 'string' },
      'max-turn': { type: 'string' },
      precision: { type: 'string' },
      timeout: { type: 'string' },
      'body-limit': { type: 'string' },
      'batch-size': { type: 'string' },
      'batch-wait': { type: 'string' },
      log: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return { help: true };
  const port = integer('port', values.port, 8000, 0);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const precision = values.precision ?? 'f32';
  if (precision !== 'f32' && precision !== 'f64') throw new UsageError(`--precision must be f32 or f64, got ${JSON.stringify(precision)}`);
  const config: WorkerConfig = {
    port,
    host: values.host ?? '127.0.0.1',
    devices: await deviceList(values.devices),
    lanes: integer('lanes', values.lanes, 4, 1),
    maxQueued: integer('max-queued', values['max-queued'], 1024, 1),
    maxPending: integer('max-pending', values['max-pending'], 4096, 1),
    maxEventLoopDelayMs: integer('max-lag', values['max-lag'], 50, 0),
    maxTurnMs: integer('max-turn', values['max-turn'], 25, 0),
    precision,
    defaultTimeoutMs: integer('timeout', values.timeout, 30_000, 1),
    bodyLimitBytes: integer('body-limit', values['body-limit'], 256, 1) * 1024 * 1024,
    batchMaxSize: integer('batch-size', values['batch-size'], 256, 1),
    batchMaxWaitMs: integer('batch-wait', values['batch-wait'], 1, 0),
    log: values.log === true,
  };
  return { help: false, workers: integer('workers', values.workers, 1, 0), standby: integer('standby', values.standby, 0, 0), config };
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

/** The worker entry next to this build (the .ts source under tsx, the .js in dist). */
function workerEntry(): string {
  const here = fileURLToPath(import.meta.url);
  return fileURLToPath(new URL(`../../server/worker-main${extname(here)}`, import.meta.url));
}

/**
 * The Node flags of the worker processes. From a source checkout the entry is TypeScript: bin/tscuda.js
 * registered tsx in this process only (its API, not a flag), so the workers get `--import tsx`
 * themselves, resolved from here so that it works from any working directory.
 */
function workerExecArgv(entry: string): string[] | undefined {
  if (!entry.endsWith('.ts') || process.execArgv.some((a) => /(^|[\\/=])tsx([\\/]|$)/.test(a) || a === 'tsx')) return undefined;
  return [...process.execArgv, '--import', import.meta.resolve('tsx')];
}

async function serve(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = await parseServeArgs(args);
  } catch (error) {
    console.error(`tscuda serve: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed.help) {
    console.log(USAGE);
    return 0;
  }
  const { workers, config } = parsed;
  const log = (line: string): void => console.error(`[serve] ${line}`);
  if (workers === 0) {
    const parts = await buildPartsOrNone(config);
    const server = createServer({
      engine: parts.engine,
      ownsEngine: true,
      logger: config.log === true,
      ...(parts.unavailableReason === undefined ? {} : { unavailableReason: parts.unavailableReason }),
      ...(parts.batchers === undefined ? {} : { batchers: parts.batchers }),
      ...(parts.info === undefined ? {} : { info: parts.info }),
      limits: {
        maxPending: config.maxPending!,
        maxEventLoopDelayMs: config.maxEventLoopDelayMs!,
        maxTurnMs: config.maxTurnMs!,
        defaultTimeoutMs: config.defaultTimeoutMs!,
        bodyLimitBytes: config.bodyLimitBytes!,
      },
    });
    const address = await server.listen({ port: config.port, host: config.host });
    log(`listening on ${address} (in this process${server.ready ? '' : `; not ready: ${server.notReadyReason}`})`);
    const signal = await untilSignal();
    log(`${signal}: finishing accepted requests`);
    await server.close();
    return 0;
  }
  const entry = workerEntry();
  const supervisor = superviseWorkers({ workers, standby: parsed.standby, workerEntry: entry, execArgv: workerExecArgv(entry), config, log });
  const signalled = untilSignal();
  await Promise.race([supervisor.started, signalled]);
  log(`${workers} worker(s) on http://${config.host}:${config.port}, ${supervisor.readyWorkers} ready`);
  const signal = await signalled;
  log(`${signal}: stopping the workers gracefully`);
  await supervisor.stop();
  return 0;
}

/** `tscuda serve`. */
export const serveCommand: CliCommand = {
  name: 'serve',
  summary: 'HTTP server over the job engine and batchers, in supervised GPU worker processes (--help)',
  usage: USAGE,
  run: serve,
};
