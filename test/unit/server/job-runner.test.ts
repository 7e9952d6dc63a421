/**
 * A route written with the job runner (server/job-runner.ts) gets every step of a job's
 * lifecycle without writing one: its deadline, the request's body handed to the job and back to
 * the pool, the job cancelled when its client hangs up, and its metrics. The route is added to
 * the server's route modules as a contributor adds one (routes/index.ts).
 */
import { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeEngine } from './fake-engine.js';
import { closeServers, make, waitFor } from './routes-fixture.js';

vi.mock('../../../src/server/routes/index.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/server/routes/index.js')>();
  const { runJob } = await import('../../../src/server/job-runner.js');
  const { readJob } = await import('../../../src/server/job-io.js');
  const { routeModule } = await import('../../../src/server/routes/route-module.js');
  const { JOB_BODY } = await import('../../../src/server/routes/sync.js');
  const { ERROR_RESPONSES } = await import('../../../src/server/response-schemas.js');
  /**
   * A route that runs a job with the runner (its request carries no deadline of its own) and
   * answers the job's id and whether the request still holds its pooled body (the job has it).
   */
  const runnerRoute = routeModule('test-runner-route', async (app) => {
    const answer = { type: 'object', properties: { id: { type: 'number' }, bodyKept: { type: 'boolean' } } };
    const response = { 200: answer, ...ERROR_RESPONSES };
    app.post('/test/run', { schema: { body: JOB_BODY, response } }, (request, reply) =>
      app.gpu.track(async () => {
        const { timeoutMs: _, ...spec } = readJob(request, 'stft');
        const result = await runJob(request, reply, spec, '/test/run');
        return reply.send({ id: result.id, bodyKept: app.bodies.holds(request) });
      }),
    );
  });
  return { ...original, ROUTES: [...original.ROUTES, runnerRoute] };
});

afterEach(closeServers);

const samples = Buffer.from(new Float32Array(1024).map((_, i) => Math.sin(i)).buffer);

describe('the job runner', () => {
  it('gives a route the deadline, the body hand-over and the metrics', async () => {
    const engine = new FakeEngine();
    const s = make({ engine, limits: { defaultTimeoutMs: 12_345 } });
    const res = await s.app.inject({
      method: 'POST',
      url: '/test/run',
      headers: { 'content-type': 'application/octet-stream' },
      payload: samples,
    });
    expect(res.statusCode, res.body).toBe(200);
    // The body: read into the pool and handed to the job, which gives it back once done with it.
    expect(res.json()).toEqual({ id: 1, bodyKept: false });
    // The deadline: the server's default, as the request named none.
    expect(engine.submitted[0]!.timeoutMs).toBe(12_345);
    // The metrics: the job's timings under the route's endpoint.
    const exposition = await s.metrics.expose();
    expect(exposition).toMatch(/_queue_duration_seconds_count\{[^}]*endpoint="\/test\/run"[^}]*\} 1/);
  });

  it('cancels the queued job of a client that hangs up', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine });
    const { port } = new URL(await s.listen({ port: 0, host: '127.0.0.1' }));
    const socket = new Socket();
    socket.on('error', () => undefined);
    await new Promise<void>((r) => socket.connect(Number(port), '127.0.0.1', r));
    socket.write(
      `POST /test/run HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\ncontent-length: ${samples.byteLength}\r\n\r\n`,
    );
    socket.write(samples);
    await waitFor(() => engine.queued === 1, 'the queued job');
    socket.destroy();
    await waitFor(() => engine.queued === 0, 'the job cancelled');
    await waitFor(() => s.pending === 0, 'the request finished');
  });
});
