import { afterEach, describe, expect, it } from 'vitest';
import { cachedQuery, queryKey } from '../../../src/server/query-cache.js';
import { FakeEngine } from './fake-engine.js';
import { make, closeServers, signal } from './routes-fixture.js';

afterEach(closeServers);

const binary = { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' };
const body = (n: number): Buffer => Buffer.from(Float32Array.from(signal(n)).buffer);

describe('binary requests: parameters parsed and validated once per query', () => {
  it('a query seen before runs with the same parameters; its arrays are shared frozen; refusals stay refusals', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const url = '/v1/stft?dtype=f32&batch=2&fs=1000&passBand=10,200&previewBins=4';
    for (let i = 0; i < 3; i++) {
      const res = await s.app.inject({ method: 'POST', url, headers: binary, payload: body(64) });
      expect(res.statusCode).toBe(200);
    }
    expect(engine.submitted.map((j) => [j.batch, j.fs, j.passBand, j.previewBins, j.flags])).toEqual(
      Array(3).fill([2, 1000, [10, 200], 4, ['stft']]),
    );
    const key = queryKey(url, 'stft', 64 * 4, 'f32')!;
    const known = cachedQuery(s.app.config.paramContext, key);
    expect(known?.dtype).toBe('f32');
    expect(Object.isFrozen(known!.parsed.spec.passBand)).toBe(true);
    // Another body length is another key: 63 samples do not split into 2 series, refused each time.
    for (let i = 0; i < 2; i++) {
      const res = await s.app.inject({ method: 'POST', url, headers: binary, payload: body(63) });
      expect(res.statusCode).toBe(400);
      expect(res.json<{ error: { field: string } }>().error.field).toBe('batch');
    }
    // A bad query is refused every time it comes.
    for (let i = 0; i < 2; i++) {
      const res = await s.app.inject({ method: 'POST', url: '/v1/stft?batch=3', headers: binary, payload: body(64) });
      expect(res.statusCode).toBe(400);
    }
    // Other routes, same query: each its own flag.
    const cycles = await s.app.inject({
      method: 'POST',
      url: '/v1/cycles?dtype=f32&batch=2&fs=1000&passBand=10,200&previewBins=4',
      headers: binary,
      payload: body(64),
    });
    expect(cycles.statusCode).toBe(400);
    expect(cycles.json<{ error: { field: string } }>().error.field).toBe('bands');
  });

  it('x-tscuda-* headers, /v1/jobs and long queries are not cached', () => {
    expect(queryKey('/v1/stft?batch=2', undefined, 64, 'f32')).toBeUndefined();
    expect(queryKey(`/v1/stft?label=${'x'.repeat(3000)}`, 'stft', 64, 'f32')).toBeUndefined();
    expect(queryKey('/v1/stft', 'stft', 64, 'f32')).toBe('stft f32 64 ');
  });
});
