/**
 * The queue client under misuse, against a real Redis: every call settles (resolves or rejects
 * with an error naming the problem), none crashes the process. Found by probing: an abort after
 * close() was an unhandled rejection, a handle on an id Redis does not hold never settled, reads
 * waited for a Redis that was away (or a client that was closed) forever, a URL naming a database
 * as `/abc` crashed and one Redis does not have hung, `rateLimit: { max }` meant no limit.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkConnection, checkRedis } from '../../../src/queue/connection.js';
import {
  JobQueue,
  newJobId,
  QueueJobCancelledError,
  QueueUnavailableError,
  UnknownQueueJobError,
} from '../../../src/queue/index.js';
import type { JobSpec } from '../../../src/engine/index.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const spec = (): JobSpec => ({
  data: Float32Array.from({ length: 256 }, () => Math.random() * 2 - 1),
  fs: 100,
  flags: ['stft'],
});

describe('options refused by name, without a Redis', () => {
  it('a Redis URL whose path is not a database number', () => {
    expect(() => checkConnection('redis://127.0.0.1:6379/abc')).toThrow(/database number.*"\/abc"/);
    expect(checkConnection('redis://127.0.0.1:6379/3')).toBe('redis://127.0.0.1:6379/3');
    expect(checkConnection('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });

  it('a rate limit without its duration (it would mean no limit)', () => {
    expect(() => new JobQueue({ connection: 'redis://127.0.0.1:1', rateLimit: { max: 1 } as never })).toThrow(
      /rateLimit needs both max and durationMs/,
    );
  });
});

describe.skipIf(redisSkipReason !== undefined)('the client against a real Redis', () => {
  let redis: TestRedis;
  const open: JobQueue[] = [];
  const queueOf = (): JobQueue => {
    const q = new JobQueue({ connection: redis.url, name: `misuse-${randomUUID()}`, pollIntervalMs: 100 });
    open.push(q);
    return q;
  };
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

  beforeAll(async () => {
    redis = await startRedis();
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((q) => q.close()));
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await redis.dispose();
  });

  it('an abort after close() is no unhandled rejection; an already aborted signal queues nothing', async () => {
    const queue = queueOf();
    const abort = new AbortController();
    await queue.submit({ ...spec(), signal: abort.signal });
    await queue.close();
    abort.abort();
    await new Promise((r) => setTimeout(r, 200));
    expect(unhandled).toEqual([]);

    const other = queueOf();
    const handle = await other.submit({ ...spec(), signal: AbortSignal.abort() });
    await expect(handle.result).rejects.toBeInstanceOf(QueueJobCancelledError);
    const counts = await other.counts();
    expect(counts.waiting + counts.prioritized + counts.active).toBe(0);
  });

  it('a handle on an id Redis does not hold settles with UnknownQueueJobError', async () => {
    const queue = queueOf();
    await queue.ready();
    await expect(queue.job('jnever-submitted').result).rejects.toBeInstanceOf(UnknownQueueJobError);
  });

  it('reads after close() and while Redis is away reject with QueueUnavailableError, in bounded time', async () => {
    const queue = queueOf();
    await queue.ready();
    await queue.close();
    for (const call of [() => queue.view('jx'), () => queue.counts(), () => queue.cancel('jx'), () => queue.ready()])
      await expect(call()).rejects.toThrow(/is closed/);

    // A short bound: the reads below each wait for a reconnection at most this long.
    const live = new JobQueue({ connection: redis.url, name: `misuse-${randomUUID()}`, commandTimeoutMs: 500 });
    open.push(live);
    await live.ready();
    await redis.stop();
    try {
      // A read that starts as Redis goes away (the client may not have noticed yet) is refused too.
      await expect(live.view(newJobId())).rejects.toBeInstanceOf(QueueUnavailableError);
      const seen = Date.now();
      while (live.reachable && Date.now() - seen < 5000) await new Promise((r) => setTimeout(r, 20));
      const t0 = Date.now();
      await expect(live.view(newJobId())).rejects.toBeInstanceOf(QueueUnavailableError);
      await expect(live.counts()).rejects.toBeInstanceOf(QueueUnavailableError);
      expect(Date.now() - t0).toBeLessThan(2500);
    } finally {
      await redis.start();
    }
  }, 20_000);

  it('a database Redis does not have: submit rejects naming it, not a hang', async () => {
    const queue = new JobQueue({ connection: `${redis.url}/99`, name: `misuse-${randomUUID()}` });
    open.push(queue);
    const error = await queue.submit(spec()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(QueueUnavailableError);
  }, 20_000);

  it('a wrong or missing password: submit says the password was refused, never shows it, and does not wait', async () => {
    const guarded = await startRedis();
    const admin = new Redis(guarded.url);
    await admin.config('SET', 'requirepass', 'right');
    admin.disconnect();
    const wrong = new JobQueue({
      connection: guarded.url.replace('redis://', 'redis://:s3cr%2Fet@'),
      name: `misuse-${randomUUID()}`,
      commandTimeoutMs: 1000,
    });
    const none = new JobQueue({ connection: guarded.url, name: `misuse-${randomUUID()}`, commandTimeoutMs: 1000 });
    try {
      const t0 = Date.now();
      const wrongError = (await wrong.submit(spec()).catch((e: unknown) => e)) as Error;
      expect(wrongError).toBeInstanceOf(QueueUnavailableError);
      expect(wrongError.message).toMatch(/refused the password \(WRONGPASS/);
      expect(wrongError.message).not.toMatch(/s3cr|et@|retry later/);
      const noneError = (await none.submit(spec()).catch((e: unknown) => e)) as Error;
      expect(noneError.message).toMatch(/refused the password \(NOAUTH/);
      expect(Date.now() - t0).toBeLessThan(4000);
      // The start-up check of serve and worker says the same.
      await expect(checkRedis(guarded.url.replace('redis://', 'redis://:s3cr%2Fet@'), 2000)).rejects.toThrow(
        /refused the password \(WRONGPASS[^]*$/,
      );
      await expect(checkRedis(guarded.url, 2000)).rejects.toThrow(/refused the password \(NOAUTH/);
    } finally {
      await Promise.all([wrong.close(), none.close()]);
      await guarded.dispose();
    }
  }, 20_000);

  it('submit options that are not an object are a TypeError', async () => {
    const queue = queueOf();
    await expect(queue.submit(spec(), null as never)).rejects.toThrow(/submit options must be an object/);
  });
});
