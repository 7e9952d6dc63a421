/**
 * The queue's options misused. Found by probing: unknown keys (`priorty`, BullMQ's own `delay` or
 * `jobId`, `concurency`) were accepted and silently meant their defaults; a BigInt or a circular
 * value failed with JSON.stringify's own error, naming no option; and JobQueue's `rateLimit` was
 * in force only if the caller also awaited `ready()`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobSpec } from '../../../src/engine/types.js';
import { JobQueue, runQueueWorker, type QueueWorkerOptions } from '../../../src/queue/index.js';
import { FakeEngine } from '../server/fake-engine.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const spec = (): JobSpec => ({ data: Float32Array.from({ length: 64 }, () => Math.random() * 2 - 1), flags: ['stft'] });
/** Nothing listens there: a call that connected before refusing would wait, not reject. */
const NOWHERE = 'redis://127.0.0.1:1';

describe('options refused by name, before anything connects', () => {
  it('new JobQueue: an unknown key, a BigInt, a circular rate limit', () => {
    expect(() => new JobQueue({ connection: NOWHERE, maxResultByte: 1 } as never)).toThrow(
      /^JobQueue options\.maxResultByte: unknown option \(known: connection, name, prefix, precision, stages, maxResultBytes, .*blobStores\)$/,
    );
    expect(() => new JobQueue({ connection: NOWHERE, attempts: 3n } as never)).toThrow(
      new RangeError('attempts must be an integer in [1, 100], got 3n'),
    );
    const circular: Record<string, unknown> = { max: 1 };
    circular.self = circular;
    expect(() => new JobQueue({ connection: NOWHERE, rateLimit: circular as never })).toThrow(
      /^rateLimit\.self: unknown option \(known: max, durationMs\)$/,
    );
    circular.durationMs = circular;
    delete circular.self;
    expect(() => new JobQueue({ connection: NOWHERE, rateLimit: circular as never })).toThrow(
      /^rateLimit\.durationMs must be an integer in \[1, 86400000\], got an object$/,
    );
    expect(() => new JobQueue([] as never)).toThrow(
      /^JobQueue options must be an object with a connection, got an array$/,
    );
  }, 5000);

  it('a Redis URL that cannot work is refused without echoing its password', () => {
    expect(() => new JobQueue({ connection: 'redis://:secret@127.0.0.1:99999' })).toThrow(
      'connection: "redis://***@127.0.0.1:99999" is not a valid URL',
    );
    expect(() => new JobQueue({ connection: 'http://user:secret@h' })).toThrow(
      'connection: a Redis URL starts with redis:// or rediss://, got "http://***@h"',
    );
    expect(() => new JobQueue({ connection: 'redis://127.0.0.1:0' })).toThrow(
      'connection: "redis://127.0.0.1:0" names port 0, where no Redis listens',
    );
  }, 5000);

  it('runQueueWorker: an unknown key, a BigInt', async () => {
    const engine = new FakeEngine();
    const start = (extra: Record<string, unknown>): Promise<unknown> =>
      runQueueWorker({ connection: NOWHERE, engine, ...extra } as QueueWorkerOptions);
    await expect(start({ concurency: 1 })).rejects.toThrow(
      /^runQueueWorker options\.concurency: unknown option \(known: connection, engine, name, .*blobStores\)$/,
    );
    await expect(start({ lockDuration: 5 })).rejects.toThrow(TypeError);
    await expect(start({ concurrency: 2n })).rejects.toThrow(
      new RangeError('concurrency must be an integer in [1, 4096], got 2n'),
    );
    await expect(start({ workerName: 5n })).rejects.toThrow(
      /^workerName must be a string of 1-200 characters, got 5n$/,
    );
  }, 5000);
});

describe.skipIf(redisSkipReason !== undefined)('queue options against a real Redis', () => {
  let redis: TestRedis;
  const open: { close(): Promise<void> }[] = [];
  const queueOf = (extra: Record<string, unknown> = {}): JobQueue => {
    const queue = new JobQueue({ connection: redis.url, name: `options-${randomUUID()}`, ...extra });
    open.push(queue);
    return queue;
  };

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  }, 15_000);
  afterAll(async () => {
    await redis?.dispose();
  });

  it('submit options: an unknown key, an array, a BigInt are refused by name, and nothing is queued', async () => {
    const queue = queueOf();
    await expect(queue.submit(spec(), { priorty: 1 } as never)).rejects.toThrow(
      new TypeError('submit options.priorty: unknown option (known: priority, attempts)'),
    );
    await expect(queue.submit(spec(), { delay: 60_000 } as never)).rejects.toThrow(
      /^submit options\.delay: unknown option/,
    );
    await expect(queue.submit(spec(), { jobId: 'order-42' } as never)).rejects.toThrow(
      /^submit options\.jobId: unknown option/,
    );
    await expect(queue.submit(spec(), [1, 2] as never)).rejects.toThrow(
      /^submit options must be an object \(\{ priority, attempts \}\), got an array$/,
    );
    await expect(queue.submit(spec(), { priority: 5n } as never)).rejects.toThrow(
      new RangeError('priority must be an integer in [1, 2097151], got 5n'),
    );
    await expect(queue.submit(spec(), { attempts: 2n } as never)).rejects.toThrow(/^attempts must be an integer/);
    const counts = await queue.counts();
    expect(counts.waiting + counts.prioritized + counts.delayed).toBe(0);
  }, 15_000);

  it("the queue's rateLimit is in force from the first submit, without ready()", async () => {
    const queue = queueOf({ rateLimit: { max: 1, durationMs: 700 } });
    const worker = await runQueueWorker({ connection: redis.url, name: queue.name, engine: new FakeEngine() });
    open.push(worker);
    const start = performance.now();
    const handles = [];
    for (let i = 0; i < 3; i++) handles.push(await queue.submit(spec()));
    await Promise.all(handles.map((h) => h.result));
    // One job per 700 ms: the third starts 1400 ms after the first at the earliest (without the limit: ~50 ms).
    expect(performance.now() - start).toBeGreaterThan(1300);
  }, 15_000);
});
