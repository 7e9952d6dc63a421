/**
 * `tscuda serve --redis URL` as a process, with a real redis-server and a queue worker over the
 * FakeEngine in this process: a front without a GPU is ready while Redis answers, runs no job
 * itself, and answers /v1/jobs through the queue; an unreachable Redis at start is one line and
 * exit 1; --queue without --redis is a usage error (exit 2).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runQueueWorker, type QueueWorker } from '../../../src/queue/index.js';
import { redisSkipReason, startRedis, type TestRedis } from '../queue/redis-server.js';
import { FakeEngine } from './fake-engine.js';
import { BIN, freePort, ROOT, spawnServe } from './serve-process.js';
import { execa } from 'execa';

describe('tscuda serve --redis: usage and start-up', () => {
  let usageRedis: TestRedis | undefined;
  let redisUrlForUsage = 'redis://127.0.0.1:1';
  beforeAll(async () => {
    if (redisSkipReason !== undefined) return;
    usageRedis = await startRedis();
    redisUrlForUsage = usageRedis.url;
  });
  afterAll(async () => {
    await usageRedis?.dispose();
  });
  it('an unreachable Redis at start: one line naming it, exit 1; --queue alone: usage, exit 2', async () => {
    const down = await execa(
      'node',
      [BIN, 'serve', '--workers', '0', '--port', '0', '--redis', 'redis://127.0.0.1:1'],
      { cwd: ROOT, reject: false, timeout: 30_000 },
    );
    expect(down.exitCode).toBe(1);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toMatch(/Redis at .*127\.0\.0\.1:1.* is unreachable/);
    const usage = await execa('node', [BIN, 'serve', '--queue', 'q'], { cwd: ROOT, reject: false, timeout: 30_000 });
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toMatch(/--queue needs --redis/);
    const blobs = await execa('node', [BIN, 'serve', '--blob-redis', 'redis://127.0.0.1:1'], {
      cwd: ROOT,
      reject: false,
      timeout: 30_000,
    });
    expect(blobs.exitCode).toBe(2);
    expect(blobs.stderr).toMatch(/--blob-redis needs --redis/);
    const prefixAlone = await execa('node', [BIN, 'serve', '--prefix', 'p'], {
      cwd: ROOT,
      reject: false,
      timeout: 30_000,
    });
    expect(prefixAlone.exitCode).toBe(2);
    expect(prefixAlone.stderr).toMatch(/--prefix needs --redis/);
    // Every blob store is checked at start, as the queue's Redis is.
    const store = await execa(
      'node',
      [
        BIN,
        'serve',
        '--workers',
        '0',
        '--port',
        '0',
        '--redis',
        redisUrlForUsage,
        '--blob-redis',
        'redis://127.0.0.1:1',
      ],
      {
        cwd: ROOT,
        reject: false,
        timeout: 30_000,
      },
    );
    expect(store.exitCode).toBe(1);
    expect(store.stderr).toMatch(/Redis at .*127\.0\.0\.1:1.* is unreachable/);
  }, 60_000);
});

describe.skipIf(redisSkipReason !== undefined)('tscuda serve --redis: a front over the queue (no GPU here)', () => {
  let redis: TestRedis;
  let worker: QueueWorker;
  const name = `serve-${randomUUID()}`;
  const prefix = 'front-test';
  beforeAll(async () => {
    redis = await startRedis();
    // A prefix of their own: a front that did not pass --prefix on would put jobs where this worker never looks.
    worker = await runQueueWorker({ connection: redis.url, engine: new FakeEngine(), name, prefix });
  });
  afterAll(async () => {
    await worker?.close();
    await redis?.dispose();
  }, 20_000);

  it('is ready while Redis answers and answers jobs run by a queue worker; SIGTERM stops it with exit 0', async () => {
    const port = await freePort();
    const serve = spawnServe([
      '--workers',
      '0',
      '--port',
      String(port),
      '--redis',
      redis.url,
      '--queue',
      name,
      '--prefix',
      prefix,
    ]);
    try {
      // A healthy start reads as one: the line waits for the queue's Redis to connect (it said "not ready ... reconnecting").
      const [line] = await serve.waitFor(/listening on[^\n]*/);
      expect(line).not.toMatch(/not ready/);
      const base = `http://127.0.0.1:${port}`;
      expect(await (await fetch(`${base}/v2/health/ready`)).json()).toEqual({ ready: true });
      const signal = Array.from({ length: 64 }, () => Math.fround(Math.random() - 0.5));
      const posted = await fetch(`${base}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ signal, flags: ['stft'] }),
      });
      expect(posted.status).toBe(202);
      const { id } = (await posted.json()) as { id: string };
      let view: { status: string; result?: { filtered: number[] } } = { status: 'queued' };
      for (let i = 0; i < 200 && view.status !== 'ready'; i++) {
        await new Promise((r) => setTimeout(r, 25));
        view = (await (await fetch(`${base}/v1/jobs/${id}`)).json()) as typeof view;
      }
      expect(view.status).toBe('ready');
      expect(view.result!.filtered).toEqual(signal.map((v) => Math.fround(v * 2)));
      // GPU work of its own: 503 (this front has no engine).
      expect(
        (
          await fetch(`${base}/v1/stft`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ signal }),
          })
        ).status,
      ).toBe(503);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(/tscuda_queue_depth/);
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect((await serve.child).exitCode).toBe(0);
  }, 90_000);
});
