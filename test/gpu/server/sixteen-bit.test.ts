/**
 * 16-bit bodies through the server on the GPU (issue 26): an i16 body with `scale` gives the
 * result of the same samples sent as f32 (each times scale), within 1e-4 relative to each array's
 * largest value; `outputDtype=f16` sends the filtered wave as f16 bits named in x-tscuda-fields,
 * equal to the f32 wave within f16 rounding.
 */
import { describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { expectRelClose, postBinary, serveOnGpu } from './gpu-server.js';

/** B series of a cosine plus noise, as 16-bit integers spanning most of the range. */
function series(batch: number, n: number, fs: number): Int16Array {
  const out = new Int16Array(batch * n);
  for (let b = 0; b < batch; b++) {
    const f = 10 + 7 * b + Math.random() * 5;
    const phase = Math.random() * 2 * Math.PI;
    for (let i = 0; i < n; i++)
      out[b * n + i] = Math.round(
        20_000 * Math.cos((2 * Math.PI * f * i) / fs + phase) + (Math.random() * 2 - 1) * 6_000,
      );
  }
  return out;
}

describe.skipIf(!gpu.available)(
  `16-bit bodies over the real engine${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    const served = serveOnGpu();

    const batch = 3;
    const n = 4096;
    const fs = 1000;
    const query = `batch=${batch}&fs=${fs}&passBand=5,100&previewBins=64&bands=1:20,20:60,60:200`;

    const post = (url: string, body: ArrayBufferView) =>
      postBinary<{ filtered: number[]; spectrum: number[]; bandPowers: number[]; dtypes: Record<string, string> }>(
        url,
        body,
      );

    it('an i16 body with scale equals the same samples as f32 (times scale) within 1e-4 relative', async () => {
      const samples = series(batch, n, fs);
      const scale = (1 + Math.random()) / 32768;
      const asF32 = Float32Array.from(samples, (v) => v * scale);
      const i16 = await post(`${served.base}/v1/stft?dtype=i16&scale=${scale}&flags=cycles&${query}`, samples);
      const f32 = await post(`${served.base}/v1/stft?dtype=f32&flags=cycles&${query}`, asF32);
      expect(i16.dtypes).toMatchObject({ filtered: 'f32', spectrum: 'f32' });
      expectRelClose(i16.filtered.flat(), f32.filtered.flat(), 1e-4, 'filtered');
      expectRelClose(i16.spectrum.flat(), f32.spectrum.flat(), 1e-4, 'spectrum');
      expectRelClose(i16.bandPowers.flat(), f32.bandPowers.flat(), 1e-4, 'bandPowers');
    });

    it('outputDtype=f16: the filtered wave comes back as f16 bits (x-tscuda-fields), equal to the f32 wave within f16 rounding', async () => {
      const { parseFieldsHeader } = await import('../../../src/server/codec.js');
      const { f16Value } = await import('../../../src/runtime/memory/half.js');
      const samples = series(batch, n, fs);
      const res = await fetch(`${served.base}/v1/stft?dtype=i16&outputDtype=f16&${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
        body: Buffer.from(samples.buffer),
      });
      expect(res.status, res.headers.get('content-type') ?? '').toBe(200);
      const fields = parseFieldsHeader(res.headers.get('x-tscuda-fields')!);
      const filtered = fields.find((f) => f.name === 'filtered')!;
      expect(filtered).toMatchObject({ dtype: 'f16', shape: [batch, n], bytes: batch * n * 2 });
      const body = new Uint8Array(await res.arrayBuffer());
      const halves = Array.from(
        new Uint16Array(body.slice(filtered.offset, filtered.offset + filtered.bytes).buffer),
        f16Value,
      );
      const f32 = await post(`${served.base}/v1/stft?dtype=i16&${query}`, samples);
      // f16 keeps 11 significant bits: 2^-11 relative, with room for values near the wave's largest.
      expectRelClose(halves, f32.filtered.flat(), 2e-3, 'filtered (f16)');
    });
  },
);
