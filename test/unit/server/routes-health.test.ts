import { afterEach, describe, expect, it } from 'vitest';
import { FakeEngine } from './fake-engine.js';
import { make, closeServers, signal, lerp, batchers } from './routes-fixture.js';

afterEach(closeServers);

describe('health, info, metrics', () => {
  it('live and ready are 200 with an engine; info lists the engine', async () => {
    const s = make({ engine: new FakeEngine(), batchers });
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(200);
    const info = (await s.app.inject({ method: 'GET', url: '/v1/info' })).json<{
      engine: { lanes: number };
      batch: string[];
      version: string;
    }>();
    expect(info.engine.lanes).toBe(2);
    expect(info.batch).toEqual(['gradient', 'lerp', 'slerp']);
    expect(info.version).toMatch(/^\d+\.\d+/);
  });

  it('/metrics exposes the Triton-style series after traffic', async () => {
    const s = make({ engine: new FakeEngine({ maxQueued: 0 }), batchers, metricsLabels: { worker: '3' } });
    await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8), fs: -1 } });
    const ok = make({ engine: new FakeEngine(), batchers });
    await ok.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    await ok.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1, 2]] } });
    const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('tscuda_request_failure_total{endpoint="/v1/stft",reason="REJECTED",worker="3"} 1');
    expect(text).toContain('tscuda_request_failure_total{endpoint="/v1/stft",reason="INVALID",worker="3"} 1');
    const okText = (await ok.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const name of [
      'tscuda_request_success_total{endpoint="/v1/stft"} 1',
      'tscuda_pending_requests',
      'tscuda_request_duration_seconds_bucket',
      'tscuda_queue_duration_seconds_bucket',
      'tscuda_compute_duration_seconds_bucket',
      'tscuda_gpu_compute_duration_seconds_bucket',
      'tscuda_request_batch_size_bucket',
      'tscuda_request_bytes_total',
      'tscuda_response_bytes_total',
      'tscuda_gpu_busy_fraction 0.25',
      'tscuda_event_loop_delay_seconds{stat="p99"}',
      'tscuda_batcher_fill_rate{kind="gradient",dim="2"} 0.5',
      'tscuda_ready 1',
    ]) {
      expect(okText).toContain(name);
    }
  });
});

describe('without a GPU', () => {
  it('live 200, ready 503 with the reason, info and metrics answer, bad input 4xx, GPU work 503', async () => {
    const s = make({ engine: null, unavailableReason: 'no CUDA driver (libcuda.so.1 not found)' });
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
    const ready = await s.app.inject({ method: 'GET', url: '/v2/health/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json<{ reason: string }>().reason).toContain('libcuda');
    expect(
      (await s.app.inject({ method: 'GET', url: '/v1/info' })).json<{ engine: null; ready: boolean }>(),
    ).toMatchObject({ engine: null, ready: false });
    expect((await s.app.inject({ method: 'GET', url: '/metrics' })).body).toContain('tscuda_ready 0');
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/v1/stft',
          headers: { 'content-type': 'application/json' },
          payload: '{',
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8), nope: 1 } })).statusCode,
    ).toBe(400);
    const nanFs = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?fs=NaN',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(32),
    });
    expect(nanFs.json<{ error: { field: string } }>().error.field).toBe('fs');
    const band = await s.app.inject({
      method: 'POST',
      url: '/v1/cycles',
      payload: { signal: signal(8), fs: 2, bands: [[0.5, 3]] },
    });
    expect(band.json<{ error: { field: string } }>().error.field).toBe('bands[0][1]');
    const item = await s.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1, null]] } });
    expect(item.json<{ error: { field: string } }>().error.field).toBe('items[0][1]');
    const work = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(work.statusCode).toBe(503);
    expect(work.json<{ error: { code: string } }>().error.code).toBe('gpu_unavailable');
    expect(
      (await s.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1]] } })).statusCode,
    ).toBe(503);
  });
});
