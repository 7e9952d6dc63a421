/**
 * The queue against a real redis-server, with workers in this process over the CUDA-free
 * FakeEngine: results cross Redis exactly, bad jobs are refused at submit with nothing queued,
 * the size limit and the time-to-live hold, cancel, priorities, and a job whose worker loses its
 * engine is retried up to its attempts and then failed with the reason.
 */
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, JobSpec } from '../../../src/engine/types.js';
import {
  JobQueue,
  QueueJobError,
  registerQueueMetrics,
  ResultTooLargeError,
  runQueueWorker,
  type QueueWorker,
} from '../../../src/queue/index.js';
import { FakeEngine, fakeResult } from '../server/fake-engine.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const randomData = (n: number, type: 'f32' | 'f64' = 'f32'): Float32Array | Float64Array => {
  const a = type === 'f32' ? new Float32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = Math.random() * 2 - 1;
  return a;
};

/** An engine whose job with the flag `lose` loses the context, as a sticky CUDA error would. */
class LosingEngine extends FakeEngine {
  override submit(spec: JobSpec, options?: { wait: true }): Job & Promise<Job> {
    if (!spec.flags.includes('lose'))
      return (options ? super.submit(spec, options) : super.submit(spec)) as Job & Promise<Job>;
    const cause = Object.assign(new Error('CUDA_ERROR_ILLEGAL_ADDRESS'), { sticky: true });
    const error = Object.assign(
      new Error('engine "fake" lost its GPU context: CUDA_ERROR_ILLEGAL_ADDRESS', { cause }),
      { name: 'EngineLostError' },
    );
    const result = Promise.reject(error);
    result.catch(() => undefined);
    const job: Job = {
      id: 0,
      label: spec.label,
      status: 'error',
      result,
      released: Promise.resolve(),
      cancel: () => false,
    };
    setTimeout(() => this.loseContext(), 1);
    return (options ? Promise.resolve(job) : job) as Job & Promise<Job>;
  }
}

