/**
 * Results that cannot cross the queue. Found by probing: an engine whose result held a plain
 * array (not a typed array) had its job counted completed, with bytes no client could decode,
 * and a client that could not decode a stored result took it for Redis being away and read it
 * again forever (the handle never settled). Now the worker fails such a job with the reason, and
 * the client rejects the handle with a QueueJobError: only a connection error means "Redis away".
 */
import { randomUUID } from 'node:crypto';
import { Worker, type ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Job, JobSpec } from '../../../src/engine/types.js';
import { packResult } from '../../../src/queue/codec.js';
import { JobQueue, QueueJobError, runQueueWorker } from '../../../src/queue/index.js';
import { FakeEngine } from '../server/fake-engine.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';
import { settledWithin } from './settled-within.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const spec = (): JobSpec => ({ data: Float32Array.from({ length: 64 }, () => Math.random() * 2 - 1), flags: ['stft'] });

/** An engine whose results carry `spectrum` as a plain array of numbers. */
class PlainArrayEngine extends FakeEngine {
  override submit(spec: JobSpec, options?: { wait: true }): Job & Promise<Job> {
    const job = super.submit(spec);
    const result = job.result.then((r) => ({ ...r, spectrum: Array.from(r.spectrum!) as never }));
    const plain: Job = {
      id: job.id,
      label: job.label,
      status: job.status,
      result,
      released: job.released,
      cancel: () => job.cancel(),
    };
    return (options ? Promise.resolve(plain) : plain) as Job & Promise<Job>;
  }
}

describe('packResult refuses arrays it could not pack', () => {
  it('names the field and what it got', () => {
    const base = {
      id: 1,
      lane: 0,
      device: 0,
      batch: 1,
      length: 4,
      fs: 1,
      timings: { queuedMs: 0, runMs: 0, gpuMs: 0 },
    };
    expect(() => packResult({ ...base, spectrum: [1, 2] as never })).toThrow(
      /^result\.spectrum must be a Float32Array or Float64Array, got a plain array$/,
    );
    expect(() => packResult({ ...base, bandPowers: new Float32Array(2) as never })).toThrow(
      /^result\.bandPowers must be a Float64Array, got a Float32Array$/,
    );
    expect(() => packResult({ ...base, filtered: new Int16Array(2) as never })).toThrow(
      /result\.filtered must be a Float32Array or Float64Array or Uint16Array/,
    );
    expect(packResult({ ...base, filtered: new Uint16Array(4), spectrum: new Float64Array(2) }).bytes).toBe(24);
  }, 5000);
});

describe.skipIf(redisSkipReason !== undefined)('unreadable results against a real Redis', () => {
  let redis: TestRedis;
  const open: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await settledWithin(o.close(), 8000);
  }, 20_000);
  afterAll(async () => {
    await redis?.dispose();
  });

  it('the worker fails a job whose engine result has a plain array, with the reason, and does not retry it', async () => {
    const name = `unreadable-${randomUUID()}`;
    const queue = new JobQueue({ connection: redis.url, name, pollIntervalMs: 100 });
    open.push(queue);
    const worker = await runQueueWorker({ connection: redis.url, name, engine: new PlainArrayEngine() });
    open.push(worker);
    const handle = await queue.submit(spec());
    const outcome = await settledWithin(handle.result, 5000);
    expect(outcome).toHaveProperty('error');
    const error = (outcome as { error: QueueJobError }).error;
    expect(error).toBeInstanceOf(QueueJobError);
    expect(error.reason).toMatch(
      /the engine's result cannot be stored: TypeError: result\.spectrum must be a Float32Array or Float64Array, got a plain array/,
    );
    expect(worker.counts).toEqual({ completed: 0, failed: 1, retried: 0 });
  }, 20_000);

  it('a client that cannot decode a stored result rejects the handle with a QueueJobError, and view() says error', async () => {
    const name = `unreadable-${randomUUID()}`;
    const queue = new JobQueue({ connection: redis.url, name, pollIntervalMs: 100 });
    open.push(queue);
    // Another program (or a corrupt one) completes the job: its table says 400 bytes of spectrum, the key holds 8.
    const store = new Redis(redis.url);
    open.push({ close: async () => void store.disconnect() });
    const bullRedis = new Redis(redis.url, { maxRetriesPerRequest: null });
    const raw = new Worker(
      name,
      async (job) => {
        const resultKey = `tscuda:${name}:blob:out:${job.id}:1`;
        await store.set(resultKey, Buffer.alloc(8), 'PX', 60_000);
        const run = { jobId: job.id, worker: 'raw', attempts: 1, stalls: 0 };
        return {
          v: 1,
          resultKey,
          bytes: 8,
          arrays: [{ field: 'spectrum', dtype: 'f32', length: 100, offset: 0 }],
          scalars: {},
          run,
        };
      },
      { connection: bullRedis as unknown as ConnectionOptions, prefix: 'tscuda' },
    );
    open.push({ close: async () => (await raw.close(), bullRedis.disconnect()) });
    const handle = await queue.submit(spec());
    const outcome = await settledWithin(handle.result, 3000);
    expect(outcome).toHaveProperty('error');
    const error = (outcome as { error: QueueJobError }).error;
    expect(error).toBeInstanceOf(QueueJobError);
    expect(error.reason).toMatch(
      /^its stored result cannot be read: result: array spectrum ends at byte 400, the stored result has 8$/,
    );
    const view = await queue.view(handle.id);
    expect(view.status).toBe('error');
    expect(view.error).toBeInstanceOf(QueueJobError);
  }, 20_000);
});
