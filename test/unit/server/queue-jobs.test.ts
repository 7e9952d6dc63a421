/**
 * The server's one jobs route over the Redis queue (`createServer({ engine: null, jobs:
 * queueJobService(queue) })`, what `tscuda serve --redis` builds) with a real redis-server and a
 * worker over the FakeEngine: the same request and response shapes as the in-process jobs, any
 * id from any front, errors in the server's format, readiness following Redis, no GPU on the front.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue, runQueueWorker, type QueueWorker } from '../../../src/queue/index.js';
import { createServer, queueJobService } from '../../../src/server/index.js';
import { parseFieldsHeader } from '../../../src/server/codec.js';
import { redisSkipReason, startRedis, type TestRedis } from '../queue/redis-server.js';
import { FakeEngine } from './fake-engine.js';

const fronts: ReturnType<typeof createServer>[] = [];
/** A front as `tscuda serve --redis --workers 0` on a machine without a GPU: no engine, jobs through the queue. */
const front = async (queue: JobQueue) => {
  const server = createServer({
    engine: null,
    jobs: queueJobService(queue),
    unavailableReason: 'no GPU here (a front)',
  });
  fronts.push(server);
  return server.app;
};

async function poll(app: ReturnType<typeof createServer>['app'], id: string, accept = 'application/json') {
  for (let i = 0; i < 200; i++) {
    const r = await app.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: { accept } });
    if (r.statusCode !== 202) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`job ${id} did not finish`);
}

describe.skipIf(redisSkipReason !== undefined)('job routes over the queue', () => {
  let redis: TestRedis;
  let queueA: JobQueue;
  let queueB: JobQueue;
  let worker: QueueWorker;
  const name = `front-${randomUUID()}`;
  beforeAll(async () => {
    redis = await startRedis();
    queueA = new JobQueue({ connection: redis.url, name });
    queueB = new JobQueue({ connection: redis.url, name });
    worker = await runQueueWorker({ connection: redis.url, engine: new FakeEngine(), name });
  });
  afterAll(async () => {
    for (const server of fronts) await server.close();
    await worker?.close();
    await queueA?.close();
    await queueB?.close();
    await redis?.dispose();
  }, 20_000);

  it("POST on one front, GET on another: the result in the in-memory routes' JSON and binary shapes", async () => {
    const a = await front(queueA);
    const b = await front(queueB);
    const signal = Array.from({ length: 128 }, () => Math.fround(Math.random() - 0.5));
    const posted = await a.inject({ method: 'POST', url: '/v1/jobs', payload: { signal, fs: 100, flags: ['stft'] } });
    expect(posted.statusCode).toBe(202);
    const body = posted.json() as { id: string; status: string; href: string };
    expect(body).toEqual({
      id: expect.stringMatching(/^j[A-Za-z0-9_-]{22}$/),
      status: 'queued',
      href: `/v1/jobs/${body.id}`,
    });
    expect(posted.headers.location).toBe(body.href);
    const got = await poll(b, body.id);
    expect(got.statusCode).toBe(200);
    const view = got.json() as {
      id: string;
      status: string;
      error?: unknown;
      result: { filtered: number[]; shapes: Record<string, number[]> };
    };
    expect(view).toMatchObject({ status: 'ready' });
    expect(view.result.filtered).toEqual(signal.map((v) => Math.fround(v * 2)));
    expect(view.result.shapes.filtered).toEqual([1, 128]);
    const binary = await poll(b, body.id, 'application/octet-stream');
    expect(binary.headers['x-tscuda-job-status']).toBe('ready');
    const layout = parseFieldsHeader(String(binary.headers['x-tscuda-fields']));
    const filtered = layout.find((f) => f.name === 'filtered')!;
    const raw = binary.rawPayload;
    expect(
      Array.from(
        new Float32Array(
          raw.buffer.slice(raw.byteOffset + filtered.offset, raw.byteOffset + filtered.offset + filtered.bytes),
        ),
      ),
    ).toEqual(view.result.filtered);
    const deleted = await a.inject({ method: 'DELETE', url: `/v1/jobs/${body.id}` });
    expect(deleted.json()).toEqual({ id: body.id, status: 'ready', deleted: true });
    expect((await b.inject({ method: 'GET', url: `/v1/jobs/${body.id}` })).statusCode).toBe(404);
  });

  it('refuses a bad job with 400 naming the field, before anything is queued', async () => {
    const before = await queueA.counts();
    const r = await (
      await front(queueA)
    ).inject({ method: 'POST', url: '/v1/jobs', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], flags: ['cycles'] } });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: { code: 'invalid_field', field: 'bands', retryable: false } });
    expect(await queueA.counts()).toEqual(before);
  });

  it('DELETE cancels a queued job; an unknown id is 404 unknown_job; readiness is 200', async () => {
    const idle = new JobQueue({ connection: redis.url, name: `idle-${randomUUID()}` });
    try {
      const app = await front(idle);
      const posted = (
        await app.inject({
          method: 'POST',
          url: '/v1/jobs',
          payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], flags: ['stft'] },
        })
      ).json() as { id: string };
      expect((await app.inject({ method: 'GET', url: `/v1/jobs/${posted.id}` })).json()).toEqual({
        id: posted.id,
        status: 'queued',
      });
      const del = await app.inject({ method: 'DELETE', url: `/v1/jobs/${posted.id}` });
      expect(del.json()).toEqual({ id: posted.id, status: 'cancelled', deleted: false });
      const after = await app.inject({ method: 'GET', url: `/v1/jobs/${posted.id}` });
      expect(after.json()).toMatchObject({ id: posted.id, status: 'cancelled', error: { code: 'cancelled' } });
      const unknown = await app.inject({ method: 'GET', url: '/v1/jobs/jnope' });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ error: { code: 'unknown_job', field: 'id' } });
      // A front holds no GPU: ready while its queue is; GPU work of its own is 503.
      expect((await app.inject({ method: 'GET', url: '/v2/health/ready' })).json()).toEqual({ ready: true });
      const sync = await app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8] } });
      expect(sync.statusCode).toBe(503);
    } finally {
      await idle.close();
    }
  });

  it('without Redis: readiness 503 with the reason, POST 503 queue_unavailable (retryable)', async () => {
    const away = new JobQueue({ connection: 'redis://127.0.0.1:1', name: 'away' });
    try {
      const app = await front(away);
      const ready = await app.inject({ method: 'GET', url: '/v2/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ ready: false, reason: expect.stringMatching(/not reachable/) });
      const posted = await app.inject({
        method: 'POST',
        url: '/v1/jobs',
        payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], flags: ['stft'] },
      });
      expect(posted.statusCode).toBe(503);
      expect(posted.headers['retry-after']).toBe('1');
      expect(posted.json()).toMatchObject({ error: { code: 'queue_unavailable', retryable: true } });
    } finally {
      await away.close();
    }
  });
});
