// The job filter, the envelope and the decimation over HTTP (the fake engine: no GPU): the same
// parameters in a JSON body, a binary body's query and its x-tscuda-* headers reach the engine
// as one spec; a bad filter is a 400 naming the field, the same in every place.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type TscudaServer } from '../../../src/server/index.js';
import { FakeEngine } from './fake-engine.js';

const servers: TscudaServer[] = [];
function make(engine: FakeEngine): TscudaServer {
  const s = createServer({ engine, limits: { maxBatchDelayMs: 0 } });
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const signal = Array.from({ length: 128 }, (_, i) => Math.sin(i * 0.3) + 0.01 * i);
const binary = Buffer.from(Float32Array.from(signal).buffer);
const OCTET = { 'content-type': 'application/octet-stream' };

/** The request carrying `params` as a JSON body, as a query of a binary body, and as x-tscuda-* headers. */
function requests(url: string, params: Record<string, unknown>) {
  // Flags are comma-separated in a query or header; everything else here is JSON there.
  const text = (v: unknown): string =>
    typeof v === 'string'
      ? v
      : Array.isArray(v) && v.every((f) => typeof f === 'string')
        ? v.join(',')
        : JSON.stringify(v);
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, text(v)])).toString();
  const headers = Object.fromEntries(Object.entries(params).map(([k, v]) => [`x-tscuda-${k.toLowerCase()}`, text(v)]));
  return [
    { method: 'POST' as const, url, payload: { signal, ...params } },
    { method: 'POST' as const, url: `${url}?${query}`, headers: OCTET, payload: binary },
    { method: 'POST' as const, url, headers: { ...OCTET, ...headers }, payload: binary },
  ];
}

describe('filter, envelope and decimate parameters', { timeout: 20_000 }, () => {
  it('a filter given in the body, the query or a header reaches the engine as the same spec', async () => {
    const engine = new FakeEngine();
    const s = make(engine);
    const filter = { btype: 'bandpass', cutoff: [5, 20], order: 3, zeroPhase: true };
    for (const request of requests('/v1/stft', { fs: 100, filter })) {
      const res = await s.app.inject(request);
      expect(res.statusCode, res.body).toBe(200);
    }
    expect(engine.submitted.map((spec) => spec.filter)).toEqual([filter, filter, filter]);
  });

  it('/v1/envelope and /v1/decimate are endpoints of their flags; decimate needs q', async () => {
    const engine = new FakeEngine();
    const s = make(engine);
    const ok = await s.app.inject({ method: 'POST', url: '/v1/decimate', payload: { signal, q: 4 } });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(engine.submitted.at(-1)).toMatchObject({ flags: ['decimate'], q: 4 });
    const env = await s.app.inject({ method: 'POST', url: '/v1/envelope', payload: { signal } });
    expect(env.statusCode, env.body).toBe(200);
    const missing = await s.app.inject({ method: 'POST', url: '/v1/decimate', payload: { signal } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: { field: 'q', message: 'q: the decimate flag needs q' } });
  });

  it.each([
    [{ btype: 'lowpass', cutoff: 80 }, 'filter.cutoff', /outside \(0, fs\/2 = 50 Hz\)/],
    [{ sos: [[1, 0, 0, 1, 0, 1.2]] }, 'filter.sos[0]', /pole on or outside the unit circle/],
    [{ taps: [] }, 'filter.taps', /is empty/],
    [{ btype: 'lowpass', cutoff: 10, design: 'bessel' }, 'filter.design', /butter, cheby1, cheby2/],
    [{ taps: [1], sos: [[1, 0, 0, 1, 0, 0]] }, 'filter', /takes one of sos, taps and btype/],
  ])('a bad filter %j is a 400 naming %s, in the body, the query and a header', async (filter, field, message) => {
    const engine = new FakeEngine();
    const s = make(engine);
    for (const request of requests('/v1/jobs', { fs: 100, flags: ['stft'], filter })) {
      const res = await s.app.inject(request);
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json<{ error: { field: string; message: string } }>().error;
      expect(body.field).toBe(field);
      expect(body.message).toMatch(message);
    }
    expect(engine.submitted).toHaveLength(0);
  });

  it('a filter that is not JSON in a query is a 400 naming filter', async () => {
    const s = make(new FakeEngine());
    const res = await s.app.inject({ method: 'POST', url: '/v1/stft?filter=butter', headers: OCTET, payload: binary });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { field: 'filter' } });
  });
});
