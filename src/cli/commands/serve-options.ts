/**
 * `tscuda serve`'s options: parsed and checked (one line naming the option) into the workers'
 * configuration, the worker count and the standby count, before anything starts.
 */
import { constants as bufferConstants } from 'node:buffer';
import { availableParallelism } from 'node:os';
import { MAX_TIMEOUT_MS, checkTimeoutMs } from '../../runtime/timeout.js';
import { DEVICE_FLAGS, deviceSelection } from '../device-option.js';
import { parseCommandLine, queueNameOption, redisUrlOption, UsageError } from '../options.js';
import { DEFAULT_LIMITS } from '../../server/create-server.js';
import { MAX_PENDING } from '../../server/option-checks.js';
import { defaultWorkerCount } from '../../server/supervision/default-workers.js';
import { DEFAULT_DRAIN_MS, type WorkerConfig } from '../../server/supervision/protocol.js';
import { spreadDevices } from '../../server/supervision/worker-devices.js';
import { QUEUE_FRONT_FLAGS, queueFrontLimits } from './serve-queue.js';

/** Node timers wait at most 2^31-1 ms (runtime/timeout.ts); every option in ms is bounded by it. */
const MAX_MS = MAX_TIMEOUT_MS;

/** The largest JSON body createServer() takes, MiB (JSON text must fit a string). */
export const MAX_JSON_LIMIT_MIB = 256;

/** The most workers: 4 per CPU (a GPU-bound worker waits a lot), never a fork storm. */
export const MAX_WORKERS = Math.min(256, 4 * availableParallelism());

/** The largest body in MiB: a JSON body is read into one string, and V8 refuses longer strings (ERR_STRING_TOO_LONG). */
export const MAX_BODY_LIMIT_MIB = Math.floor(bufferConstants.MAX_STRING_LENGTH / 2 ** 20);

function integer(name: string, v: string | undefined, fallback: number, min: number, max: number, why = ''): number {
  if (v === undefined) return fallback;
  if (!/^\d{1,16}$/.test(v) || Number(v) < min)
    throw new UsageError(`--${name} must be an integer >= ${min}, got ${JSON.stringify(v.slice(0, 40))}`);
  if (Number(v) > max) throw new UsageError(`--${name} must be at most ${max}${why}, got ${v}`);
  return Number(v);
}

/** An option in ms, bounded by the one timeout rule (runtime/timeout.ts: what a Node timer holds). */
function milliseconds(name: string, v: string | undefined, fallback: number, min: number): number {
  return checkTimeoutMs(integer(name, v, fallback, min, MAX_MS, ' (the most a Node timer holds)'), `--${name}`);
}

/** What `tscuda serve` runs, its options parsed and checked. */
export interface ServePlan {
  help: false;
  /** Supervised worker processes (0: serve in this process). */
  workers: number;
  standby: number;
  json: boolean;
  /** What every worker is configured with; `devices` is the --devices selection (every GPU by default). */
  config: WorkerConfig;
  /** The devices the supervised workers are spread over, worker i on workerDevices[i % n] (spreadDevices). */
  workerDevices: number[];
}

/**
 * Parses the options into the workers' configuration, the worker count and the devices the
 * workers are spread over. `--devices` is the CLI's one device option (device-option.ts): every
 * GPU by default; whether a listed ordinal exists is the engine's check when it is built (a failed
 * start: one line, exit 1). The machine's GPUs are counted once, here, when the selection is 'all'.
 */
