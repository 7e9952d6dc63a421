/**
 * The queue front (`createServer({ engine: null, jobs: queueJobService(queue) })`, what `tscuda
 * serve --redis` builds) against a Redis that stops answering (SIGSTOP) or fills up, and ids
 * that are BullMQ's own key names: every request is answered within the queue's bound (503
 * queue_unavailable, retryable, with Retry-After), readiness is 503 while Redis does not answer,
 * /metrics answers, a full queue is 429 queue_full, and a key name is 404.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../../src/queue/index.js';
import { createServer, queueJobService } from '../../../src/server/index.js';
import { redisSkipReason, startRedis, type TestRedis } from '../queue/redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

/** The bound of the test of a stopped Redis; the others keep a roomier one (a loaded host may take a while to answer). */
const BOUND_MS = 500;
const signal = (): number[] => Array.from({ length: 64 }, () => Math.random() - 0.5);

describe.skipIf(redisSkipReason !== undefined)('the queue front against a stopped or full Redis', () => {
  let redis: TestRedis;
  const servers: ReturnType<typeof createServer>[] = [];
  const queues: JobQueue[] = [];
  const frontOf = (options: Partial<ConstructorParameters<typeof JobQueue>[0]> = {}) => {
    const queue = new JobQueue({
      connection: redis.url,
      name: `front-${randomUUID()}`,
      commandTimeoutMs: 3000,
      ...options,
    });
    queues.push(queue);
    const server = createServer({
      engine: null,
      jobs: queueJobService(queue),
      unavailableReason: 'no GPU here (a front)',
    });
    servers.push(server);
    return { app: server.app, queue };
  };
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    for (const queue of queues) await queue.close();
    await redis?.dispose();
  }, 20_000);

  it('Redis stopped: POST, GET and DELETE answer 503 queue_unavailable within the bound, ready is 503, /metrics answers', async () => {
    const { app, queue } = frontOf({ commandTimeoutMs: BOUND_MS });
    await queue.ready();
    expect((await app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(200);
    const posted = await app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(), flags: ['stft'] },
    });
    expect(posted.statusCode).toBe(202);
    const { id } = posted.json() as { id: string };
    process.kill(redis.pid!, 'SIGSTOP');
    try {
      const t0 = performance.now();
      const answers = await Promise.all([
        app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(), flags: ['stft'] } }),
        app.inject({ method: 'GET', url: `/v1/jobs/${id}` }),
        app.inject({ method: 'DELETE', url: `/v1/jobs/${id}` }),
      ]);
      expect(performance.now() - t0).toBeLessThan(BOUND_MS + 2000);
      for (const answer of answers) {
        expect(answer.statusCode).toBe(503);
        expect(answer.json()).toMatchObject({ error: { code: 'queue_unavailable', retryable: true } });
        expect(answer.headers['retry-after']).toBeDefined();
      }
      const ready = await app.inject({ method: 'GET', url: '/v2/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ ready: false, reason: expect.stringMatching(/not reachable/) });
      const t1 = performance.now();
      const metrics = await app.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.statusCode).toBe(200);
      expect(metrics.body).toMatch(/tscuda_queue_reachable 0/);
      expect(performance.now() - t1).toBeLessThan(BOUND_MS + 2000);
    } finally {
      process.kill(redis.pid!, 'SIGCONT');
    }
    for (let i = 0; i < 200 && !queue.reachable; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(200);
  }, 15_000);

  it('past the waiting jobs it admits, a POST is 429 queue_full (retryable, Retry-After)', async () => {
    const { app } = frontOf({ maxWaitingJobs: 2 });
    for (let i = 0; i < 2; i++)
      expect(
        (await app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(), flags: ['stft'] } }))
          .statusCode,
      ).toBe(202);
    const full = await app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(), flags: ['stft'] } });
    expect(full.statusCode).toBe(429);
    expect(full.json()).toMatchObject({
      error: { code: 'queue_full', retryable: true, message: expect.stringMatching(/maxWaitingJobs = 2/) },
    });
    expect(full.headers['retry-after']).toBeDefined();
  });

  it('a NaN sample is 400 naming it, in a binary body as in JSON (the one rule for non-finite samples)', async () => {
    const { app } = frontOf();
    const samples = Float32Array.from(signal());
    samples[9] = Number.NaN;
    const binary = await app.inject({
      method: 'POST',
      url: '/v1/jobs?dtype=f32&flags=stft',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from(samples.buffer),
    });
    expect(binary.statusCode).toBe(400);
    expect(binary.json()).toMatchObject({
      error: { code: 'invalid_field', message: expect.stringMatching(/\[9\]: is NaN/) },
    });
    const json = await app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { 'content-type': 'application/json' },
      payload: '{"signal":[1,2,1e400],"flags":["stft"]}',
    });
    expect(json.statusCode).toBe(400);
  });

  it("ids that are BullMQ's own key names are 404, never a 500", async () => {
    const { app } = frontOf();
    expect(
      (await app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(), flags: ['stft'] } }))
        .statusCode,
    ).toBe(202);
    for (const id of ['events', 'id', 'prioritized', 'marker', 'pc', 'meta', 'wait', 'active']) {
      for (const method of ['GET', 'DELETE'] as const) {
        const answer = await app.inject({ method, url: `/v1/jobs/${id}` });
        expect(answer.statusCode, `${method} ${id}`).toBe(404);
      }
    }
  });
});
