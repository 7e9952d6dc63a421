/**
 * What a route gets from the server's plugins (src/server/plugins/): every decorator of
 * SERVER_DECORATORS, and, without a line of its own, admission, the accounting of its answers and
 * the one error handler; close() waits for its tracked handler. A route module registered where
 * the plugins are not is refused by fastify, and so is a plugin registered before one it needs.
 * close() runs the plugins' onClose hooks in order: the requests in progress finish, then the
 * batchers close, then an owned engine.
 */
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/server/errors.js';
import { gpuPlugin } from '../../../src/server/plugins/gpu.js';
import { ERROR_RESPONSES } from '../../../src/server/response-schemas.js';
import { ROUTES, SERVER_DECORATORS, routeModule } from '../../../src/server/routes/index.js';
import { FakeEngine, fakeBatcher } from './fake-engine.js';
import { closeServers, make, waitFor } from './routes-fixture.js';

afterEach(closeServers);

/** A route module of one POST route, `/probe`, whose handler waits for `held` and fails when its body asks. */
function probeRoutes(held: Promise<void>, onDone: () => void = () => undefined) {
  const response = { 200: { type: 'object', properties: { ok: { type: 'boolean' } } }, ...ERROR_RESPONSES };
  return routeModule('test-probe-routes', async (app) => {
    app.post('/probe', { schema: { response } }, (request, reply) =>
      app.gpu.track(async () => {
        await held;
        onDone();
        if ((request.body as { fail?: boolean }).fail === true)
          throw new HttpError(400, 'probe_refused', 'probe: refused', { field: 'probe' });
        return reply.send({ ok: true });
      }),
    );
  });
}

describe('what a route gets from the server plugins', () => {
  it('a route module registered on a server sees every decorator of the plugins', async () => {
    const s = make();
    const seen: string[] = [];
    void s.app.register(
      routeModule('test-decorators', async (app) => {
        seen.push(...SERVER_DECORATORS.filter((name) => app.hasDecorator(name)));
      }),
    );
    await s.app.ready();
    expect(seen).toEqual([...SERVER_DECORATORS]);
    expect(SERVER_DECORATORS).toEqual([
      'config',
      'metrics',
      'accounting',
      'shedding',
      'bodies',
      'batchers',
      'gpu',
      'jobs',
    ]);
  });

  it("the server's route modules are refused on an app without the plugins", async () => {
    for (const module of ROUTES) {
      const app = Fastify();
      void app.register(module);
      await expect(app.ready()).rejects.toMatchObject({ code: 'FST_ERR_PLUGIN_NOT_PRESENT_IN_INSTANCE' });
    }
  });

  it('a plugin registered before one it needs is refused, naming it', async () => {
    const app = Fastify();
    // The dependency check comes before the plugin runs: its options are never read.
    void app.register(gpuPlugin, { gpu: undefined as never });
    await expect(app.ready()).rejects.toMatchObject({
      code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED',
      message: expect.stringContaining('tscuda-shedding') as unknown,
    });
  });

  it("a module's POST route is admitted, accounted, and answered by the one error handler", async () => {
    const s = make({ engine: new FakeEngine(), limits: { maxPending: 1 } });
    let release!: () => void;
    void s.app.register(probeRoutes(new Promise<void>((resolve) => (release = resolve))));
    const first = s.app.inject({ method: 'POST', url: '/probe', payload: {} });
    await waitFor(() => s.pending === 1, 'the admitted probe');
    // Admission: the one place in progress is taken.
    const full = await s.app.inject({ method: 'POST', url: '/probe', payload: {} });
    expect(full.statusCode).toBe(429);
    expect(full.json()).toMatchObject({ error: { code: 'too_many_requests', retryable: true } });
    release();
    expect((await first).json()).toEqual({ ok: true });
    // The error handler: a thrown HttpError in the documented shape.
    const refused = await s.app.inject({ method: 'POST', url: '/probe', payload: { fail: true } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      error: { code: 'probe_refused', message: 'probe: refused', field: 'probe', retryable: false },
    });
    // The accounting: each answer counted under the route's endpoint, a failure by its reason.
    const exposition = await s.metrics.expose();
    expect(exposition).toMatch(/tscuda_request_success_total\{[^}]*endpoint="\/probe"[^}]*\} 1/);
    expect(exposition).toMatch(/tscuda_request_failure_total\{[^}]*endpoint="\/probe",reason="REJECTED"[^}]*\} 1/);
    expect(exposition).toMatch(/tscuda_request_failure_total\{[^}]*endpoint="\/probe",reason="INVALID"[^}]*\} 1/);
    expect(s.pending).toBe(0);
  });

  it('close(): the handlers in progress finish, then the batchers close, then the engine the server owns', async () => {
    const order: string[] = [];
    const engine = new FakeEngine();
    const closeEngine = engine.close.bind(engine);
    engine.close = async () => {
      order.push('engine closed');
      await closeEngine();
    };
    const batcher = fakeBatcher((v: ArrayLike<number>) => Float32Array.from(v));
    const closeBatcher = batcher.close.bind(batcher);
    batcher.close = async () => {
      order.push('batchers closed');
      await closeBatcher();
    };
    const s = make({ engine, ownsEngine: true, batchers: { gradient: () => batcher } });
    let release!: () => void;
    void s.app.register(
      probeRoutes(new Promise<void>((resolve) => (release = resolve)), () => order.push('handler done')),
    );
    // The gradient batcher is made by its first request.
    expect(
      (await s.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1]] } })).statusCode,
    ).toBe(200);
    const inFlight = s.app.inject({ method: 'POST', url: '/probe', payload: {} });
    await waitFor(() => s.pending === 1, 'the admitted probe');
    const closed = s.close();
    expect(s.ready).toBe(false);
    setTimeout(release, 20);
    await closed;
    expect(order).toEqual(['handler done', 'batchers closed', 'engine closed']);
    expect((await inFlight).json()).toEqual({ ok: true });
  });
});
