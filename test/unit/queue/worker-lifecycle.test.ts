/**
 * runQueueWorker()'s start and close misused, against a real redis-server. Found by probing: a
 * `log` that throws made the start reject while a worker kept taking jobs (nothing could close
 * it), and made close() reject with its connections left open; an engine lacking a member the
 * worker uses was refused after connecting, with an error that did not name it (or not at all);
 * a database Redis does not have was taken for database 0 (the worker then failed every job); and
 * close() waited forever for a job its engine never settled.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Job, JobSpec } from '../../../src/engine/types.js';
import { JobQueue, QueueUnavailableError, runQueueWorker, type QueueWorker } from '../../../src/queue/index.js';
import { FakeEngine } from '../server/fake-engine.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';
import { settledWithin } from './settled-within.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const spec = (extra: Partial<JobSpec> = {}): JobSpec => ({
  data: Float32Array.from({ length: 64 }, () => Math.random() * 2 - 1),
  flags: ['stft'],
  ...extra,
});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** An engine whose jobs never settle (a hung device), whatever their timeoutMs. */
class HangingEngine extends FakeEngine {
  override submit(spec: JobSpec, options?: { wait: true }): Job & Promise<Job> {
    const never = new Promise<never>(() => undefined);
    const job: Job = {
      id: 1,
      label: spec.label,
      status: 'running',
      result: never,
      released: never,
      cancel: () => false,
    };
    return (options ? Promise.resolve(job) : job) as Job & Promise<Job>;
  }
}

