/** `tscuda worker`: a GPU host's worker of the Redis job queue (see docs/scale-out.md). */
import type { JobEngineLike } from '../../engine/types.js';
import { checkRedis, describeConnection } from '../../queue/connection.js';
import { DEFAULT_QUEUE_NAME } from '../../queue/options.js';
import { runQueueWorker, type QueueWorker } from '../../queue/worker.js';
import { checkWorkerName, DEFAULT_LOCK_DURATION_MS } from '../../queue/worker-options.js';
import type { CliCommand } from '../command.js';
import { DEVICE_FLAGS, deviceOptionsUsage, deviceSelection } from '../device-option.js';
import {
  intOption,
  parseCommandLine,
  queueNameOption,
  redisUrlOption,
  reportUsageError,
  UsageError,
} from '../options.js';
import { gpuUnavailableLine } from '../gpu-errors.js';
import { CommandReport } from '../report.js';
import type { Precision } from '../../runtime/fft/precision.js';
import { listenMetrics, type WorkerMetrics } from './worker-metrics.js';

const USAGE = `usage: tscuda worker --redis URL [options]
Takes jobs from the Redis job queue and runs them on this host's GPUs (one JobEngine over
--devices). Run one per GPU host; submit with JobQueue (tscuda/queue) or tscuda serve --redis.
Delivery is at-least-once: a job whose worker dies (SIGKILL, lost CUDA context) is started again
by another worker, up to its attempts, then fails with the reason.
  --redis URL         Redis, e.g. redis://10.0.0.5:6379 (required; unreachable at start: exit 1)
  --queue NAME        queue name (default ${DEFAULT_QUEUE_NAME}); clients must use the same
  --prefix P          Redis key prefix (default tscuda)
  --blob-redis URL    a Redis that holds samples and results (repeat for several; default the
                      --redis one); clients must list the same, in the same order
${deviceOptionsUsage(22, 'one JobEngine runs over all of them')}
  --lanes N           lanes (CUDA streams) per device (default 4)
  --precision P       f32 (default) or f64 arithmetic on the GPU
  --concurrency N     jobs held at once (default 3 per lane)
  --attempts N        most starts of one job on any worker, whatever it asked (default 100)
  --lock-ms MS        a job's lock; a dead worker's job is retried after about this (default 30000)
  --stalled-interval-ms MS
                      how often to look for jobs of dead workers (default 2000, at most
                      --lock-ms): a killed worker's jobs restart within --lock-ms + 2 of these
  --rate N/MS         this worker starts at most N jobs per MS milliseconds
  --max-result-mb N   largest result stored, MiB (default 512)
  --metrics-port N    serve /metrics (Prometheus) and /ready on this port (default: none)
  --log-interval S    seconds between summary lines on stderr (default 10; 0: none)
  --name NAME         this worker's name in results and logs (default host:pid:random)
  --json              failures, and the start once taking jobs, as JSON objects on stdout
  --help              this text
SIGTERM or SIGINT stops gracefully: take nothing new, finish and store the jobs held, exit 0.
A lost CUDA context: the jobs held go back to the queue, exit 1 (let systemd restart it).
example: tscuda worker --redis redis://10.0.0.5:6379 --devices all --metrics-port 9400`;

