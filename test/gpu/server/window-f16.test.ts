/**
 * Input the server once answered 503 without a GPU, served on one: a binary `dtype=f16` body gives
 * the result of the same values sent as f32; a kaiser window of negative beta gives the result of
 * |beta| and a tukey window of alpha >= 1 that of Hann, as scipy defines them. Fresh random input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import type { TscudaServer } from '../../../src/server/create-server.js';

/** max |actual - expected| within `rel` of max |expected| (never zero: the inputs are fresh random). */
function expectRelClose(actual: readonly number[], expected: readonly number[], rel: number, what: string): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  let scale = 0;
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    scale = Math.max(scale, Math.abs(expected[i]!));
    const d = Math.abs(actual[i]! - expected[i]!);
    if (!(d <= worst)) worst = d;
  }
  expect(scale, `${what}: a reference of zeros proves nothing`).toBeGreaterThan(0);
  expect(worst, `${what}: max difference (scale ${scale})`).toBeLessThanOrEqual(rel * scale);
}

describe.skipIf(!gpu.available)(
  `f16 bodies and scipy's window edges over the real engine${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let server: TscudaServer;
    let base: string;

    beforeAll(async () => {
      const { buildGpuParts } = await import('../../../src/server/supervision/gpu-parts.js');
      const { serverOptions } = await import('../../../src/server/supervision/server-options.js');
      const { createServer } = await import('../../../src/server/create-server.js');
      const config = { port: 0, host: '127.0.0.1', lanes: 2 };
      server = createServer(serverOptions(config, await buildGpuParts(config)));
      base = await server.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await server?.close();
    });

    const batch = 2;
    const n = 2048;
    const query = `batch=${batch}&fs=1000&passBand=5,200&previewBins=64`;

    async function post(url: string, body: ArrayBufferView): Promise<{ filtered: number[]; spectrum: number[] }> {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      const r = JSON.parse(text) as { filtered: number[] | number[][]; spectrum: number[] | number[][] };
      return { filtered: r.filtered.flat(), spectrum: r.spectrum.flat() };
    }

    it('a dtype=f16 body equals the same values sent as f32', async () => {
      const { toF16Bits, f16Value } = await import('../../../src/runtime/memory/half.js');
      const values = Array.from(
        { length: batch * n },
        (_, i) => Math.sin(i / (7 + Math.random())) + (Math.random() - 0.5),
      );
      const bits = toF16Bits(values);
      const asF32 = Float32Array.from(bits, f16Value);
      const f16 = await post(`${base}/v1/stft?dtype=f16&${query}`, bits);
      const f32 = await post(`${base}/v1/stft?dtype=f32&${query}`, asF32);
      expectRelClose(f16.filtered, f32.filtered, 1e-4, 'filtered');
      expectRelClose(f16.spectrum, f32.spectrum, 1e-4, 'spectrum');
    });

    it('kaiser with beta -8.6 is kaiser 8.6; tukey with alpha 1.5 is hann', async () => {
      const samples = Float32Array.from({ length: batch * n }, () => Math.random() * 2 - 1);
      const negative = await post(`${base}/v1/stft?window=kaiser,-8.6&${query}`, samples);
      const positive = await post(`${base}/v1/stft?window=kaiser,8.6&${query}`, samples);
      expectRelClose(negative.spectrum, positive.spectrum, 1e-6, 'kaiser -8.6 vs 8.6');
      const tukey = await post(`${base}/v1/stft?window=tukey,1.5&${query}`, samples);
      const hann = await post(`${base}/v1/stft?window=hann&${query}`, samples);
      expectRelClose(tukey.spectrum, hann.spectrum, 1e-6, 'tukey 1.5 vs hann');
    });
  },
);