describe.skipIf(redisSkipReason !== undefined)('runQueueWorker start and close', () => {
  let redis: TestRedis;
  let admin: Redis;
  const open: { close(): Promise<void> }[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  /** Connections to Redis whose name mentions queue `name` (every connection of the queue's clients and workers is named so). */
  const connectionsOf = async (name: string): Promise<number> =>
    ((await admin.client('LIST')) as string).split('\n').filter((line) => line.includes(name)).length;
  /** A client of a fresh queue. */
  const queueOf = (): JobQueue => {
    const queue = new JobQueue({ connection: redis.url, name: `life-${randomUUID()}` });
    open.push(queue);
    return queue;
  };

  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await settledWithin(o.close(), 8000);
  }, 20_000);
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    admin?.disconnect();
    await redis?.dispose();
  });

  it('a log that throws is ignored: the worker starts, runs jobs, closes and disconnects', async () => {
    const queue = queueOf();
    let calls = 0;
    const log = (): void => {
      calls++;
      throw new Error('log sink broken');
    };
    const worker = await runQueueWorker({
      connection: redis.url,
      name: queue.name,
      engine: new FakeEngine(),
      log,
      logIntervalMs: 50,
    });
    const handle = await queue.submit(spec());
    expect((await handle.result).queue.worker).toBe(worker.name);
    // The summary timer's lines throw too.
    await sleep(300);
    expect(await settledWithin(worker.close(), 8000)).toEqual({ value: undefined });
    expect(calls).toBeGreaterThan(3);
    expect(unhandled).toEqual([]);
    await sleep(100);
    expect(await connectionsOf(`${queue.name}:worker`)).toBe(0);
  }, 20_000);

  type EngineCase = [label: string, engine: () => object, extra: Record<string, unknown>, message: RegExp | undefined];
  const fake = (): Record<string, unknown> => {
    const f = new FakeEngine();
    return {
      label: f.label,
      precision: f.precision,
      laneCount: f.laneCount,
      devices: f.devices,
      lost: f.lost,
      submit: f.submit.bind(f),
      stats: f.stats.bind(f),
      close: f.close.bind(f),
    };
  };
  const without = (key: string) => (): object => Object.fromEntries(Object.entries(fake()).filter(([k]) => k !== key));
  const engineCases: EngineCase[] = [
    ['no laneCount (and no concurrency)', without('laneCount'), {}, /^engine\.laneCount must be a positive integer/],
    ['no laneCount, concurrency given', without('laneCount'), { concurrency: 2 }, undefined],
    ['no lost', without('lost'), {}, /^engine\.lost must be a Promise/],
    ['no submit', without('submit'), {}, /^engine\.submit must be a function/],
    ['no precision', without('precision'), {}, /^engine\.precision must be 'f32' or 'f64'/],
    ['no devices', without('devices'), {}, /^engine\.devices must be an array/],
    [
      'a hostBuffer that is not a function',
      () => ({ ...fake(), hostBuffer: 1 }),
      {},
      /^engine\.hostBuffer must be a function/,
    ],
  ];

  it.each(engineCases)(
    'an engine with %s: refused naming the member before anything connects',
    async (_label, engine, extra, message) => {
      const name = `life-${randomUUID()}`;
      const outcome = await settledWithin(
        runQueueWorker({ connection: redis.url, name, engine: engine() as never, ...extra }),
        5000,
      );
      expect(outcome).not.toBe('pending');
      if (message === undefined) {
        expect(outcome).toHaveProperty('value');
        await (outcome as { value: QueueWorker }).value.close();
        return;
      }
      expect(outcome).toHaveProperty('error');
      const error = (outcome as { error: Error }).error;
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toMatch(message);
      expect(await connectionsOf(name)).toBe(0);
    },
    10_000,
  );

  it('a database Redis does not have: the start rejects with QueueUnavailableError, and no worker takes jobs', async () => {
    const queue = queueOf();
    const outcome = await settledWithin(
      runQueueWorker({ connection: `${redis.url}/99`, name: queue.name, engine: new FakeEngine() }),
      5000,
    );
    if (outcome !== 'pending' && outcome.error === undefined) open.push(outcome.value as QueueWorker);
    expect(outcome).toHaveProperty('error');
    expect((outcome as { error: unknown }).error).toBeInstanceOf(QueueUnavailableError);
    expect(((outcome as { error: Error }).error as Error).message).toMatch(/refused database 99/);
    // A worker left on database 0 would take this job.
    await queue.submit(spec());
    await sleep(500);
    const counts = await queue.counts();
    expect(counts.waiting + counts.prioritized).toBe(1);
    expect(await connectionsOf(`${queue.name}:worker`)).toBe(0);
  }, 20_000);

  it('close() is cut a while after a job held outlives its timeoutMs on an engine that never settles it', async () => {
    const queue = queueOf();
    const lines: string[] = [];
    const worker = await runQueueWorker({
      connection: redis.url,
      name: queue.name,
      engine: new HangingEngine(),
      log: (l) => lines.push(l),
      lockDurationMs: 1000,
    });
    open.push(worker);
    const handle = await queue.submit(spec({ timeoutMs: 200 }));
    const deadline = Date.now() + 5000;
    while ((await handle.status()) !== 'running' && Date.now() < deadline) await sleep(25);
    const start = performance.now();
    expect(await settledWithin(Promise.all([worker.close(), worker.stopped]), 10_000)).toEqual({
      value: [undefined, undefined],
    });
    // timeoutMs, then the close's 3 s bound.
    expect(performance.now() - start).toBeLessThan(6000);
    expect(lines.at(-1)).toMatch(
      /close cut after \d+ ms \(the engine had not settled a job past its timeoutMs\): 1 job\(s\) held/,
    );
  }, 20_000);

  it('close() still finishes a job held that runs within its time (no timeoutMs)', async () => {
    const queue = queueOf();
    const worker = await runQueueWorker({
      connection: redis.url,
      name: queue.name,
      engine: new FakeEngine({ delayMs: 1500 }),
    });
    const handle = await queue.submit(spec());
    const deadline = Date.now() + 5000;
    while ((await handle.status()) !== 'running' && Date.now() < deadline) await sleep(25);
    await worker.close();
    expect(worker.counts.completed).toBe(1);
    expect(await settledWithin(handle.result, 3000)).toHaveProperty('value');
  }, 20_000);
});
