/**
 * The queue bench's floor: bare BullMQ (Queue, a Worker whose processor returns at once,
 * QueueEvents) making the same data moves as a tscuda queue job, on the same Redis servers: the
 * client stores the samples on the job's blob store and adds the job; the worker reads the
 * samples, deletes them and stores a result of the size tscuda's job returns; the client hears of
 * the completion through QueueEvents, reads the result and deletes it. No validation, no engine,
 * no admission ledger, no watcher: what the queue's transport alone costs per job.
 * Shared by the bench (its latency, in this process) and bench/queue/floor-child.ts (the worker
 * and client processes of the throughput runs).
 */
import { Queue, QueueEvents, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { Redis } from 'ioredis';

/** The bytes one job moves: its samples in, its result out (filtered wave and spectrum, as tscuda's STFT job returns them). */
export interface FloorJobShape {
  sampleBytes: number;
  resultBytes: number;
}

/** The queue bench's mix (16 x 16384 f32, a 64-bin preview) and its small job (4 x 4096 f32, 64 bins). */
export const FLOOR_MIX: FloorJobShape = { sampleBytes: 16 * 16384 * 4, resultBytes: 16 * 16384 * 4 + 16 * 64 * 4 };
export const FLOOR_SMALL: FloorJobShape = { sampleBytes: 4 * 4096 * 4, resultBytes: 4 * 4096 * 4 + 4 * 64 * 4 };

/** How long stored samples and results live if nothing deletes them, ms. */
const TTL_MS = 60_000;

/** What a floor job carries in BullMQ: where its samples are and how large a result to store. */
interface FloorJobData {
  store: number;
  inputKey: string;
  resultBytes: number;
}

/** The blob stores of a run: the queue's Redis when none are given. */
function storesFor(redisUrl: string, blobStores: readonly string[]): Redis[] {
  return (blobStores.length === 0 ? [redisUrl] : blobStores).map(
    (url) => new Redis(url, { maxRetriesPerRequest: null }),
  );
}

/** A floor worker: BullMQ's Worker with `concurrency` jobs at once, each moving the job's bytes and returning at once. */
export async function floorWorker(
  redisUrl: string,
  queue: string,
  blobStores: readonly string[],
  concurrency: number,
): Promise<{ close(): Promise<void> }> {
  const stores = storesFor(redisUrl, blobStores);
  const results = new Map<number, Buffer>();
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const worker = new Worker(
    queue,
    async (job: Job<FloorJobData>) => {
      const { store, inputKey, resultBytes } = job.data;
      const redis = stores[store]!;
      const samples = await redis.getBuffer(inputKey);
      if (samples === null) throw new Error(`floor job ${job.id}: no samples under ${inputKey}`);
      let result = results.get(resultBytes);
      if (result === undefined) results.set(resultBytes, (result = Buffer.alloc(resultBytes, 1)));
      const resultKey = `${inputKey}:result`;
      await Promise.all([redis.del(inputKey), redis.set(resultKey, result, 'PX', TTL_MS)]);
      return { store, resultKey };
    },
    { connection: connection as unknown as ConnectionOptions, concurrency },
  );
  worker.on('error', () => undefined);
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      connection.disconnect();
      for (const s of stores) s.disconnect();
    },
  };
}

/** A floor client: runs jobs of `shape` one after another or many at once through `run`. */
export interface FloorClient {
  run(shape: FloorJobShape): Promise<void>;
  close(): Promise<void>;
}

/** A floor client on `queue` (its Queue, a QueueEvents listener for completions, the blob stores). */
export async function floorClient(
  redisUrl: string,
  queue: string,
  blobStores: readonly string[],
): Promise<FloorClient> {
  const stores = storesFor(redisUrl, blobStores);
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const eventsConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const q = new Queue(queue, { connection: connection as unknown as ConnectionOptions });
  const events = new QueueEvents(queue, { connection: eventsConnection as unknown as ConnectionOptions });
  await events.waitUntilReady();
  const pending = new Map<
    string,
    { resolve: (v: { store: number; resultKey: string }) => void; reject: (e: Error) => void }
  >();
  events.on('completed', ({ jobId, returnvalue }) => {
    const p = pending.get(jobId);
    if (p === undefined) return;
    pending.delete(jobId);
    p.resolve(
      (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as { store: number; resultKey: string },
    );
  });
  events.on('failed', ({ jobId, failedReason }) => {
    const p = pending.get(jobId);
    if (p === undefined) return;
    pending.delete(jobId);
    p.reject(new Error(`floor job ${jobId} failed: ${failedReason}`));
  });
  const samples = new Map<number, Buffer>();
  let next = 0;
  return {
    async run(shape) {
      const n = next++;
      const id = `${process.pid}-${n}`;
      const store = n % stores.length;
      const redis = stores[store]!;
      let bytes = samples.get(shape.sampleBytes);
      if (bytes === undefined) samples.set(shape.sampleBytes, (bytes = Buffer.alloc(shape.sampleBytes, 2)));
      const inputKey = `floor:${queue}:${id}`;
      await redis.set(inputKey, bytes, 'PX', TTL_MS);
      const done = new Promise<{ store: number; resultKey: string }>((resolve, reject) =>
        pending.set(id, { resolve, reject }),
      );
      await q.add('job', { store, inputKey, resultBytes: shape.resultBytes } satisfies FloorJobData, {
        jobId: id,
        removeOnComplete: { age: 60 },
        removeOnFail: { age: 60 },
      });
      const { resultKey } = await done;
      const result = await redis.getBuffer(resultKey);
      if (result === null || result.byteLength !== shape.resultBytes)
        throw new Error(`floor job ${id}: result of ${result?.byteLength ?? 0} bytes`);
      await redis.del(resultKey);
    },
    async close() {
      await events.close();
      await q.close();
      connection.disconnect();
      eventsConnection.disconnect();
      for (const s of stores) s.disconnect();
    },
  };
}

/** Runs `count` jobs of `shape` with `window` in flight; ms. */
export async function floorThroughput(
  client: FloorClient,
  shape: FloorJobShape,
  count: number,
  window: number,
): Promise<number> {
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (started++ < count) await client.run(shape);
    }),
  );
  return performance.now() - t0;
}
