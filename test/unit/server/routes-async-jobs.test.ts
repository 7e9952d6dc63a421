import { afterEach, describe, expect, it } from 'vitest';
import { FakeEngine } from './fake-engine.js';
import { make, closeServers, waitFor, signal } from './routes-fixture.js';

afterEach(closeServers);

describe('asynchronous jobs', () => {
  it('POST /v1/jobs -> 202, GET until ready (JSON and binary), DELETE forgets it', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine, jobIdPrefix: 'w1-' });
    const post = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(16), flags: ['stft', 'cycles'], bands: [[0.1, 0.3]] },
    });
    expect(post.statusCode).toBe(202);
    const { id } = post.json<{ id: string }>();
    // The worker's routing prefix, then 128 random bits: no client guesses another's job.
    expect(id).toMatch(/^w1-[A-Za-z0-9_-]{22}$/);
    expect(post.headers.location).toBe(`/v1/jobs/${id}`);
    const queued = await s.app.inject({ method: 'GET', url: `/v1/jobs/${id}` });
    expect(queued.statusCode).toBe(202);
    expect(queued.json<{ status: string }>().status).toBe('queued');
    engine.release();
    await waitFor(() => engine.stats().jobs === 1, 'the job to finish');
    const ready = await s.app.inject({ method: 'GET', url: `/v1/jobs/${id}` });
    expect(ready.statusCode).toBe(200);
    expect(ready.json<{ status: string; result: { filtered: number[] } }>().result.filtered).toHaveLength(16);
    const bin = await s.app.inject({
      method: 'GET',
      url: `/v1/jobs/${id}`,
      headers: { accept: 'application/octet-stream' },
    });
    expect(bin.headers['x-tscuda-fields']).toContain('filtered=f32[1,16]');
    const del = await s.app.inject({ method: 'DELETE', url: `/v1/jobs/${id}` });
    expect(del.json<{ deleted: boolean }>().deleted).toBe(true);
    expect((await s.app.inject({ method: 'GET', url: `/v1/jobs/${id}` })).statusCode).toBe(404);
  });

  it('DELETE cancels a queued job; flags are required; unknown ids are 404 naming id', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine });
    const noFlags = await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(16) } });
    expect(noFlags.json<{ error: { field: string } }>().error.field).toBe('flags');
    const { id } = (
      await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(16), flags: ['stft'] } })
    ).json<{ id: string }>();
    const del = await s.app.inject({ method: 'DELETE', url: `/v1/jobs/${id}` });
    expect(del.json<{ status: string }>().status).toBe('cancelled');
    expect(engine.queued).toBe(0);
    const unknown = await s.app.inject({ method: 'GET', url: '/v1/jobs/424242' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json<{ error: { field: string } }>().error.field).toBe('id');
  });

  it('keeps at most maxFinished finished jobs', async () => {
    const s = make({ engine: new FakeEngine(), limits: { jobRetention: { maxFinished: 2, ttlMs: 60_000 } } });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (
          await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(8), flags: ['stft'] } })
        ).json<{ id: string }>().id,
      );
    await new Promise((r) => setTimeout(r, 10));
    const codes = await Promise.all(
      ids.map(async (id) => (await s.app.inject({ method: 'GET', url: `/v1/jobs/${id}` })).statusCode),
    );
    expect(codes).toEqual([404, 404, 200, 200]);
  });
});
