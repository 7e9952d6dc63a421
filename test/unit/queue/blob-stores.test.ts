/**
 * Blob stores: a queue whose samples and results live on other Redis servers than its own (two
 * here) spreads the jobs over them by id, keeps none of their bytes in the queue's Redis, answers
 * any id from another client, cancels and forgets on the right store, and a worker that lists
 * another number of stores fails a job with that reason instead of looking in the wrong place.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeOf } from '../../../src/queue/blob-stores.js';
import { JobQueue, QueueJobError, runQueueWorker, type QueueWorker } from '../../../src/queue/index.js';
import { FakeEngine } from '../server/fake-engine.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const randomData = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

describe('storeOf', () => {
  it('picks every store about as often, the same one for the same id', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[storeOf(`j${randomUUID()}`, 3)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(storeOf('jabc', 5)).toBe(storeOf('jabc', 5));
    expect(storeOf('jabc', 1)).toBe(0);
  });
});

describe.skipIf(redisSkipReason !== undefined)('blob stores over real Redis servers', () => {
  let queueRedis: TestRedis;
  const stores: TestRedis[] = [];
  const open: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    queueRedis = await startRedis();
    stores.push(await startRedis(), await startRedis());
  });
  afterAll(async () => {
    for (const o of open.reverse()) await o.close().catch(() => undefined);
    for (const r of [queueRedis, ...stores]) await r?.dispose();
  }, 30_000);

  it('keeps every job bytes on the store its id picks, none in the queue Redis, and round-trips them', async () => {
    const name = `bs-${randomUUID()}`;
    const blobStores = stores.map((s) => s.url);
    const queue = new JobQueue({ connection: queueRedis.url, name, blobStores });
    open.push(queue);
    const engine = new FakeEngine({ manual: true });
    const worker: QueueWorker = await runQueueWorker({ connection: queueRedis.url, engine, name, blobStores });
    open.push(worker);
    const inputs = Array.from({ length: 12 }, () => randomData(256));
    const handles = await Promise.all(inputs.map((data) => queue.submit({ data, flags: ['stft'], previewBins: 4 })));
    // The samples wait on their stores while the engine holds the jobs.
    const clients = [queueRedis, ...stores].map((r) => new Redis(r.url));
    try {
      await new Promise((r) => setTimeout(r, 300));
      const keyCount = async (r: Redis): Promise<number> => (await r.keys(`tscuda:${name}:blob:*`)).length;
      expect(await keyCount(clients[0]!)).toBe(0);
      const onStores = await Promise.all(clients.slice(1).map(keyCount));
      expect(onStores[0]! + onStores[1]!).toBe(12);
      expect(onStores[0]).toBe(handles.filter((h) => storeOf(h.id, 2) === 0).length);
      // The worker holds 6 at a time (2 lanes x 3): release them as they come.
      const releasing = setInterval(() => engine.release(), 20);
      const results = await Promise.all(handles.map((h) => h.result)).finally(() => clearInterval(releasing));
      results.forEach((r, i) =>
        expect(Array.from(r.filtered!)).toEqual(Array.from(inputs[i]!, (v) => Math.fround(v * 2))),
      );
      // Another client finds the results on their stores; nothing of theirs is in the queue's Redis.
      const other = new JobQueue({ connection: queueRedis.url, name, blobStores });
      open.push(other);
      expect((await other.view(handles[3]!.id)).result?.filtered).toEqual(results[3]!.filtered);
      expect(await keyCount(clients[0]!)).toBe(0);
      expect(await other.forget(handles[3]!.id)).toBe(true);
      expect((await other.view(handles[3]!.id)).status).toBe('unknown');
      // A queued job (no worker on this queue) is cancelled on its store: its samples go, its marker stays.
      const idle = new JobQueue({ connection: queueRedis.url, name: `${name}-idle`, blobStores });
      open.push(idle);
      const queued = await idle.submit({ data: randomData(64), flags: ['stft'] });
      const store = clients[1 + storeOf(queued.id, 2)]!;
      expect(await store.keys(`tscuda:${name}-idle:blob:in:*`)).toHaveLength(1);
      expect(await other.cancel(queued.id)).toBe(false); // another queue name: not its job
      expect(await idle.cancel(queued.id)).toBe(true);
      expect((await idle.view(queued.id)).status).toBe('cancelled');
      expect(await store.keys(`tscuda:${name}-idle:blob:in:*`)).toHaveLength(0);
    } finally {
      for (const c of clients) c.disconnect();
    }
  });

  it('fails a job, with the reason, on a worker that lists another number of stores', async () => {
    const name = `bs-${randomUUID()}`;
    const queue = new JobQueue({ connection: queueRedis.url, name, blobStores: stores.map((s) => s.url) });
    open.push(queue);
    const worker = await runQueueWorker({ connection: queueRedis.url, engine: new FakeEngine(), name });
    open.push(worker);
    const error = await (await queue.submit({ data: randomData(64), flags: ['stft'] })).result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueJobError);
    expect((error as QueueJobError).reason).toMatch(/blob stores: the job's client lists 2, worker .* lists 1/);
  });

  it('is not reachable while a store is away', async () => {
    const queue = new JobQueue({
      connection: queueRedis.url,
      name: `bs-${randomUUID()}`,
      blobStores: [stores[0]!.url, 'redis://127.0.0.1:1'],
    });
    open.push(queue);
    await new Promise((r) => setTimeout(r, 200));
    expect(queue.reachable).toBe(false);
    expect(await queue.ping(200)).toBe(false);
    await expect(queue.submit({ data: randomData(64), flags: ['stft'] })).rejects.toMatchObject({
      name: 'QueueUnavailableError',
    });
  });
});
