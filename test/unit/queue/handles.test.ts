/**
 * Job handles misused, against a real redis-server: a second handle on an id (`queue.job(id)`
 * while the one from submit() is pending) made the first one's result hang forever; a `status`
 * listener that throws left the result unsettled and was an unhandled rejection; ids that are not
 * strings read as jobs Redis does not hold, and a megabyte id was copied whole into messages.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue, runQueueWorker, UnknownQueueJobError, type QueueWorker } from '../../../src/queue/index.js';
import { FakeEngine } from '../server/fake-engine.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const spec = (): { data: Float32Array; flags: string[] } => ({
  data: Float32Array.from({ length: 64 }, () => Math.random() * 2 - 1),
  flags: ['stft'],
});

/** `promise`'s outcome within `ms`: 'resolved', 'rejected' or 'pending'. */
async function outcomeWithin(promise: Promise<unknown>, ms: number): Promise<'resolved' | 'rejected' | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.then(
        () => 'resolved' as const,
        () => 'rejected' as const,
      ),
      new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(redisSkipReason !== undefined)('job handles against a real Redis', () => {
  let redis: TestRedis;
  const open: { close(): Promise<void> }[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  /** A client and a worker of a fresh queue (the worker holds each job `delayMs`). */
  const queueAndWorker = async (delayMs = 100): Promise<{ queue: JobQueue; worker: QueueWorker }> => {
    const name = `handles-${randomUUID()}`;
    const queue = new JobQueue({ connection: redis.url, name, pollIntervalMs: 5000 });
    open.push(queue);
    const worker = await runQueueWorker({ connection: redis.url, name, engine: new FakeEngine({ delayMs }) });
    open.push(worker);
    return { queue, worker };
  };

  beforeAll(async () => {
    redis = await startRedis();
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  }, 15_000);
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await redis?.dispose();
  });

  it('job(id) while the handle from submit() is pending is that handle, and its result settles', async () => {
    const { queue } = await queueAndWorker();
    const handle = await queue.submit(spec());
    // Another part of the program looks the job up by id before anyone read the result.
    const again = queue.job(handle.id);
    expect(again).toBe(handle);
    const [first, second] = [handle.result, again.result];
    // The poll (5 s) would settle a stray handle late: within 3 s only the events can.
    expect(await outcomeWithin(Promise.all([first, second]), 3000)).toBe('resolved');
    expect(handle.lastStatus).toBe('ready');
    // Settled, the handle is let go: a new job(id) is a fresh handle that reads Redis.
    const later = queue.job(handle.id);
    expect(later).not.toBe(handle);
    expect((await later.result).queue.jobId).toBe(handle.id);
  }, 15_000);

  it('two job(id) calls on a queued job give one handle, which settles', async () => {
    const { queue } = await queueAndWorker(300);
    const handle = await queue.submit(spec());
    const [a, b] = [queue.job(handle.id), queue.job(handle.id)];
    expect(a).toBe(handle);
    expect(b).toBe(handle);
    expect(await outcomeWithin(Promise.all([handle.result, a.result, b.result]), 3000)).toBe('resolved');
  }, 15_000);

  it('a status or progress listener that throws: the result settles, the other listeners run, no unhandled rejection', async () => {
    const { queue } = await queueAndWorker();
    const handle = await queue.submit(spec());
    const seen: string[] = [];
    handle.on('status', (status) => {
      seen.push(`first ${status}`);
      throw new Error(`listener broken on ${status}`);
    });
    handle.on('progress', () => {
      throw new Error('progress listener broken');
    });
    handle.once('status', (status) => seen.push(`once ${status}`));
    expect(await outcomeWithin(handle.result, 3000)).toBe('resolved');
    expect(seen).toContain('first ready');
    // A `once` listener still runs once, whatever the one before it did.
    expect(seen.filter((s) => s.startsWith('once'))).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(unhandled).toEqual([]);

    // With an 'error' listener, the listener's error goes there.
    const next = await queue.submit(spec());
    const errors: unknown[] = [];
    next.on('error', (error) => errors.push(error));
    next.on('status', (status) => {
      if (status === 'ready') throw new Error('broken on ready');
    });
    expect(await outcomeWithin(next.result, 3000)).toBe('resolved');
    expect(errors.map((e) => (e as Error).message)).toEqual(['broken on ready']);
  }, 15_000);

  it('ids that are not strings are a TypeError; a huge id is cut in messages', async () => {
    const queue = new JobQueue({ connection: redis.url, name: `handles-${randomUUID()}` });
    open.push(queue);
    for (const id of [undefined, {}, 123, null]) {
      await expect(queue.view(id as never)).rejects.toThrow(/^view: a job id must be a string, got/);
      await expect(queue.cancel(id as never)).rejects.toThrow(TypeError);
      await expect(queue.forget(id as never)).rejects.toThrow(TypeError);
      expect(() => queue.job(id as never)).toThrow(/^job: a job id must be a string/);
    }
    const error = await queue.job('j'.repeat(1 << 20)).result.catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(UnknownQueueJobError);
    expect((error as Error).message.length).toBeLessThan(400);
    expect((error as UnknownQueueJobError).jobId).toHaveLength(1 << 20);
  }, 15_000);
});
