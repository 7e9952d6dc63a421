/**
 * runQueueWorker() misused, against a real redis-server: a bad option rejects with an error naming
 * it and leaves no worker taking jobs (nothing connects before the options are checked), and
 * close() settles, with `stopped`, while Redis is away (BullMQ's own close would wait forever).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue, runQueueWorker, type QueueWorker, type QueueWorkerOptions } from '../../../src/queue/index.js';
import { FakeEngine } from '../server/fake-engine.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';
import { settledWithin } from './settled-within.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const randomData = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(redisSkipReason !== undefined)('runQueueWorker misused', () => {
  let redis: TestRedis;
  const open: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await settledWithin(o.close(), 5000);
  }, 15_000);
  afterAll(async () => {
    await redis?.dispose();
  });

  type Case = [
    label: string,
    options: (url: string, name: string) => unknown,
    error: ErrorConstructor | RangeErrorConstructor,
    message: RegExp,
  ];
  const cases: Case[] = [
    [
      'log that is not a function',
      (url, name) => ({ connection: url, name, engine: new FakeEngine(), log: 'console' }),
      TypeError,
      /\blog\b/,
    ],
    [
      'negative logIntervalMs',
      (url, name) => ({ connection: url, name, engine: new FakeEngine(), logIntervalMs: -1 }),
      RangeError,
      /logIntervalMs/,
    ],
    ['no connection', (_url, name) => ({ name, engine: new FakeEngine() }), TypeError, /connection/],
    [
      'an http:// connection',
      (_url, name) => ({ connection: 'http://x', name, engine: new FakeEngine() }),
      TypeError,
      /connection/,
    ],
    [
      'a port number as connection',
      (_url, name) => ({ connection: 6379, name, engine: new FakeEngine() }),
      TypeError,
      /connection/,
    ],
    ['no options', () => undefined, TypeError, /options/],
  ];

  it.each(cases)(
    'rejects %s with an error naming it, and no worker takes jobs',
    async (_label, options, type, message) => {
      const name = `misuse-${randomUUID()}`;
      const outcome = await settledWithin(runQueueWorker(options(redis.url, name) as QueueWorkerOptions), 3000);
      expect(outcome).not.toBe('pending');
      if (outcome !== 'pending' && outcome.error === undefined) open.push(outcome.value as QueueWorker);
      expect(outcome).toHaveProperty('error');
      const error = (outcome as { error: unknown }).error;
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
      // A worker left running by the rejected call would take this job.
      const queue = new JobQueue({ connection: redis.url, name });
      open.push(queue);
      await queue.submit({ data: randomData(64), flags: ['stft'] });
      await sleep(500);
      const counts = await queue.counts();
      expect(counts.waiting + counts.prioritized).toBe(1);
      expect(counts.active + counts.completed + counts.failed).toBe(0);
    },
    10_000,
  );

  it('close() settles and `stopped` resolves while Redis is away and the worker holds a job', async () => {
    const own = await startRedis();
    try {
      const name = `down-${randomUUID()}`;
      const queue = new JobQueue({ connection: own.url, name });
      open.push(queue);
      const lines: string[] = [];
      const worker = await runQueueWorker({
        connection: own.url,
        name,
        engine: new FakeEngine({ delayMs: 3000 }),
        log: (l) => lines.push(l),
        lockDurationMs: 1000,
      });
      const handle = await queue.submit({ data: randomData(64), flags: ['stft'] });
      const deadline = Date.now() + 5000;
      while ((await handle.status()) !== 'running' && Date.now() < deadline) await sleep(25);
      await own.stop();
      const start = performance.now();
      const closing = worker.close();
      const outcome = await settledWithin(Promise.all([closing, worker.stopped]), 8000);
      expect(outcome).toEqual({ value: [undefined, undefined] });
      expect(performance.now() - start).toBeLessThan(8000);
      expect(lines.at(-1)).toMatch(
        /stopped .*close cut after \d+ ms \(Redis was away\): 1 job\(s\) held go back to the queue/,
      );
      expect(worker.reachable).toBe(false);
    } finally {
      await own.dispose();
    }
  }, 20_000);
});
