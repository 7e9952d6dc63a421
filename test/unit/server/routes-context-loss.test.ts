import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from '../../../src/server/index.js';
import { FakeEngine } from './fake-engine.js';
import { make, closeServers, waitFor, signal } from './routes-fixture.js';

afterEach(closeServers);

describe('context loss and graceful close', () => {
  it('a lost context answers every accepted request 503 retryable, and ready turns 503 (unless a peer serves)', async () => {
    const engine = new FakeEngine({ manual: true });
    let lost = 0;
    let peers = false;
    const s = make({ engine, onLost: () => lost++, peersReady: () => peers });
    const accepted = Array.from({ length: 5 }, () =>
      s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } }),
    );
    const job = (
      await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(8), flags: ['stft'] } })
    ).json<{ id: string }>();
    await new Promise((r) => setTimeout(r, 10));
    engine.loseContext();
    for (const r of await Promise.all(accepted)) {
      expect(r.statusCode).toBe(503);
      expect(r.json<{ error: { code: string; retryable: boolean } }>().error).toMatchObject({
        code: 'gpu_lost',
        retryable: true,
      });
      expect(r.headers.connection).toBe('close');
    }
    expect(lost).toBe(1);
    expect(
      (await s.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}` })).json<{
        status: string;
        error: { code: string };
      }>(),
    ).toMatchObject({
      status: 'error',
      error: { code: 'gpu_lost' },
    });
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(503);
    peers = true;
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(200);
    const later = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(later.statusCode).toBe(503);
    expect(later.json<{ error: { retryable: boolean } }>().error.retryable).toBe(true);
  });

  it('close() settles every accepted request and job before it resolves; later requests get 503', async () => {
    const engine = new FakeEngine({ delayMs: 80 });
    const s = createServer({ engine, ownsEngine: true, limits: { maxBatchDelayMs: 0 } });
    const accepted = Array.from({ length: 4 }, () =>
      s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } }),
    );
    const job = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(8), flags: ['stft'] },
    });
    expect(job.statusCode).toBe(202);
    await waitFor(() => engine.submitted.length === 5, 'every accepted job in the engine');
    const t0 = performance.now();
    const closed = s.close();
    const late = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(late.statusCode).toBe(503);
    // In the documented shape, not fastify's own 503.
    expect(late.json<{ error: { code: string; retryable: boolean } }>().error).toMatchObject({
      code: 'shutting_down',
      retryable: true,
    });
    await closed;
    expect(performance.now() - t0).toBeGreaterThan(40);
    // Every accepted job (4 synchronous, 1 asynchronous) ran to its end before close() resolved.
    expect(engine.stats().jobs).toBe(5);
    expect(s.pending).toBe(0);
    for (const r of await Promise.all(accepted)) expect(r.statusCode).toBe(200);
    expect(s.ready).toBe(false);
  });
});
