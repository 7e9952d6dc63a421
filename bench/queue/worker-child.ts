/**
 * One queue worker process of the queue bench: runQueueWorker over a real JobEngine on the GPUs
 * of `--devices`, over the CUDA-free FakeEngine (`--fake MS`: each job takes MS ms), or over the
 * simulated GPU (`--sim NS`: SimEngine, NS ns per sample; `--sim-poll spin` notices its completions
 * on setImmediate as the real poller does, default on timers), so the bench runs without a GPU.
 * Prints `ready` once taking jobs and `completed <id>` per completed job (the fault run counts
 * completions per process), and `cpu <user µs> <system µs>` (process.cpuUsage()) on SIGUSR2;
 * SIGTERM stops it gracefully.
 *   tsx bench/queue/worker-child.ts --redis URL --queue NAME --name W [--devices 0] [--lanes 4] [--lock-ms 30000] [--concurrency N] [--blob-redis URL ...] [--fake MS | --sim NS [--sim-poll timer|spin]]
 */
import { parseArgs } from 'node:util';
import type { JobEngineLike } from '../../src/engine/index.js';
import { runQueueWorker } from '../../src/queue/index.js';

const { values } = parseArgs({
  options: {
    redis: { type: 'string' },
    queue: { type: 'string' },
    name: { type: 'string' },
    devices: { type: 'string', default: '0' },
    lanes: { type: 'string', default: '4' },
    'lock-ms': { type: 'string', default: '30000' },
    fake: { type: 'string' },
    sim: { type: 'string' },
    'sim-poll': { type: 'string', default: 'timer' },
    concurrency: { type: 'string' },
    'blob-redis': { type: 'string', multiple: true },
  },
});
if (values.redis === undefined || values.queue === undefined || values.name === undefined)
  throw new Error('worker-child: --redis, --queue and --name are required');

let engine: JobEngineLike;
if (values.sim !== undefined) {
  const { SimEngine } = await import('./sim-engine.js');
  const poll = values['sim-poll'];
  if (poll !== 'timer' && poll !== 'spin')
    throw new Error(`worker-child: --sim-poll must be timer or spin, got ${poll}`);
  engine = new SimEngine({ nsPerSample: Number(values.sim), lanes: Number(values.lanes), label: values.name, poll });
} else if (values.fake !== undefined) {
  const { FakeEngine } = await import('../../test/unit/server/fake-engine.js');
  engine = new FakeEngine({ delayMs: Number(values.fake), maxQueued: 1 << 20 });
} else {
  const { JobEngine } = await import('../../src/engine/index.js');
  engine = new JobEngine({
    devices: values.devices.split(',').map(Number),
    lanes: Number(values.lanes),
    label: values.name,
  });
}
const lockMs = Number(values['lock-ms']);
const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
const worker = await runQueueWorker({
  connection: values.redis,
  engine,
  name: values.queue,
  workerName: values.name,
  lockDurationMs: lockMs,
  stalledIntervalMs: lockMs,
  concurrency,
  blobStores: values['blob-redis'],
});
worker.on('settled', (e) => {
  if (e.outcome === 'completed') process.stdout.write(`completed ${e.jobId}\n`);
});
process.on('SIGUSR2', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`cpu ${user} ${system}\n`);
});
process.on('SIGTERM', () => {
  void worker.close().then(async () => {
    await engine.close();
    process.exit(0);
  });
});
process.stdout.write('ready\n');
