/**
 * BullMQ's own floor for one small job at a time: what `queue_overhead_p50_ms` could be if tscuda
 * added nothing. A worker process (a bare BullMQ Worker whose processor returns at once) and this
 * process as the client (Queue.add, then the 'completed' event read by QueueEvents, as JobQueue
 * hears it), over a real redis-server on loopback. Variants, each `--jobs` jobs one at a time:
 *   bare           add with no payload, an empty return value
 *   prioritized    the same with a priority (JobQueue's add: every job has one)
 *   payload        + the small job's samples (4 x 4096 f32, 64 KiB) in a key the worker reads and
 *                  a result of the same size in a key the client reads (tscuda's path's round trips)
 * Prints p50 and p90 of each, ms. Run beside bench/queue/main.ts --only-overhead on the same host.
 *   tsx bench/probe/bullmq-floor.ts [--jobs 300]
 * The worker side runs this file with `--worker URL QUEUE`.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { startRedis } from '../../test/unit/queue/redis-server.js';
import { percentile } from '../harness/stats.js';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '300' }, worker: { type: 'string', multiple: true } },
});
const PAYLOAD_BYTES = 4 * 4096 * 4;

if (values.worker !== undefined) {
  const [url, name] = values.worker;
  const blobs = new Redis(url!);
  const worker = new Worker(
    name!,
    async (job: Job<{ key?: string }>) => {
      if (job.data.key === undefined) return 0;
      const input = await blobs.getBuffer(job.data.key);
      await blobs.set(`${job.data.key}:out`, input!, 'PX', 60_000);
      return `${job.data.key}:out`;
    },
    { connection: new Redis(url!, { maxRetriesPerRequest: null }), concurrency: 1 },
  );
  await worker.waitUntilReady();
  console.log('ready');
  process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
} else {
  const redis = await startRedis();
  const name = `floor-${randomUUID()}`;
  const child = execa('node', ['--import', 'tsx', import.meta.filename, '--worker', redis.url, '--worker', name], {
    reject: false,
    stderr: 'inherit',
  });
  await new Promise<void>((resolve) =>
    child.stdout!.on('data', (d: Buffer) => String(d).includes('ready') && resolve()),
  );
  const queue = new Queue(name, { connection: new Redis(redis.url) });
  const events = new QueueEvents(name, { connection: new Redis(redis.url, { maxRetriesPerRequest: null }) });
  await events.waitUntilReady();
  const blobs = new Redis(redis.url);
  const payload = Buffer.from(Float32Array.from({ length: PAYLOAD_BYTES / 4 }, () => Math.random()).buffer);
  const waiting = new Map<string, () => void>();
  events.on('completed', ({ jobId }) => waiting.get(jobId)?.());
  const one = async (variant: string): Promise<number> => {
    const t0 = performance.now();
    const id = randomUUID();
    const done = new Promise<void>((resolve) => waiting.set(id, resolve));
    if (variant === 'payload') {
      const key = `in:${id}`;
      await Promise.all([
        blobs.set(key, payload, 'PX', 60_000),
        queue.add('j', { key }, { jobId: id, priority: 1000, removeOnComplete: true }),
      ]);
      await done;
      const out = await blobs.getBuffer(`${key}:out`);
      if (out?.length !== PAYLOAD_BYTES) throw new Error('bullmq-floor: the result did not come back');
    } else {
      await queue.add(
        'j',
        {},
        { jobId: id, removeOnComplete: true, ...(variant === 'prioritized' ? { priority: 1000 } : {}) },
      );
      await done;
    }
    waiting.delete(id);
    return performance.now() - t0;
  };
  for (const variant of ['bare', 'prioritized', 'payload']) {
    for (let i = 0; i < 30; i++) await one(variant);
    const ms: number[] = [];
    for (let i = 0; i < Number(values.jobs); i++) ms.push(await one(variant));
    console.log(
      `bullmq floor ${variant.padEnd(12)} p50 ${percentile(ms, 0.5).toFixed(3)} ms  p90 ${percentile(ms, 0.9).toFixed(3)} ms  (${ms.length} jobs one at a time)`,
    );
  }
  child.kill('SIGTERM');
  await child;
  await Promise.all([queue.close(), events.close()]);
  blobs.disconnect();
  await redis.dispose();
  process.exit(0);
}
