/**
 * JobQueue.close() raced, against a real redis-server. Found by probing: a second close() while
 * the first was under way resolved at once (before the connections were closed), and a submit
 * racing close() on a fresh client waited the full 2 s for a Redis it would never reach, then
 * blamed Redis instead of the close.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue, QueueUnavailableError } from '../../../src/queue/index.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const spec = (): { data: Float32Array; flags: string[] } => ({
  data: Float32Array.from({ length: 64 }, () => Math.random() * 2 - 1),
  flags: ['stft'],
});

describe.skipIf(redisSkipReason !== undefined)('JobQueue.close() raced', () => {
  let redis: TestRedis;

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.dispose();
  });

  it('a second close() is the first one: it resolves once the client is closed', async () => {
    const queue = new JobQueue({ connection: redis.url, name: `close-${randomUUID()}` });
    await queue.ready();
    const handle = await queue.submit(spec());
    const pending = handle.result;
    const first = queue.close();
    const second = queue.close();
    expect(second).toBe(first);
    let firstDone = false;
    void first.then(() => (firstDone = true));
    await second;
    expect(firstDone).toBe(true);
    expect(queue.reachable).toBe(false);
    await expect(pending).rejects.toBeInstanceOf(QueueUnavailableError);
  }, 15_000);

  it('a submit racing close() on a fresh client rejects at once, saying the client is closed', async () => {
    const queue = new JobQueue({ connection: redis.url, name: `close-${randomUUID()}` });
    const start = performance.now();
    const submitting = queue.submit(spec());
    const closing = queue.close();
    await expect(submitting).rejects.toThrow(/^queue close-\S+ is closed \(nothing was queued\)$/);
    // Without the close cutting its wait, the submit waited SUBMIT_CONNECT_WAIT_MS (2 s).
    expect(performance.now() - start).toBeLessThan(1800);
    await closing;
  }, 15_000);
});
