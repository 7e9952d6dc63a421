/**
 * Real jobs through HTTP equal the engine called directly: the same random signals go through
 * `POST /v1/{stft,cycles,wavelet}` (JSON and binary bodies, JSON and binary responses) and
 * through `engine.submit()`; the batch endpoints equal the batchers called directly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { randomF32 } from '../helpers.js';
import type { JobResult, JobSpec } from '../../../src/engine/types.js';
import type { TscudaServer } from '../../../src/server/create-server.js';
import type { ServeEngine } from '../../../src/server/supervision/gpu-parts.js';
import type { WorkerParts } from '../../../src/server/supervision/worker.js';

function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  let scale = 0;
  for (let i = 0; i < expected.length; i++) scale = Math.max(scale, Math.abs(expected[i]!));
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i]! - expected[i]!);
    if (!(d <= worst)) worst = d;
  }
  // Same engine, same lanes' plans: equal up to float32 rounding of a JSON round trip.
  expect(worst, `${what}: max |HTTP - direct| (scale ${scale})`).toBeLessThanOrEqual(1e-6 * Math.max(1, scale));
}

describe.skipIf(!gpu.available)(
  `server over the real engine${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let server: TscudaServer;
    let engine: ServeEngine;
    let parts: WorkerParts & { engine: ServeEngine };
    let base: string;

    beforeAll(async () => {
      const { buildGpuParts } = await import('../../../src/server/supervision/gpu-parts.js');
      const { createServer } = await import('../../../src/server/create-server.js');
      parts = await buildGpuParts({ port: 0, host: '127.0.0.1', lanes: 2 });
      engine = parts.engine;
      server = createServer({
        engine,
        batchers: parts.batchers!,
        ownsEngine: true,
        ...(parts.info ? { info: parts.info } : {}),
      });
      base = await server.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await server?.close();
    });

    async function direct(spec: JobSpec): Promise<JobResult> {
      return engine.submit(spec).result;
    }

    it('ready, info lists the device', async () => {
      expect((await fetch(`${base}/v2/health/ready`)).status).toBe(200);
      const info = (await (await fetch(`${base}/v1/info`)).json()) as {
        devices: { name: string }[];
        engine: { lanes: number };
      };
      expect(info.devices[0]!.name.length).toBeGreaterThan(0);
      expect(info.engine.lanes).toBe(2);
    });

    it('POST /v1/stft, binary in and out, equals engine.submit', async () => {
      const batch = 4;
      const n = 4096;
      const data = randomF32(batch * n);
      const res = await fetch(`${base}/v1/stft?dtype=f32&batch=${batch}&fs=1000&passBand=20,200&previewBins=64`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
        body: Buffer.from(data.buffer),
      });
      expect(res.status).toBe(200);
      const { parseFieldsHeader } = await import('../../../src/server/codec.js');
      const fields = parseFieldsHeader(res.headers.get('x-tscuda-fields')!);
      const body = new Uint8Array(await res.arrayBuffer());
      const field = (name: string): Float32Array => {
        const f = fields.find((x) => x.name === name)!;
        return new Float32Array(body.slice(f.offset, f.offset + f.bytes).buffer);
      };
      const ref = await direct({
        data: data.slice(),
        batch,
        fs: 1000,
        flags: ['stft'],
        passBand: [20, 200],
        previewBins: 64,
      });
      expectClose(field('filtered'), ref.filtered!, 'filtered');
      expectClose(field('spectrum'), ref.spectrum!, 'spectrum');
      expect(fields.find((f) => f.name === 'filtered')!.shape).toEqual([batch, n]);
      const meta = JSON.parse(res.headers.get('x-tscuda-result')!) as { batch: number; length: number };
      expect(meta).toMatchObject({ batch, length: n });
    });

    it('POST /v1/cycles and /v1/wavelet with JSON bodies equal engine.submit', async () => {
      const rows = [Array.from(randomF32(2048)), Array.from(randomF32(2048))];
      const data = Float32Array.from(rows.flat());
      const bands = [
        [1, 10],
        [10, 40],
        [40, 100],
      ] as const;
      const cyc = await fetch(`${base}/v1/cycles`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ signal: rows, fs: 500, bands }),
      });
      expect(cyc.status).toBe(200);
      const c = (await cyc.json()) as { bandPowers: number[]; dominant: { frequency: number; amplitude: number }[] };
      const cref = await direct({ data: data.slice(), batch: 2, fs: 500, flags: ['cycles'], bands });
      expectClose(c.bandPowers, cref.bandPowers!, 'bandPowers');
      expect(c.dominant.map((d) => d.frequency)).toEqual(cref.dominant!.map((d) => d.frequency));

      const freqs = [5, 12, 30, 80];
      const wav = await fetch(`${base}/v1/wavelet`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ signal: rows, fs: 500, freqs }),
      });
      expect(wav.status).toBe(200);
      const w = (await wav.json()) as { waveletPower: number[]; shapes: { waveletPower: number[] } };
      const wref = await direct({ data: data.slice(), batch: 2, fs: 500, flags: ['wavelet'], freqs });
      expectClose(w.waveletPower, wref.waveletPower!, 'waveletPower');
      expect(w.shapes.waveletPower).toEqual([2, 4, 2048]);
    });

    it('asynchronous job: POST /v1/jobs then GET returns the same result as engine.submit', async () => {
      const data = randomF32(8192);
      const post = await fetch(`${base}/v1/jobs?flags=stft,cycles&fs=100&bands=1:5,5:20`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.from(data.buffer),
      });
      expect(post.status).toBe(202);
      const { id } = (await post.json()) as { id: string };
      let body: { status: string; result?: { filtered: number[]; bandPowers: number[] } } = { status: 'queued' };
      for (let i = 0; i < 200 && body.status !== 'ready'; i++) {
        body = (await (await fetch(`${base}/v1/jobs/${id}`)).json()) as typeof body;
        if (body.status !== 'ready') await new Promise((r) => setTimeout(r, 10));
      }
      expect(body.status).toBe('ready');
      const ref = await direct({
        data: data.slice(),
        fs: 100,
        flags: ['stft', 'cycles'],
        bands: [
          [1, 5],
          [5, 20],
        ],
      });
      expectClose(body.result!.filtered, ref.filtered!, 'filtered');
      expectClose(body.result!.bandPowers, ref.bandPowers!, 'bandPowers');
    });

    it('POST /v1/batch/{gradient,lerp} equals the batchers called directly', async () => {
      const items = Array.from({ length: 33 }, () => Array.from(randomF32(16)));
      const res = await fetch(`${base}/v1/batch/gradient`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items }),
      });
      expect(res.status).toBe(200);
      const { outputs } = (await res.json()) as { outputs: number[][] };
      const gradient = parts.batchers!.gradient!(16);
      const ref = await gradient.submit(items.map((v) => Float32Array.from(v)));
      outputs.forEach((o, i) => expectClose(o, ref[i]!, `gradient[${i}]`));
      await gradient.close?.();

      const pairs = Array.from({ length: 9 }, () => ({
        a: Array.from(randomF32(8)),
        b: Array.from(randomF32(8)),
        t: Math.random(),
      }));
      const lerp = await fetch(`${base}/v1/batch/lerp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: pairs }),
      });
      const l = (await lerp.json()) as { outputs: number[][] };
      pairs.forEach((p, i) =>
        expectClose(
          l.outputs[i]!,
          p.a.map((a, k) => Math.fround(a + Math.fround(p.t) * (p.b[k]! - a))),
          `lerp[${i}]`,
        ),
      );
    });

    it('many concurrent requests: every one answered 200, metrics count them', async () => {
      const data = randomF32(2 * 1024);
      const answers = await Promise.all(
        Array.from({ length: 200 }, () =>
          fetch(`${base}/v1/stft?batch=2&fs=100`, {
            method: 'POST',
            headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
            body: Buffer.from(data.buffer),
          }).then(async (r) => (await r.arrayBuffer(), r.status)),
        ),
      );
      expect(answers.every((s) => s === 200)).toBe(true);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(/tscuda_request_success_total\{endpoint="\/v1\/stft"\} \d+/);
      expect(metrics).toMatch(/tscuda_gpu_busy_fraction [\d.e-]+/);
    });
  },
);
