/**
 * Every route declares the schemas of its JSON answers, and no answer loses a field to them:
 * fastify serializes by the response schema and leaves out what it does not list. The walk
 * reads each route's schema as a server registers its route modules (ROUTES: they need its plugins);
 * the answers are fully populated (a result with every field a result can carry) and compared,
 * through app.inject, with what their handlers gave (serialization-watch.ts).
 */
import Fastify, { type RouteOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILTIN_FLAGS, RESULT_ARRAY_FIELDS } from '../../../src/engine/parameters.js';
import { BATCH_KINDS } from '../../../src/server/batch.js';
import { DEFAULT_LIMITS } from '../../../src/server/options.js';
import { createServer } from '../../../src/server/create-server.js';
import type { RouteModule } from '../../../src/server/routes/index.js';
import { JobValidationError } from '../../../src/engine/errors.js';
import { FakeEngine } from './fake-engine.js';
import { batchers, closeServers, make, signal, waitFor, watchOf } from './routes-fixture.js';
import { watchSerialization } from './serialization-watch.js';

afterEach(closeServers);

/**
 * Routes whose success answer is not JSON, so they declare schemas for their error answers only.
 * A route answering binary as well as JSON (the job results, batch outputs) is not here: its JSON
 * answer has a schema, and a Buffer or stream is sent as it is.
 */
const NON_JSON_SUCCESS: Record<string, string> = {
  'GET /metrics': 'Prometheus text exposition (metrics.contentType)',
};

/**
 * `METHOD /url` of every route of a server (its ROUTES) and of the `extra` modules registered on it,
 * with its response schemas (HEAD routes fastify adds are left out).
 */
async function registeredRoutes(extra: readonly RouteModule[] = []): Promise<Map<string, Record<string, unknown>>> {
  const server = createServer();
  const routes = new Map<string, Record<string, unknown>>();
  // The route modules register when the app boots: a hook added now sees them all.
  server.app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat())
      if (method !== 'HEAD')
        routes.set(`${method} ${route.url}`, (route.schema?.response ?? {}) as Record<string, unknown>);
  });
  for (const module of extra) void server.app.register(module);
  await server.app.ready();
  await server.close();
  return routes;
}

/** Why each route's response schemas fall short: no error envelope, or no JSON success answer (outside NON_JSON_SUCCESS). */
function missingSchemas(routes: Map<string, Record<string, unknown>>): string[] {
  const missing: string[] = [];
  for (const [route, response] of routes) {
    for (const errors of ['4xx', '5xx']) if (response[errors] === undefined) missing.push(`${route}: no ${errors}`);
    const success = Object.keys(response).some((code) => /^2\d\d$|^2xx$/.test(code));
    if (!success && NON_JSON_SUCCESS[route] === undefined) missing.push(`${route}: no 2xx answer`);
  }
  return missing;
}

/** What a flag's job needs beyond a signal. */
const FLAG_PARAMETERS: Record<string, Record<string, unknown>> = {
  cycles: { bands: [[5, 10]] },
  wavelet: { freqs: [5, 10] },
  decimate: { q: 2 },
};