describe.skipIf(redisSkipReason !== undefined)('queue over a real Redis', () => {
  let redis: TestRedis;
  const open: { close(): Promise<void> }[] = [];
  const queueOf = (options: Partial<ConstructorParameters<typeof JobQueue>[0]> = {}): JobQueue => {
    const q = new JobQueue({ connection: redis.url, name: `t-${randomUUID()}`, ...options });
    open.push(q);
    return q;
  };
  const workerOf = async (
    queue: JobQueue,
    engine: FakeEngine,
    extra: Partial<Parameters<typeof runQueueWorker>[0]> = {},
  ): Promise<QueueWorker> => {
    const w = await runQueueWorker({
      connection: redis.url,
      engine,
      name: queue.name,
      lockDurationMs: 1000,
      stalledIntervalMs: 1000,
      ...extra,
    });
    open.push(w);
    return w;
  };

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const o of open.reverse()) await o.close().catch(() => undefined);
    await redis?.dispose();
  }, 30_000);

  it('round-trips a job: every result array exact, of its type, with the delivery facts', async () => {
    for (const precision of ['f32', 'f64'] as const) {
      const queue = queueOf({ precision });
      const engine = new FakeEngine({ precision });
      const worker = await workerOf(queue, engine, { workerName: `w-${precision}` });
      const spec: JobSpec = {
        data: randomData(3 * 64, precision),
        batch: 3,
        fs: 100,
        flags: ['stft', 'cycles', 'wavelet'],
        bands: [
          [1, 10],
          [10, 40],
        ],
        freqs: [5, 7, 9],
        label: 'rt',
      };
      const handle = await queue.submit(spec);
      expect(handle.id).toMatch(/^j[A-Za-z0-9_-]{22}$/);
      const progress: string[] = [];
      handle.on('progress', (p) => progress.push(p.phase));
      const result = await handle.result;
      const expected = fakeResult(spec, 0, precision);
      for (const field of ['filtered', 'spectrum', 'bandPowers', 'waveletPower'] as const) {
        expect(result[field]?.constructor).toBe(expected[field]!.constructor);
        expect(Array.from(result[field]!)).toEqual(Array.from(expected[field]!));
      }
      // filtered is 2 x the random input: exact only if the samples crossed Redis bit for bit.
      expect(Array.from(result.filtered!)).toEqual(
        Array.from(spec.data, (v) => (precision === 'f32' ? Math.fround(v * 2) : v * 2)),
      );
      expect(result.dominant).toEqual(expected.dominant);
      expect(result).toMatchObject({ batch: 3, length: 64, fs: 100, timings: expected.timings });
      expect(result.queue).toEqual({ jobId: handle.id, worker: `w-${precision}`, attempts: 1, stalls: 0 });
      expect(await handle.status()).toBe('ready');
      expect((await queue.view(handle.id)).result?.filtered).toEqual(result.filtered);
      expect(worker.counts.completed).toBe(1);
      expect(progress).toContain('running');
    }
  });

  it('refuses at submit what the engine would refuse, queuing nothing', async () => {
    const queue = queueOf();
    const engine = new FakeEngine();
    const data = randomData(256);
    await expect(queue.submit({ data, flags: [] })).rejects.toMatchObject({
      name: 'JobValidationError',
      field: 'flags',
    });
    await expect(queue.submit({ data, flags: ['stft'], nperseg: 512 })).rejects.toMatchObject({
      name: 'JobValidationError',
      field: 'nperseg',
    });
    await expect(queue.submit({ data, flags: ['reject-me'] })).rejects.toMatchObject({
      name: 'JobValidationError',
      field: 'flags[0]',
    });
    await expect(queue.submit({ data, flags: ['cycles'] })).rejects.toMatchObject({
      name: 'JobValidationError',
      field: 'bands',
    });
    // A filter, an envelope and a decimation are checked by the same validation as the engine's and the server's.
    await expect(
      queue.submit({ data, fs: 100, flags: ['stft'], filter: { btype: 'lowpass', cutoff: 60 } }),
    ).rejects.toMatchObject({ name: 'JobValidationError', field: 'filter.cutoff' });
    await expect(
      queue.submit({ data, flags: ['stft'], filter: { sos: [[1, 0, 0, 1, 0, 1.5]] } }),
    ).rejects.toMatchObject({
      name: 'JobValidationError',
      field: 'filter.sos[0]',
    });
    await expect(queue.submit({ data, flags: ['decimate'] })).rejects.toMatchObject({
      name: 'JobValidationError',
      field: 'q',
    });
    await expect(
      queue.submit({ data, flags: ['stft'], into: { filtered: new Float32Array(256) } }),
    ).rejects.toMatchObject({ field: 'into' });
    await expect(queue.submit({ data, flags: ['stft'] }, { priority: 0 })).rejects.toThrow(
      /priority must be an integer/,
    );
    expect(await queue.counts()).toEqual({
      waiting: 0,
      prioritized: 0,
      delayed: 0,
      active: 0,
      completed: 0,
      failed: 0,
    });
    await workerOf(queue, engine);
    await new Promise((r) => setTimeout(r, 100));
    expect(engine.submitted).toHaveLength(0);
  });

  it('refuses a result over maxResultBytes at submit, and fails one the worker measures over its limit', async () => {
    const queue = queueOf({ maxResultBytes: 4096 });
    await expect(queue.submit({ data: randomData(2048), flags: ['stft'] })).rejects.toSatisfy(
      (e: unknown) => e instanceof ResultTooLargeError && /maxResultBytes = 4096/.test(e.message),
    );
    expect((await queue.counts()).prioritized).toBe(0);
    const engine = new FakeEngine();
    await workerOf(queue, engine, { maxResultBytes: 512 });
    const handle = await queue.submit({ data: randomData(256), flags: ['stft'], previewBins: 4 });
    const error = await handle.result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueJobError);
    expect((error as QueueJobError).reason).toMatch(/measured by the worker\) exceed maxResultBytes = 512/);
    expect((error as QueueJobError).attempts).toBe(1);
  });

  it("keeps a result for resultTtlMs, and a queued job's samples for inputTtlMs", async () => {
    const queue = queueOf({ resultTtlMs: 300, inputTtlMs: 300 });
    const engine = new FakeEngine();
    // No worker yet: the samples expire while the job waits.
    const stale = await queue.submit({ data: randomData(64), flags: ['stft'] });
    await new Promise((r) => setTimeout(r, 500));
    await workerOf(queue, engine);
    await expect(stale.result).rejects.toMatchObject({
      name: 'QueueJobError',
      reason: expect.stringMatching(/^expired: it waited \d+ s for a worker, past its inputTtlMs \(300 ms\)$/),
    });
    const fresh = await queue.submit({ data: randomData(64), flags: ['stft'] });
    await fresh.result;
    await new Promise((r) => setTimeout(r, 500));
    const view = await queue.view(fresh.id);
    expect(view.status === 'unknown' || view.error?.message.includes('expired after its time-to-live')).toBe(true);
  });

  it('cancels a queued job (never run, status cancelled), not a running one', async () => {
    const queue = queueOf();
    const handle = await queue.submit({ data: randomData(64), flags: ['stft'] });
    expect(await handle.cancel()).toBe(true);
    await expect(handle.result).rejects.toMatchObject({ name: 'JobCancelledError' });
    expect(await queue.view(handle.id)).toMatchObject({ status: 'cancelled' });
    const engine = new FakeEngine({ delayMs: 400 });
    await workerOf(queue, engine);
    const running = await queue.submit({ data: randomData(64), flags: ['stft'] });
    await new Promise<void>((resolve) => running.on('status', (s) => s === 'running' && resolve()));
    expect(await running.cancel()).toBe(false);
    await expect(running.result).resolves.toMatchObject({ length: 64 });
    expect(engine.submitted).toHaveLength(1);
  });

  it('runs queued jobs by priority (smaller first)', async () => {
    const queue = queueOf();
    const order = [5, 1, 3, 2, 4];
    const handles = [];
    for (const p of order)
      handles.push(await queue.submit({ data: randomData(64), flags: ['stft'], label: `p${p}` }, { priority: p }));
    const engine = new FakeEngine();
    await workerOf(queue, engine, { concurrency: 1 });
    await Promise.all(handles.map((h) => h.result));
    expect(engine.submitted.map((s) => s.label)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
  });

  it('retries a job whose worker lost its engine, on another worker, then fails it with the reason after its attempts', async () => {
    const queue = queueOf({ stages: ['lose'] });
    const handle = await queue.submit({ data: randomData(64), flags: ['lose'] }, { attempts: 2 });
    const first = await workerOf(queue, new LosingEngine());
    await first.stopped;
    expect(first.lostError).toBeDefined();
    expect(first.counts.retried).toBe(1);
    expect(await handle.status()).toBe('queued');
    const second = await workerOf(queue, new LosingEngine());
    const error = (await handle.result.catch((e: unknown) => e)) as QueueJobError;
    expect(error.name).toBe('QueueJobError');
    expect(error.attempts).toBe(2);
    expect(error.reason).toMatch(/lost its GPU context/);
    await second.stopped;
    expect(second.counts.failed).toBe(1);
  });

  it('holds to the queue-wide rate limit', async () => {
    const queue = queueOf({ rateLimit: { max: 2, durationMs: 600 } });
    await queue.ready();
    await workerOf(queue, new FakeEngine());
    const start = performance.now();
    const handles = [];
    for (let i = 0; i < 5; i++) handles.push(await queue.submit({ data: randomData(64), flags: ['stft'] }));
    await Promise.all(handles.map((h) => h.result));
    // 5 jobs at 2 per 600 ms: the fifth starts in the third window, at least 1.2 s in.
    expect(performance.now() - start).toBeGreaterThan(1100);
  });

  it('exposes depth, reachability and jobs by outcome as Prometheus metrics', async () => {
    const queue = queueOf({ stages: ['explode'] });
    const worker = await workerOf(queue, new FakeEngine());
    const workerRegistry = new Registry();
    registerQueueMetrics(workerRegistry, worker, { host: 'h1' });
    const frontRegistry = new Registry();
    registerQueueMetrics(frontRegistry, queue);
    await (
      await queue.submit({ data: randomData(64), flags: ['stft'] })
    ).result;
    await (await queue.submit({ data: randomData(64), flags: ['explode'] })).result.catch(() => undefined);
    const text = await workerRegistry.metrics();
    expect(text).toMatch(/tscuda_queue_jobs_total\{host="h1",outcome="completed"\} 1/);
    expect(text).toMatch(/tscuda_queue_jobs_total\{host="h1",outcome="failed"\} 1/);
    expect(text).toMatch(/tscuda_queue_wait_seconds_count\{host="h1"\} 2/);
    expect(text).toMatch(/tscuda_queue_reachable\{host="h1"\} 1/);
    const front = await frontRegistry.metrics();
    expect(front).toMatch(/tscuda_queue_depth\{state="waiting"\} 0/);
    expect(front).toMatch(/tscuda_queue_reachable 1/);
  });

  it('is not ready while Redis is unreachable, and says so at submit', async () => {
    const queue = new JobQueue({ connection: 'redis://127.0.0.1:1', name: 'nowhere' });
    open.push(queue);
    expect(queue.reachable).toBe(false);
    expect(await queue.ping(200)).toBe(false);
    await expect(queue.submit({ data: randomData(64), flags: ['stft'] })).rejects.toMatchObject({
      name: 'QueueUnavailableError',
    });
  });
});
