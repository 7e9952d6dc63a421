import { afterEach, describe, expect, it } from 'vitest';
import { parseFieldsHeader } from '../../../src/server/index.js';
import { FakeEngine } from './fake-engine.js';
import { make, closeServers, signal } from './routes-fixture.js';

afterEach(closeServers);

describe('synchronous job routes', () => {
  it('POST /v1/stft with a JSON signal returns the engine result as JSON, with shapes', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const x = signal(64);
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: x, fs: 100, previewBins: 5 },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      filtered: number[];
      spectrum: number[];
      shapes: Record<string, number[]>;
      fs: number;
      batch: number;
      length: number;
    }>();
    expect(body.fs).toBe(100);
    expect(body.shapes.filtered).toEqual([1, 64]);
    expect(body.shapes.spectrum).toEqual([1, 5]);
    expect(body.filtered).toEqual(Array.from(Float32Array.from(x, (v) => Math.fround(v) * 2)));
    expect(engine.submitted[0]!.flags).toEqual(['stft']);
    expect(engine.submitted[0]!.timeoutMs).toBe(30_000);
  });

  it('a 2-D JSON signal sets the batch', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: [signal(16), signal(16), signal(16)] },
    });
    expect(res.statusCode).toBe(200);
    expect(engine.submitted[0]!.batch).toBe(3);
    expect(res.json<{ shapes: { filtered: number[] } }>().shapes.filtered).toEqual([3, 16]);
  });

  it('response bytes are counted once per answer, joined (small) or streamed part by part (over 1 MiB)', async () => {
    const s = make({ engine: new FakeEngine() });
    const sizes: number[] = [];
    for (const n of [2 * 32, 2 * 262_144]) {
      const res = await s.app.inject({
        method: 'POST',
        url: '/v1/stft?dtype=f32&batch=2&previewBins=4',
        headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
        payload: Buffer.from(Float32Array.from(signal(n)).buffer),
      });
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.byteLength).toBe(4 * (n + 2 * 4)); // filtered + a 2 x 4 preview
      sizes.push(res.rawPayload.byteLength);
    }
    const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain(`tscuda_response_bytes_total{endpoint="/v1/stft"} ${sizes[0]! + sizes[1]!}`);
  });

  it('binary f32 and f64 bodies with query or header parameters; a binary Accept gets fields and metadata headers', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const data = Float32Array.from(signal(2 * 32));
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=f32&batch=2&fs=1000&passBand=10,200',
      headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
      payload: Buffer.from(data.buffer),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    const fields = parseFieldsHeader(String(res.headers['x-tscuda-fields']));
    expect(fields.map((f) => f.name)).toEqual(['filtered', 'spectrum']);
    expect(fields[0]!.shape).toEqual([2, 32]);
    const raw = res.rawPayload;
    const filtered = new Float32Array(
      raw.buffer.slice(raw.byteOffset + fields[0]!.offset, raw.byteOffset + fields[0]!.offset + fields[0]!.bytes),
    );
    expect(Array.from(filtered)).toEqual(Array.from(data, (v) => v * 2));
    const meta = JSON.parse(String(res.headers['x-tscuda-result'])) as { batch: number; fs: number; timings: unknown };
    expect(meta).toMatchObject({ batch: 2, fs: 1000 });
    expect(engine.submitted[0]!.passBand).toEqual([10, 200]);

    const d64 = Float64Array.from(signal(20));
    const res64 = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream', 'x-tscuda-dtype': 'f64', 'x-tscuda-fs': '50' },
      payload: Buffer.from(d64.buffer),
    });
    expect(res64.statusCode).toBe(200);
    expect(engine.submitted[1]!.data).toBeInstanceOf(Float64Array);
    expect(engine.submitted[1]!.fs).toBe(50);
  });

  it('binary and JSON bodies both default to the engine precision (f64 here)', async () => {
    const engine = new FakeEngine({ precision: 'f64' });
    const s = make({ engine });
    const samples = Float64Array.from({ length: 8 }, () => Math.random() - 0.5);
    const bin = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from(samples.buffer),
    });
    expect(bin.statusCode).toBe(200);
    const json = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: Array.from(samples) } });
    expect(json.statusCode).toBe(200);
    for (const spec of engine.submitted) {
      expect(spec.data).toBeInstanceOf(Float64Array);
      expect(Array.from(spec.data)).toEqual(Array.from(samples));
    }
  });

  it('POST /v1/cycles returns band powers and dominant cycles (binary: dominant as f64[B,4])', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/cycles',
      payload: {
        signal: [signal(32), signal(32)],
        fs: 10,
        bands: [
          [0.5, 1],
          [1, 4],
        ],
      },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      bandPowers: number[];
      dominant: { frequency: number }[];
      shapes: Record<string, number[]>;
    }>();
    expect(body.shapes.bandPowers).toEqual([2, 2]);
    expect(body.dominant).toHaveLength(2);
    const bin = await s.app.inject({
      method: 'POST',
      url: '/v1/cycles',
      headers: { accept: 'application/octet-stream' },
      payload: { signal: [signal(32), signal(32)], fs: 10, bands: [[0.5, 1]] },
    });
    const fields = parseFieldsHeader(String(bin.headers['x-tscuda-fields']));
    expect(fields.find((f) => f.name === 'dominant')!.shape).toEqual([2, 4]);
    expect(bin.rawPayload.byteLength).toBe(fields.reduce((a, f) => a + f.bytes, 0));
  });

  it('POST /v1/wavelet needs freqs and returns power B x freqs x N', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const missing = await s.app.inject({
      method: 'POST',
      url: '/v1/wavelet',
      payload: { signal: signal(32), fs: 100 },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json<{ error: { field: string } }>().error.field).toBe('freqs');
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/wavelet',
      payload: { signal: signal(32), fs: 100, freqs: [5, 10, 20] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ shapes: Record<string, number[]> }>().shapes.waveletPower).toEqual([1, 3, 32]);
  });
});
