import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { JobError } from '../../../src/engine/errors.js';
import { parseServeArgs } from '../../../src/cli/commands/serve-options.js';
import { UsageError } from '../../../src/cli/options.js';
import { createServer, type TscudaServer } from '../../../src/server/index.js';
import { serverLimits } from '../../../src/server/supervision/server-options.js';
import { FakeEngine, type FakeEngineOptions } from './fake-engine.js';

const servers: TscudaServer[] = [];
/** A server over a fake engine whose values of each series come from that series alone; `maxBatchDelayMs` 0: unfused. */
function serve(
  maxBatchDelayMs: number,
  engineOptions: FakeEngineOptions = {},
): { server: TscudaServer; engine: FakeEngine } {
  const engine = new FakeEngine({ perSeries: true, ...engineOptions });
  const server = createServer({ engine, limits: { maxBatchDelayMs } });
  servers.push(server);
  return { server, engine };
}
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function until(what: () => boolean, label: string): Promise<void> {
  const t0 = performance.now();
  while (!what()) {
    if (performance.now() - t0 > 5000) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A window long enough for a burst of injected requests on a loaded machine to land in one. */
const WINDOW_MS = 100;

function samples(rows: number, n: number, seed: number): Float32Array {
  return Float32Array.from({ length: rows * n }, (_, i) => Math.sin(i * 0.21 + seed) * (1 + seed / 10));
}

/** A binary stft request of `rows` x 64 samples (its own data by seed). */
function binaryStft(server: TscudaServer, rows: number, seed: number, query = '') {
  return server.app.inject({
    method: 'POST',
    url: `/v1/stft?dtype=f32&batch=${rows}&fs=100&previewBins=5${query}`,
    headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
    payload: Buffer.from(samples(rows, 64, seed).buffer),
  });
}

/** A JSON cycles request with two bands (`bands` to override). */
function jsonCycles(
  server: TscudaServer,
  rows: number,
  seed: number,
  bands: number[][] = [
    [1, 10],
    [10, 40],
  ],
) {
  const signal = Array.from({ length: rows }, (_, r) => Array.from(samples(1, 32, seed + r)));
  return server.app.inject({ method: 'POST', url: '/v1/cycles', payload: { signal, fs: 100, bands } });
}

/** A JSON answer without what differs between runs of the same data (id, lane, timings). */
function answer(body: string): unknown {
  const { id: _id, lane: _lane, timings: _timings, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return rest;
}

describe('fusing over HTTP (fake engine)', () => {
  it('concurrent binary stft requests run as fewer engine jobs; each answer is byte for byte the unfused one', async () => {
    const fused = serve(WINDOW_MS);
    const plain = serve(0);
    const rows = [1, 2, 3, 1, 2, 3, 1, 2];
    const [a, b] = await Promise.all([
      Promise.all(rows.map((r, i) => binaryStft(fused.server, r, i))),
      Promise.all(rows.map((r, i) => binaryStft(plain.server, r, i))),
    ]);
    expect(plain.engine.submitted).toHaveLength(rows.length);
    expect(fused.engine.submitted.length).toBeLessThan(rows.length);
    expect(fused.engine.submitted.reduce((sum, s) => sum + (s.batch ?? 1), 0)).toBe(rows.reduce((x, y) => x + y));
    a.forEach((res, i) => {
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-tscuda-fields']).toBe(b[i]!.headers['x-tscuda-fields']);
      expect(Buffer.compare(res.rawPayload, b[i]!.rawPayload)).toBe(0);
    });
  }, 15_000);

  it('one bad request among good ones is refused alone; the good ones are fused and answered as unfused', async () => {
    const fused = serve(WINDOW_MS);
    const plain = serve(0);
    const send = (server: TscudaServer) =>
      Promise.all([
        jsonCycles(server, 1, 1),
        jsonCycles(server, 2, 2),
        jsonCycles(server, 1, 3, [[1, 90]]),
        jsonCycles(server, 1, 4),
      ]);
    const [a, b] = await Promise.all([send(fused.server), send(plain.server)]);
    expect(a[2]!.statusCode).toBe(400);
    expect(a[2]!.json<{ error: { field: string } }>().error.field).toMatch(/^bands/);
    for (const i of [0, 1, 3]) {
      expect(a[i]!.statusCode).toBe(200);
      expect(answer(a[i]!.body)).toEqual(answer(b[i]!.body));
    }
    expect(fused.engine.submitted.length).toBeLessThan(3);
    expect(fused.engine.submitted.reduce((sum, s) => sum + (s.batch ?? 1), 0)).toBe(4);
  }, 15_000);

  it('a fused job that fails answers each of its requests with the same error', async () => {
    const { server } = serve(WINDOW_MS, {
      failJob: (spec) => ((spec.batch ?? 1) > 1 ? new JobError(7, 0, 0, 'fft', new Error('device fault')) : undefined),
    });
    const answers = await Promise.all([1, 2, 3].map((seed) => binaryStft(server, 1, seed)));
    const errors = answers.map((res) => ({
      status: res.statusCode,
      error: res.json<{ error: { code: string; message: string } }>().error,
    }));
    expect(errors[0]).toMatchObject({ status: 500, error: { code: 'job_failed' } });
    expect(errors[0]!.error.message).toContain('device fault');
    for (const e of errors.slice(1))
      expect({ status: e.status, code: e.error.code, message: e.error.message }).toEqual({
        status: 500,
        code: 'job_failed',
        message: errors[0]!.error.message,
      });
  }, 15_000);

  it('deadlines stay per request: the short one gets 504 while the others wait for the fused job and get their rows', async () => {
    const fused = serve(5, { manual: true });
    const plain = serve(0);
    const quick = binaryStft(fused.server, 1, 1, '&timeout=100');
    const patient = [binaryStft(fused.server, 2, 2), binaryStft(fused.server, 1, 3)];
    const timedOut = await quick;
    expect(timedOut.statusCode).toBe(504);
    expect(timedOut.json<{ error: { code: string } }>().error.code).toBe('timeout');
    fused.engine.release();
    const [answers, expected] = await Promise.all([
      Promise.all(patient),
      Promise.all([binaryStft(plain.server, 2, 2), binaryStft(plain.server, 1, 3)]),
    ]);
    answers.forEach((res, i) => {
      expect(res.statusCode).toBe(200);
      expect(Buffer.compare(res.rawPayload, expected[i]!.rawPayload)).toBe(0);
    });
  }, 15_000);

  it('a client that goes away leaves its fused job queued for the others; when all have gone, the engine job is cancelled', async () => {
    // A window long enough that the two POSTs share it on a loaded 2-core machine (5 ms did not always).
    const { server, engine } = serve(200, { manual: true });
    const base = await server.listen({ port: 0, host: '127.0.0.1' });
    const body = Buffer.from(samples(1, 64, 1).buffer);
    /** A POST over loopback whose client can hang up; resolves with its status, or 0 once it was hung up. */
    const post = () => {
      const req = request(new URL('/v1/stft?dtype=f32&batch=1&fs=100', base), {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': body.length },
      });
      const status = new Promise<number>((resolve) => {
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', () => resolve(0));
      });
      req.end(body);
      return { status, hangUp: () => req.destroy() };
    };
    const [gone, stays] = [post(), post()];
    await until(() => engine.submitted.length === 1, 'the fused job');
    expect(engine.submitted[0]!.batch).toBe(2);
    gone.hangUp();
    await until(() => engine.queued === 1 && server.pending === 1, 'the hung-up request answered alone');
    engine.release();
    expect(await stays.status).toBe(200);
    expect(await gone.status).toBe(0);

    const both = [post(), post()];
    await until(() => engine.submitted.length === 2, 'the second fused job');
    for (const p of both) p.hangUp();
    await until(() => engine.queued === 0, 'the engine job cancelled with nobody left to answer');
    expect(engine.stats().jobs).toBe(1);
  }, 15_000);

  it('asynchronous jobs fuse too: each id gets its own result', async () => {
    const fused = serve(WINDOW_MS);
    const plain = serve(0);
    const post = (server: TscudaServer, seed: number) =>
      server.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        payload: { signal: Array.from(samples(1, 32, seed)), flags: ['stft'], fs: 100 },
      });
    const ids = (await Promise.all([post(fused.server, 1), post(fused.server, 2)])).map(
      (r) => r.json<{ id: string }>().id,
    );
    const plainIds = (await Promise.all([post(plain.server, 1), post(plain.server, 2)])).map(
      (r) => r.json<{ id: string }>().id,
    );
    const view = async (
      server: TscudaServer,
      id: string,
    ): Promise<{ status: string; result?: Record<string, unknown> }> => {
      const t0 = performance.now();
      for (;;) {
        const body = (await server.app.inject({ method: 'GET', url: `/v1/jobs/${id}` })).json<{
          status: string;
          result?: Record<string, unknown>;
        }>();
        if (body.status !== 'queued' && body.status !== 'running') return body;
        if (performance.now() - t0 > 5000) throw new Error(`job ${id} still ${body.status}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    for (let i = 0; i < 2; i++) {
      const [mine, theirs] = [await view(fused.server, ids[i]!), await view(plain.server, plainIds[i]!)];
      expect(mine.status).toBe('ready');
      expect(answer(JSON.stringify(mine.result))).toEqual(answer(JSON.stringify(theirs.result)));
    }
    expect(fused.engine.submitted).toHaveLength(1);
    expect(fused.engine.submitted[0]!.batch).toBe(2);
  }, 15_000);

  it('metrics: fused jobs, and requests per engine job from a window', async () => {
    const { server } = serve(WINDOW_MS);
    await Promise.all([1, 2, 3].map((seed) => binaryStft(server, 1, seed)));
    const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/^tscuda_fused_jobs_total 1$/m);
    expect(text).toMatch(/^tscuda_fused_job_requests_sum 3$/m);
    expect(text).toMatch(/^tscuda_fused_job_requests_count 1$/m);
  }, 15_000);

  it('maxBatchDelayMs: the limit and the serve flag (default 1, 0 off), checked', () => {
    expect(() => createServer({ limits: { maxBatchDelayMs: -1 } })).toThrow(/limits\.maxBatchDelayMs/);
    expect(() => createServer({ limits: { maxBatchDelayMs: 2 ** 31 } })).toThrow(
      /limits\.maxBatchDelayMs must be at most/,
    );
    return (async () => {
      const parsed = async (args: string[]): Promise<number | undefined> => {
        const r = await parseServeArgs(args);
        return r.help ? undefined : serverLimits(r.config).maxBatchDelayMs;
      };
      expect(await parsed([])).toBe(1);
      expect(await parsed(['--max-batch-delay-ms', '0'])).toBe(0);
      expect(await parsed(['--max-batch-delay-ms', '5'])).toBe(5);
      await expect(parseServeArgs(['--max-batch-delay-ms', '-1'])).rejects.toBeInstanceOf(UsageError);
      await expect(parseServeArgs(['--max-batch-delay-ms', 'soon'])).rejects.toThrow(/--max-batch-delay-ms/);
    })();
  }, 15_000);
});
