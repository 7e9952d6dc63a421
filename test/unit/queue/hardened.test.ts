/**
 * The queue's client against a Redis that stops answering, fills up, or is addressed with hostile
 * ids and options, with one real redis-server for the file: every operation settles within its
 * bound (commandTimeoutMs) with QueueUnavailableError while Redis is stopped (SIGSTOP) and
 * `reachable` follows; admission by waiting jobs and bytes; ids that are BullMQ's own key names
 * are unknown jobs; bad connection options, URLs with passwords, non-finite samples and a killed
 * worker's jobs (restarted within about its lock).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFiniteSamples } from '../../../src/engine/finite-samples.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';
import { checkConnection, redactRedisUrl } from '../../../src/queue/connection.js';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { ledgerKeys } from '../../../src/queue/admission.js';
import {
  JobQueue,
  newJobId,
  QueueFullError,
  QueueUnavailableError,
  registerQueueMetrics,
  runQueueWorker,
  UnknownQueueJobError,
} from '../../../src/queue/index.js';
import { parseServeArgs } from '../../../src/cli/commands/serve-options.js';
import { parseWorkerArgs } from '../../../src/cli/commands/worker.js';
import { FakeEngine } from '../server/fake-engine.js';
import { followChildLines } from './child-lines.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';
import { settledWithin } from './settled-within.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

/** The bound of the tests of a stopped Redis; the others keep a roomier one (a loaded host may take a while to answer). */
const BOUND_MS = 500;
const spec = (n = 64) => ({
  data: Float32Array.from({ length: n }, () => Math.random() * 2 - 1),
  flags: ['stft' as const],
});

