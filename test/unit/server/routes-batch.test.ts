import { afterEach, describe, expect, it } from 'vitest';
import { FakeEngine, fakeBatcher } from './fake-engine.js';
import { make, closeServers, lerp, batchers } from './routes-fixture.js';

afterEach(closeServers);

describe('batch endpoints', () => {
  it('gradient, lerp and slerp through their batchers, JSON and binary', async () => {
    const s = make({ engine: new FakeEngine(), batchers });
    const g = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/gradient',
      payload: {
        items: [
          [1, 2, 3],
          [4, 5, 6],
        ],
      },
    });
    expect(g.statusCode).toBe(200);
    expect(g.json<{ outputs: number[][] }>().outputs).toEqual([
      [2, 4, 6],
      [8, 10, 12],
    ]);
    const l = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/lerp',
      headers: { accept: 'application/octet-stream' },
      payload: { items: [{ a: [0, 0], b: [2, 4], t: 0.5 }] },
    });
    expect(l.headers['x-tscuda-fields']).toBe('outputs=f32[1,2]');
    expect(
      Array.from(new Float32Array(l.rawPayload.buffer.slice(l.rawPayload.byteOffset, l.rawPayload.byteOffset + 8))),
    ).toEqual([1, 2]);
    const sl = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/slerp',
      payload: { items: [{ a: [1, 0], b: [0, 1], t: 0 }] },
    });
    expect(sl.json<{ outputs: number[][] }>().outputs).toEqual([[1, 0]]);
  });

  it('bad items name their field; a full batcher is 429; no batcher is 503', async () => {
    const s = make({
      engine: new FakeEngine(),
      batchers: { ...batchers, gradient: () => fakeBatcher<ArrayLike<number>>((v) => Float32Array.from(v), 0) },
    });
    const t = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/lerp',
      payload: { items: [{ a: [0], b: [1], t: 2 }] },
    });
    expect(t.json<{ error: { field: string } }>().error.field).toBe('items[0].t');
    const dim = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/slerp',
      payload: {
        items: [
          { a: [0, 1], b: [1, 0], t: 0.1 },
          { a: [0], b: [1], t: 0.1 },
        ],
      },
    });
    expect(dim.json<{ error: { field: string } }>().error.field).toBe('items[1].a');
    const extra = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/lerp',
      payload: { items: [{ a: [0], b: [1], t: 0.5, s: 1 }] },
    });
    expect(extra.json<{ error: { field: string } }>().error.field).toBe('items[0].s');
    const full = await s.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1]] } });
    expect(full.statusCode).toBe(429);
    expect(full.headers['retry-after']).toBe('1');
    const none = make({ engine: new FakeEngine() });
    expect(
      (await none.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1]] } })).statusCode,
    ).toBe(503);
  });
});
