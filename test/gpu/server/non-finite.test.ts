/**
 * Non-finite samples through `tscuda serve`'s worker on the GPU: a binary body too big to be fused
 * goes to the engine alone and is searched only there, on the GPU (JobEngine.checksSamples); a small
 * one is fused and so scanned by the fuser first. Either way the answer is the same 400 naming the
 * first bad sample (`signal[i]`), and a good body of each size right after is answered in full.
 */
import { describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { serveOnGpu } from './gpu-server.js';

/** Fresh random samples (never zeros), `batch` series of `n`. */
const samples = (batch: number, n: number): Float32Array =>
  Float32Array.from({ length: batch * n }, () => (Math.random() * 2 - 1) * 10 || 1);

interface Refusal {
  error: { code: string; field: string; message: string };
}

describe.skipIf(!gpu.available)(
  `non-finite samples over the real engine${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    const served = serveOnGpu();
    const post = (query: string, body: Float32Array) =>
      fetch(`${served.base}/v1/stft?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      });

    for (const [what, batch, n] of [
      ['a body the engine takes alone (16 x 65536)', 16, 65536],
      ['a body small enough to be fused (2 x 512)', 2, 512],
    ] as const) {
      it(`${what}: a NaN or an infinity is a 400 naming signal[i]; a good body after it is answered`, async () => {
        const query = `batch=${batch}&fs=1000&passBand=20,200&previewBins=64`;
        for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
          const data = samples(batch, n);
          const at = Math.floor(Math.random() * data.length);
          data[at] = bad;
          if (at + 5 < data.length) data[at + 5] = Number.NaN; // a later one too: the first is named
          const res = await post(query, data);
          const text = await res.text();
          expect(res.status, text).toBe(400);
          const { error } = JSON.parse(text) as Refusal;
          expect(error.code).toBe('invalid_field');
          expect(error.field).toBe(`signal[${at}]`);
          expect(error.message).toMatch(/samples must be finite/);
        }
        const good = await post(query, samples(batch, n));
        // JSON answers carry flat arrays and their shapes (docs/serving.md, Responses).
        const body = (await good.json()) as {
          filtered: number[];
          spectrum: number[];
          shapes: Record<string, number[]>;
        };
        expect(good.status).toBe(200);
        expect(body.shapes.filtered).toEqual([batch, n]);
        expect(body.filtered).toHaveLength(batch * n);
        expect(body.filtered.every(Number.isFinite)).toBe(true);
        expect(body.spectrum.some((v) => v > 0)).toBe(true);
      }, 60_000);
    }
  },
);