export async function parseServeArgs(args: string[]): Promise<{ help: true } | ServePlan> {
  // The CLI's one parser: its messages are one line, and `--workers -1` reaches the option's own check.
  const { values } = parseCommandLine(
    args,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      workers: { type: 'string' },
      standby: { type: 'string' },
      ...DEVICE_FLAGS,
      lanes: { type: 'string' },
      'max-queued': { type: 'string' },
      'max-pending': { type: 'string' },
      'max-lag': { type: 'string' },
      'max-turn': { type: 'string' },
      precision: { type: 'string' },
      timeout: { type: 'string' },
      'body-limit': { type: 'string' },
      'json-limit': { type: 'string' },
      'body-timeout': { type: 'string' },
      'batch-size': { type: 'string' },
      'batch-wait': { type: 'string' },
      'max-batch-delay-ms': { type: 'string' },
      drain: { type: 'string' },
      redis: { type: 'string' },
      queue: { type: 'string' },
      prefix: { type: 'string' },
      'blob-redis': { type: 'string', multiple: true },
      ...QUEUE_FRONT_FLAGS,
      log: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    false,
  );
  if (values.help === true) return { help: true };
  const port = integer('port', values.port, 8000, 0, 65535);
  const precision = values.precision ?? 'f32';
  if (precision !== 'f32' && precision !== 'f64')
    throw new UsageError(`--precision must be f32 or f64, got ${JSON.stringify(precision)}`);
  const bodyLimitMib = integer(
    'body-limit',
    values['body-limit'],
    256,
    1,
    MAX_BODY_LIMIT_MIB,
    ` (MiB; a JSON body is read as one string, and V8's longest string is ${MAX_BODY_LIMIT_MIB + 1} MiB)`,
  );
  const jsonDefaultMib = Math.min(DEFAULT_LIMITS.jsonBodyLimitBytes / 2 ** 20, bodyLimitMib);
  const jsonLimitMib = integer(
    'json-limit',
    values['json-limit'],
    jsonDefaultMib,
    1,
    MAX_JSON_LIMIT_MIB,
    ' (MiB; send large signals binary)',
  );
  if (jsonLimitMib > bodyLimitMib)
    throw new UsageError(`--json-limit must be at most --body-limit (${bodyLimitMib} MiB), got ${jsonLimitMib}`);
  // An empty address is no default: node binds it to every interface, the opposite of 127.0.0.1.
  if (values.host !== undefined && values.host.trim() === '')
    throw new UsageError('--host must name an address (0.0.0.0 for every interface)');
  const devices = deviceSelection(values);
  const config: WorkerConfig = {
    port,
    host: values.host ?? '127.0.0.1',
    devices,
    lanes: integer('lanes', values.lanes, 4, 1, 256),
    maxQueued: integer('max-queued', values['max-queued'], 1024, 1, 2 ** 24),
    maxPending: integer('max-pending', values['max-pending'], 4096, 1, MAX_PENDING),
    maxEventLoopDelayMs: milliseconds('max-lag', values['max-lag'], 50, 0),
    maxTurnMs: milliseconds('max-turn', values['max-turn'], 25, 0),
    precision,
    defaultTimeoutMs: milliseconds('timeout', values.timeout, 30_000, 1),
    bodyLimitBytes: bodyLimitMib * 2 ** 20,
    jsonBodyLimitBytes: jsonLimitMib * 2 ** 20,
    bodyTimeoutMs: milliseconds('body-timeout', values['body-timeout'], 30_000, 1),
    batchMaxSize: integer('batch-size', values['batch-size'], 256, 1, 2 ** 20),
    batchMaxWaitMs: milliseconds('batch-wait', values['batch-wait'], 1, 0),
    maxBatchDelayMs: milliseconds('max-batch-delay-ms', values['max-batch-delay-ms'], 1, 0),
    drainMs: milliseconds('drain', values.drain, DEFAULT_DRAIN_MS, 0),
    log: values.log === true,
  };
  if (values.redis !== undefined) {
    redisUrlOption('redis', values.redis);
    config.redis = values.redis;
  }
  if (values.queue !== undefined) {
    if (config.redis === undefined) throw new UsageError('--queue needs --redis');
    config.queueName = queueNameOption('queue', values.queue);
  }
  if (values.prefix !== undefined) {
    if (config.redis === undefined) throw new UsageError('--prefix needs --redis');
    config.queuePrefix = queueNameOption('prefix', values.prefix);
  }
  if (values['blob-redis'] !== undefined) {
    if (config.redis === undefined) throw new UsageError('--blob-redis needs --redis');
    config.blobRedis = values['blob-redis'].map((url) => redisUrlOption('blob-redis', url));
  }
  const queueLimits = queueFrontLimits(values, config.redis);
  if (queueLimits !== undefined) config.queueLimits = queueLimits;
  const machineCount = devices === 'all' ? await machineDeviceCount() : 0;
  const workerDevices = spreadDevices(devices, machineCount);
  const workers =
    values.workers === undefined
      ? defaultWorkerCount(availableParallelism(), devices === 'all' ? machineCount : devices.length)
      : integer(
          'workers',
          values.workers,
          1,
          0,
          MAX_WORKERS,
          ` (4 per CPU, ${availableParallelism()} CPUs here, and 256 in all)`,
        );
  const standby = integer('standby', values.standby, 0, 0, MAX_WORKERS);
  // Spares replace supervised workers; with --workers 0 there is no supervisor to keep them.
  if (standby > 0 && workers === 0) throw new UsageError('--standby needs --workers >= 1');
  return { help: false, workers, standby, json: values.json === true, config, workerDevices };
}

/**
 * How many devices `--devices all` spreads the workers over, asked in the primary (the workers
 * are assigned before they start); 0 without a driver or a device (Device.count() says so rather
 * than throwing): the workers then serve without an engine and say why.
 */
export async function machineDeviceCount(): Promise<number> {
  try {
    const { Device } = await import('../../runtime/device.js');
    return Device.count();
  } catch {
    // A driver that fails: each worker meets the same failure and reports it.
    return 0;
  }
}