describe('connection options, URLs and samples refused before any Redis', () => {
  it('connection options a timer would throw on are refused at construction, naming the option', () => {
    expect(() => new JobQueue({ connection: { port: 1, connectTimeout: -5 } })).toThrow(
      /^connection\.connectTimeout must be an integer of ms in \[1, 2147483647\], got -5$/,
    );
    expect(() => new JobQueue({ connection: { commandTimeout: Number.NaN } })).toThrow(RangeError);
    expect(() => new JobQueue({ connection: { port: 70000 } })).toThrow(
      /connection\.port must be an integer in \[1, 65535\]/,
    );
    expect(() => new JobQueue({ connection: { host: 5 as never } })).toThrow(/connection\.host must be a string/);
    expect(() => checkConnection({ keepAlive: -1 })).toThrow(/keepAlive/);
  });

  it('a password with an unencoded / or @ never shows, in the client and in serve', async () => {
    expect(redactRedisUrl('redis://user:pa/ss@host:6379/0')).toBe('redis://***@host:6379/0');
    expect(redactRedisUrl('redis://:a@b@host:6379')).toBe('redis://***@host:6379');
    expect(redactRedisUrl('user:pw@host')).toBe('***@host');
    for (const url of ['redis://:se/cret@127.0.0.1:6379', 'redis://u:se/cr@et@127.0.0.1:6379', 'redis://:se/cret@']) {
      const client = (() => {
        try {
          checkConnection(url);
          return '';
        } catch (e) {
          return (e as Error).message;
        }
      })();
      const serve = await parseServeArgs(['--redis', url]).then(
        () => '',
        (e: Error) => e.message,
      );
      for (const message of [client, serve]) expect(message).not.toMatch(/cret|cr@|se\//);
    }
  });

  it('the flags of the bounds: serve --redis --command-timeout/--max-waiting-*/--input-ttl, worker --stalled-interval-ms', async () => {
    const parsed = await parseServeArgs([
      '--redis',
      'redis://127.0.0.1:6379',
      '--command-timeout',
      '700',
      '--max-waiting-jobs',
      '5',
      '--max-waiting-mb',
      '2',
      '--input-ttl',
      '60000',
    ]);
    expect(parsed).toMatchObject({
      config: {
        queueLimits: { commandTimeoutMs: 700, maxWaitingJobs: 5, maxWaitingBytes: 2 * 2 ** 20, inputTtlMs: 60_000 },
      },
    });
    await expect(parseServeArgs(['--max-waiting-jobs', '5'])).rejects.toThrow(/--max-waiting-jobs needs --redis/);
    await expect(parseServeArgs(['--redis', 'redis://127.0.0.1:6379', '--command-timeout', '0'])).rejects.toThrow(
      /--command-timeout must be between 10 and 600000/,
    );
    expect(
      parseWorkerArgs(['--redis', 'redis://127.0.0.1:6379', '--lock-ms', '5000', '--stalled-interval-ms', '500']),
    ).toMatchObject({
      lockDurationMs: 5000,
      stalledIntervalMs: 500,
    });
    expect(() => parseWorkerArgs(['--redis', 'redis://127.0.0.1:6379', '--stalled-interval-ms', '5'])).toThrow(
      /--stalled-interval-ms must be between 100/,
    );
  });

  it('JobQueue.submit refuses non-finite samples at its door, naming the first (validateJob leaves them to the GPU)', async () => {
    const stages = { stages: new Set<string>() };
    const f64 = Float64Array.from({ length: 64 }, (_, i) => (i === 3 || i === 9 ? Number.NaN : i));
    // The engine's validation no longer scans: its lanes find the sample on the GPU.
    expect(validateJob({ data: f64, flags: ['stft'] }, stages).data).toBe(f64);
    const f32 = new Float32Array(64).fill(0.5);
    f32[10] = Number.NEGATIVE_INFINITY;
    const f16 = new Uint16Array(64).fill(0x3c00);
    f16[5] = 0x7e00;
    const bf16 = new Uint16Array(64).fill(0x3f80);
    bf16[63] = 0x7f80;
    const queue = new JobQueue({ connection: 'redis://127.0.0.1:1', name: 'finite' });
    try {
      const cases: [JobSpec, RegExp][] = [
        [{ data: f64, flags: ['stft'] }, /data\[3\]: is NaN: samples must be finite/],
        [{ data: f32, flags: ['stft'] }, /data\[10\]: is -Infinity/],
        [{ data: f16, dtype: 'f16', flags: ['stft'] }, /data\[5\]: is a non-finite f16/],
        [{ data: bf16, dtype: 'bf16', flags: ['stft'] }, /data\[63\]: is a non-finite bf16/],
        // The workers compute in f32 (the queue's default precision): 1e300 is infinite there.
        [
          { data: Float64Array.of(...Array.from({ length: 63 }, () => 1), 1e300), flags: ['stft'] },
          /data\[63\]: is 1e\+300, infinite in f32/,
        ],
      ];
      for (const [spec, message] of cases)
        await expect(queue.submit(spec)).rejects.toMatchObject({
          name: 'JobValidationError',
          message: expect.stringMatching(message),
        });
      // i16 samples are always finite.
      expect(() => checkFiniteSamples(new Int16Array(64).fill(-32768), 'i16')).not.toThrow();
    } finally {
      await queue.close();
    }
  });
});

describe.skipIf(redisSkipReason !== undefined)(
  'the client against a Redis that stops answering, fills up or is probed',
  () => {
    let redis: TestRedis;
    const open: { close(): Promise<void> }[] = [];
    const queueOf = (options: Partial<ConstructorParameters<typeof JobQueue>[0]> = {}): JobQueue => {
      const q = new JobQueue({ connection: redis.url, name: `h-${randomUUID()}`, commandTimeoutMs: 3000, ...options });
      open.push(q);
      return q;
    };
    const until = async (what: string, done: () => boolean | Promise<boolean>, ms = 5000): Promise<void> => {
      const deadline = Date.now() + ms;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };

    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      for (const o of open.reverse()) await o.close().catch(() => undefined);
      await redis?.dispose();
    }, 20_000);

    it('a stopped Redis (SIGSTOP): every operation settles within the bound, reachable turns false, and true again after SIGCONT; a worker holding a job stops', async () => {
      const queue = queueOf({ commandTimeoutMs: BOUND_MS });
      const idle = queueOf({ commandTimeoutMs: BOUND_MS });
      await Promise.all([queue.ready(), idle.ready()]);
      const held = await queue.submit(spec());
      // A worker holding a job: its /metrics (tscuda worker --metrics-port) reads the depth from Redis too, and it is stopped.
      const workerQueue = queueOf();
      const worker = await runQueueWorker({
        connection: redis.url,
        engine: new FakeEngine({ delayMs: 300 }),
        name: workerQueue.name,
        lockDurationMs: 1000,
      });
      open.push(worker);
      const registry = new Registry();
      registerQueueMetrics(registry, worker);
      const idleWorker = await runQueueWorker({
        connection: redis.url,
        engine: new FakeEngine(),
        name: `idle-${randomUUID()}`,
        lockDurationMs: 1000,
      });
      open.push(idleWorker);
      const running = await workerQueue.submit(spec());
      await until('the worker to hold its job', async () => (await running.status()) === 'running');
      expect(idle.reachable).toBe(true);
      process.kill(redis.pid!, 'SIGSTOP');
      try {
        const closeStart = performance.now();
        const closing = settledWithin(worker.close(), 10_000);
        // The client has not noticed: its connection is up. Each call is refused within the bound.
        const t0 = performance.now();
        const calls = [
          queue.submit(spec()),
          queue.view(held.id),
          queue.counts(),
          queue.cancel(held.id),
          queue.forget(held.id),
          queue.ready(),
        ];
        const outcomes = await Promise.all(calls.map((c) => settledWithin(c, BOUND_MS + 3000)));
        for (const outcome of outcomes) expect(outcome).toMatchObject({ error: expect.any(QueueUnavailableError) });
        expect(performance.now() - t0).toBeLessThan(BOUND_MS + 2000);
        expect(queue.reachable).toBe(false);
        // Refused at once now that Redis was seen silent.
        const t1 = performance.now();
        await expect(queue.view(held.id)).rejects.toThrow(/not answering/);
        expect(performance.now() - t1).toBeLessThan(BOUND_MS - 50);
        // A client with no traffic sees it too (its probe).
        await until('the idle client to see Redis silent', () => !idle.reachable, BOUND_MS * 3 + 1000);
        const scrape = await settledWithin(registry.metrics(), 3000);
        expect(scrape).toMatchObject({ value: expect.stringMatching(/tscuda_queue_jobs_total/) });
        // A worker's readiness (tscuda worker's /ready) follows whether Redis answers.
        await until('the idle worker to see Redis silent', () => !idleWorker.reachable, 4000);
        // Its job finished here, but its completion cannot reach Redis: the close is cut, not held forever.
        expect(await closing).toHaveProperty('value');
        expect(performance.now() - closeStart).toBeLessThan(9000);
      } finally {
        process.kill(redis.pid!, 'SIGCONT');
      }
      await until('the client and the worker to see Redis answer again', () => queue.reachable && idleWorker.reachable);
      expect((await queue.view(held.id)).status).toBe('queued');
      // The submit refused during the stop left nothing behind once Redis read its commands: only the job queued before waits.
      const waiting = async (): Promise<number> => {
        const c = await queue.counts();
        return c.waiting + c.prioritized;
      };
      await until('the late job to be withdrawn', async () => (await waiting()) === 1, 3000);
      // Nor does its admission hold a place: the ledger counts the one job waiting (64 f32 samples).
      const keys = ledgerKeys('tscuda', queue.name);
      const peek = new Redis(redis.url);
      try {
        await until(
          'the ledger to count only the waiting job',
          async () => (await peek.zcard(keys.expiries)) === 1 && (await peek.get(keys.total)) === '256',
          3000,
        );
      } finally {
        peek.disconnect();
      }
    }, 15_000);

    it('more than ten calls waiting for a connection share one waiter (no MaxListenersExceededWarning)', async () => {
      const warnings: Error[] = [];
      const onWarning = (w: Error): void => void warnings.push(w);
      process.on('warning', onWarning);
      const queue = new JobQueue({ connection: 'redis://127.0.0.1:1', name: 'listeners', commandTimeoutMs: BOUND_MS });
      try {
        const calls = Array.from({ length: 25 }, () => queue.view(newJobId()));
        const outcomes = await Promise.all(calls.map((c) => settledWithin(c, 3000)));
        for (const outcome of outcomes) expect(outcome).toMatchObject({ error: expect.any(QueueUnavailableError) });
        await new Promise((r) => setImmediate(r));
        expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      } finally {
        process.off('warning', onWarning);
        await queue.close();
      }
    });

    it('ids that are BullMQ key names (or not of submit shape) are unknown jobs, never a Redis type error', async () => {
      const queue = queueOf({ rateLimit: { max: 100, durationMs: 1000 } });
      // Activity first, so that the queue's own keys exist.
      const handle = await queue.submit(spec(), { priority: 5 });
      await handle.cancel();
      for (const id of [
        'events',
        'id',
        'prioritized',
        'marker',
        'pc',
        'meta',
        'wait',
        'active',
        'limiter',
        'stalled-check',
        'admission:bytes',
        `${handle.id}:lock`,
        '',
      ]) {
        expect(await queue.view(id)).toEqual({ id, status: 'unknown', attempts: 0 });
        expect(await queue.cancel(id)).toBe(false);
        expect(await queue.forget(id)).toBe(false);
        await expect(queue.job(id).result).rejects.toBeInstanceOf(UnknownQueueJobError);
      }
    });

    it('admits by jobs and by bytes waiting: QueueFullError past either, room again once a worker takes them or they expire; expired jobs are swept', async () => {
      const byJobs = queueOf({ maxWaitingJobs: 3 });
      for (let i = 0; i < 3; i++) await byJobs.submit(spec());
      await expect(byJobs.submit(spec())).rejects.toThrow(QueueFullError);
      await expect(byJobs.submit(spec())).rejects.toThrow(/3 jobs wait for a worker \(maxWaitingJobs = 3\)/);
      const worker = await runQueueWorker({
        connection: redis.url,
        engine: new FakeEngine(),
        name: byJobs.name,
        lockDurationMs: 1000,
      });
      open.push(worker);
      await until('the worker to take them', () => worker.counts.completed === 3);
      await (
        await byJobs.submit(spec())
      ).result;

      // 256 f32 samples are 1 KiB: three fit in 3 KiB, a fourth does not; they expire after inputTtlMs.
      const byBytes = queueOf({ maxWaitingBytes: 3 * 1024, inputTtlMs: 200 });
      for (let i = 0; i < 3; i++) await byBytes.submit(spec(256));
      await expect(byBytes.submit(spec(256))).rejects.toThrow(
        /3072 bytes of samples wait for a worker \(maxWaitingBytes = 3072\)/,
      );
      await new Promise((r) => setTimeout(r, 300));
      await byBytes.submit(spec(256));
      // No worker takes them: past inputTtlMs the client's sweep removes the expired jobs from Redis.
      const waiting = async (): Promise<number> => {
        const c = await byBytes.counts();
        return c.waiting + c.prioritized + c.delayed;
      };
      expect(await waiting()).toBe(4);
      await until('the expired jobs to be swept', async () => (await waiting()) === 0, 4000);
    }, 15_000);

    it('jobs a worker held across a Redis restart (their locks expired meanwhile) run again within seconds of Redis returning', async () => {
      const persistent = await startRedis({ persistent: true });
      open.push({ close: () => persistent.dispose() });
      const name = `restart-${randomUUID()}`;
      const queue = queueOf({ connection: persistent.url, name, commandTimeoutMs: 2000, pollIntervalMs: 200 });
      const worker = await runQueueWorker({
        connection: persistent.url,
        engine: new FakeEngine({ delayMs: 300 }),
        name,
        lockDurationMs: 500,
      });
      open.push(worker);
      const handles = await Promise.all(Array.from({ length: 6 }, () => queue.submit(spec())));
      await until('the worker to hold the jobs', async () => (await queue.counts()).active > 0);
      await persistent.stop();
      // Longer than the locks: Redis drops them as it loads its data again.
      await new Promise((r) => setTimeout(r, 1000));
      await persistent.start();
      const back = performance.now();
      const outcomes = await Promise.all(handles.map((h) => settledWithin(h.result, 10_000)));
      for (const outcome of outcomes) expect(outcome).toHaveProperty('value');
      expect(performance.now() - back).toBeLessThan(6000);
    }, 20_000);

    it('a worker killed mid-job (SIGKILL): the job starts again within its lock plus a few seconds (default stalled-check interval)', async () => {
      const name = `kill-${randomUUID()}`;
      const queue = queueOf({ name, commandTimeoutMs: 5000 });
      const fixture = join(import.meta.dirname, 'fixtures', 'fake-worker.ts');
      const a = execa('node', ['--import', 'tsx', fixture], {
        env: { REDIS_URL: redis.url, QUEUE: name, DELAY_MS: '60000', LOCK_MS: '1000', WORKER: 'a' },
        reject: false,
        buffer: false,
      });
      await followChildLines(a, 'worker a', []);
      const handle = await queue.submit(spec(), { attempts: 3 });
      await until('the job to run', async () => (await handle.status()) === 'running');
      a.kill('SIGKILL');
      await a;
      const killedAt = performance.now();
      // The other worker's own defaults: the stalled check every min(2000 ms, lock).
      const b = await runQueueWorker({ connection: redis.url, engine: new FakeEngine(), name, lockDurationMs: 1000 });
      open.push(b);
      const result = await handle.result;
      expect(result.queue).toMatchObject({ worker: b.name, attempts: 2, stalls: 1 });
      expect(performance.now() - killedAt).toBeLessThan(1000 + 4000);
    }, 20_000);
  },
);