describe('response schemas', () => {
  it('every route of the server declares its JSON answers, errors included', async () => {
    const routes = await registeredRoutes();
    expect(routes.size).toBeGreaterThanOrEqual(BUILTIN_FLAGS.length + BATCH_KINDS.length + 7);
    expect(missingSchemas(routes)).toEqual([]);
    // The list names routes that exist.
    for (const route of Object.keys(NON_JSON_SUCCESS)) expect(routes.has(route)).toBe(true);
  });

  it('the walk finds a route added without a response schema', async () => {
    const bare: RouteModule = async (app) => {
      app.get('/v1/new', async () => ({ ok: true }));
    };
    expect(missingSchemas(await registeredRoutes([bare]))).toEqual([
      'GET /v1/new: no 4xx',
      'GET /v1/new: no 5xx',
      'GET /v1/new: no 2xx answer',
    ]);
  });

  it('the watch reports an answer that lost a field to its schema', async () => {
    const app = Fastify();
    const watch = watchSerialization(app);
    app.get(
      '/short',
      { schema: { response: { 200: { type: 'object', properties: { kept: { type: 'number' } } } } } },
      async () => ({ kept: 1, dropped: 2 }),
    );
    const res = await app.inject('/short');
    await app.close();
    expect(res.json()).toEqual({ kept: 1 });
    expect(watch.mismatches).toHaveLength(1);
    expect(watch.mismatches[0]).toContain('"dropped":2');
  });

  it('every route answers a fully populated JSON body with every field', async () => {
    const engine = new FakeEngine({ complete: true });
    const info = { devices: [{ name: 'fake', memoryBytes: 1 }], build: { commit: 'abc' } };
    const s = make({ engine, batchers, exposeProcessInfo: true, info: () => info });
    const inject = s.app.inject.bind(s.app);

    // The synchronous endpoints: a result with every array field, frames, dominant cycles and stage values.
    for (const flag of BUILTIN_FLAGS) {
      const res = await inject({
        method: 'POST',
        url: `/v1/${flag}`,
        payload: { signal: signal(64), fs: 100, ...FLAG_PARAMETERS[flag] },
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json<Record<string, unknown>>();
      for (const field of RESULT_ARRAY_FIELDS) expect(body[field], `${flag}: ${field}`).toBeDefined();
      expect(body.stages).toMatchObject({ custom: { nested: [1, { deep: 'value', none: null }], flag: true } });
      expect(body.frames).toBe(1);
    }

    // Jobs: submitted, ready with its result, failed with its error, unknown, deleted.
    const submitted = await inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(64), flags: ['stft'] },
    });
    expect(submitted.statusCode).toBe(202);
    const { id, href } = submitted.json<{ id: string; href: string }>();
    await waitFor(() => s.jobView(id)?.status === 'ready', 'the job to finish');
    const ready = await inject({ method: 'GET', url: href });
    expect(ready.json<{ result: { shapes: object } }>().result.shapes).toBeDefined();
    expect((await inject({ method: 'DELETE', url: href })).json()).toEqual({ id, status: 'ready', deleted: true });
    expect((await inject({ method: 'GET', url: href })).statusCode).toBe(404);
    expect((await inject({ method: 'DELETE', url: href })).json()).toMatchObject({
      error: { code: 'unknown_job', field: 'id', retryable: false },
    });

    // Batch outputs and a batch refused as such.
    const batch = await inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1, 2]] } });
    expect(batch.json()).toEqual({ outputs: [[2, 4]] });
    const pair = { items: [{ a: [1, 0], b: [0, 1], t: 0.5 }] };
    expect((await inject({ method: 'POST', url: '/v1/batch/slerp', payload: pair })).json()).toEqual({
      outputs: [[0.5, 0.5]],
    });
    expect((await inject({ method: 'POST', url: '/v1/batch/lerp', payload: { items: [{}] } })).statusCode).toBe(400);

    // Health and info (process details and the caller's own fields).
    expect((await inject('/v2/health/live')).json()).toEqual({ live: true });
    expect((await inject('/v2/health/ready')).json()).toEqual({ ready: true });
    const shown = (await inject('/v1/info')).json<Record<string, unknown>>();
    expect(shown).toMatchObject({ ...info, engine: { label: 'fake', lanes: 2, devices: [0] }, reason: null });
    for (const key of ['pid', 'node', 'uptimeS', 'rssBytes', 'heapUsedBytes', 'externalBytes'])
      expect(shown[key], key).toBeDefined();
    expect(shown.limits).toEqual({ ...DEFAULT_LIMITS, maxBatchDelayMs: 0 });
    expect((await inject('/metrics')).headers['content-type']).toMatch(/^text\/plain/);

    // Every JSON route of the walk answered above: a new route needs its case here.
    const walked = [...(await registeredRoutes()).keys()].filter((r) => NON_JSON_SUCCESS[r] === undefined);
    expect(walked.filter((route) => !watchOf(s).answered.has(route))).toEqual([]);
  });

  it('the other answers keep every field: pending, cancelled and failed jobs, not ready, no GPU', async () => {
    const held = new FakeEngine({ manual: true });
    const s = make({ engine: held });
    const submitted = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(32), flags: ['stft'] },
    });
    const { id, href } = submitted.json<{ id: string; href: string }>();
    const pending = await s.app.inject({ method: 'GET', url: href });
    expect(pending.statusCode).toBe(202);
    expect(pending.json()).toEqual({ id, status: 'queued' });
    expect((await s.app.inject({ method: 'DELETE', url: href })).json()).toEqual({
      id,
      status: 'cancelled',
      deleted: false,
    });

    const failing = new FakeEngine({ failJob: () => new JobValidationError('bands', 'refused by the fake GPU') });
    const f = make({ engine: failing });
    const job = (
      await f.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(32), flags: ['stft'] } })
    ).json<{
      id: string;
    }>();
    await waitFor(() => f.jobView(job.id)?.status === 'error', 'the job to fail');
    const failed = await f.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}` });
    expect(failed.json()).toMatchObject({ id: job.id, status: 'error', error: { field: 'bands', retryable: false } });

    const none = make({ engine: null, unavailableReason: 'no GPU in this test' });
    const notReady = await none.app.inject('/v2/health/ready');
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toEqual({ ready: false, reason: 'no GPU in this test' });
    const noGpu = await none.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(32) } });
    expect(noGpu.statusCode).toBe(503);
    expect(noGpu.json<{ error: { retryable: boolean } }>().error.retryable).toBeTypeOf('boolean');
    expect((await none.app.inject('/v1/info')).json()).toMatchObject({ ready: false, engine: null });

    const leaving = new FakeEngine();
    const l = make({ engine: leaving, peersReady: () => true });
    leaving.loseContext();
    await waitFor(() => !l.ready, 'the context loss to be seen');
    expect((await l.app.inject('/v2/health/ready')).json()).toEqual({
      ready: true,
      note: 'this worker is leaving; another serves',
    });
    for (const server of [s, f, none, l]) expect(watchOf(server).answered.size).toBeGreaterThan(0);
  });
});