/** The worker's options from its arguments. */
export function parseWorkerArgs(args: string[]) {
  // The CLI's one parser: `--lanes -1` reaches the option's own check, not node:util's "ambiguous".
  const { values } = parseCommandLine(
    args,
    {
      redis: { type: 'string' },
      'blob-redis': { type: 'string', multiple: true },
      queue: { type: 'string' },
      prefix: { type: 'string' },
      ...DEVICE_FLAGS,
      lanes: { type: 'string' },
      precision: { type: 'string' },
      concurrency: { type: 'string' },
      attempts: { type: 'string' },
      'lock-ms': { type: 'string' },
      'stalled-interval-ms': { type: 'string' },
      rate: { type: 'string' },
      'max-result-mb': { type: 'string' },
      'metrics-port': { type: 'string' },
      'log-interval': { type: 'string' },
      name: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    false,
  );
  if (values.help === true) return { help: true as const };
  if (values.redis === undefined) throw new UsageError('--redis URL is required (e.g. --redis redis://127.0.0.1:6379)');
  redisUrlOption('redis', values.redis);
  const blobRedis = values['blob-redis']?.map((url) => redisUrlOption('blob-redis', url));
  // The CLI's one device option: every GPU by default.
  const devices = deviceSelection(values);
  const precision = values.precision ?? 'f32';
  if (precision !== 'f32' && precision !== 'f64')
    throw new UsageError(`--precision must be f32 or f64, got ${JSON.stringify(precision)}`);
  let rateLimit: { max: number; durationMs: number } | undefined;
  if (values.rate !== undefined) {
    const m = /^(\d+)\/(\d+)$/.exec(values.rate);
    if (m === null || Number(m[1]) < 1 || Number(m[2]) < 1)
      throw new UsageError(`--rate must be N/MS (e.g. 100/1000), got ${JSON.stringify(values.rate)}`);
    rateLimit = { max: Number(m[1]), durationMs: Number(m[2]) };
  }
  const metricsPort = intOption('metrics-port', values['metrics-port'], 0, 65535);
  // 512 MiB: Redis's longest string.
  const maxResultMb = intOption('max-result-mb', values['max-result-mb'], 1, 512) ?? 512;
  return {
    help: false as const,
    redis: values.redis,
    blobRedis,
    queue: queueNameOption('queue', values.queue),
    prefix: queueNameOption('prefix', values.prefix),
    devices,
    lanes: intOption('lanes', values.lanes, 1, 256) ?? 4,
    precision: precision as Precision,
    concurrency: intOption('concurrency', values.concurrency),
    maxAttempts: intOption('attempts', values.attempts),
    lockDurationMs: intOption('lock-ms', values['lock-ms'], 100, 3_600_000) ?? DEFAULT_LOCK_DURATION_MS,
    stalledIntervalMs: intOption('stalled-interval-ms', values['stalled-interval-ms'], 100, 3_600_000),
    rateLimit,
    maxResultBytes: maxResultMb * 2 ** 20,
    metricsPort,
    logIntervalMs: (intOption('log-interval', values['log-interval'], 0, 86_400) ?? 10) * 1000,
    name: workerNameOption(values.name),
    json: values.json === true,
  };
}

/** --name by the queue's own rule (queue/worker-options.ts), at parse time: bad usage before any Redis or GPU check. */
function workerNameOption(value: string | undefined): string | undefined {
  try {
    return checkWorkerName('--name', value);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

async function work(args: string[]): Promise<number> {
  let options;
  try {
    options = parseWorkerArgs(args);
  } catch (error) {
    return reportUsageError('worker', (error as Error).message, args);
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const report = new CommandReport('worker', options.json);
  try {
    for (const url of [options.redis, ...(options.blobRedis ?? [])]) await checkRedis(url);
  } catch (error) {
    return report.fail((error as Error).message, 1, (error as Error).name);
  }
  // Bound before the engine and the worker: a port in use must not leave a worker taking jobs.
  let metrics: WorkerMetrics | undefined;
  try {
    if (options.metricsPort !== undefined) metrics = await listenMetrics(options.metricsPort);
  } catch (error) {
    return report.fail((error as Error).message, 1, (error as Error).name);
  }
  // Whatever fails from here to a running worker closes what was opened: a listening port or an
  // engine left open would keep the process from exiting.
  let engine: (JobEngineLike & { close(): Promise<void> }) | number | undefined;
  let worker;
  try {
    engine = await startEngine(options, report);
    if (typeof engine === 'number') return engine;
    worker = await startWorker(options, engine);
  } finally {
    if (worker === undefined) {
      metrics?.close();
      if (typeof engine === 'object') await engine.close().catch(() => undefined);
    }
  }
  report.result({ worker: worker.name, queue: options.queue ?? DEFAULT_QUEUE_NAME });
  const log = (line: string): void => console.error(line);
  if (metrics !== undefined) {
    metrics.attach(worker);
    log(`tscuda worker: /metrics and /ready on port ${metrics.port}`);
  }
  const outcome = await Promise.race([untilSignal(), worker.stopped.then(() => 'stopped')]);
  if (outcome !== 'stopped') {
    log(`tscuda worker: ${outcome}: finishing the jobs held (send it again to exit at once)`);
    process.once('SIGTERM', () => process.exit(1));
    process.once('SIGINT', () => process.exit(1));
    await worker.close();
  }
  metrics?.close();
  await engine.close().catch(() => undefined);
  if (worker.lostError !== undefined) {
    return report.fail(
      `stopped: the engine lost its GPU context (${describeConnection(options.redis)} keeps its jobs for other workers)`,
      1,
      'EngineLostError',
    );
  }
  return 0;
}

/** The queue worker over `engine`, taking jobs from the moment it resolves. */
function startWorker(
  options: Exclude<ReturnType<typeof parseWorkerArgs>, { help: true }>,
  engine: JobEngineLike,
): Promise<QueueWorker> {
  const log = (line: string): void => console.error(line);
  return runQueueWorker({
    connection: options.redis,
    blobStores: options.blobRedis,
    engine,
    name: options.queue,
    prefix: options.prefix,
    workerName: options.name,
    concurrency: options.concurrency,
    maxAttempts: options.maxAttempts,
    lockDurationMs: options.lockDurationMs,
    stalledIntervalMs: options.stalledIntervalMs,
    rateLimit: options.rateLimit,
    maxResultBytes: options.maxResultBytes,
    logIntervalMs: options.logIntervalMs,
    log,
  });
}

/** The worker's engine over its devices, or the exit code (1) after one line saying why there is none. */
async function startEngine(
  options: { devices: 'all' | number[]; lanes: number; precision: Precision },
  report: CommandReport,
): Promise<(JobEngineLike & { close(): Promise<void> }) | number> {
  try {
    // Asked first (as serve does): the placement rule refuses "no device visible" like a missing
    // ordinal, and the user needs the reason (no driver, no device) in words.
    const { Device } = await import('../../runtime/device.js');
    // Every job needs cuFFT: a host without it says so now, not at its first job.
    const availability = Device.available({ needs: ['cufft'] });
    if (!availability.ok) return report.fail(availability.reason, 1, 'GpuUnavailable');
    const { JobEngine } = await import('../../engine/job-engine.js');
    return new JobEngine({
      devices: options.devices,
      lanes: options.lanes,
      precision: options.precision,
      label: 'worker',
    });
  } catch (error) {
    const line = gpuUnavailableLine('worker', error);
    if (line === undefined) throw error;
    return report.fail(line, 1, 'GpuUnavailable');
  }
}

/** `tscuda worker`. */
export const workerCommand: CliCommand = {
  name: 'worker',
  summary: 'GPU worker of the Redis job queue: runs queued jobs on this host (--help)',
  usage: USAGE,
  run: work,
};
