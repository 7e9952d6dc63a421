/**
 * Input the server once answered 503 without a GPU, served on one: a binary `dtype=f16` body gives
 * the result of the same values sent as f32; a kaiser window of negative beta gives the result of
 * |beta| and a tukey window of alpha >= 1 that of Hann, as scipy defines them. Fresh random input.
 */
import { describe, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { expectRelClose, postBinary, serveOnGpu } from './gpu-server.js';

describe.skipIf(!gpu.available)(
  `f16 bodies and scipy's window edges over the real engine${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    const served = serveOnGpu();

    const batch = 2;
    const n = 2048;
    const query = `batch=${batch}&fs=1000&passBand=5,200&previewBins=64`;

    async function post(url: string, body: ArrayBufferView): Promise<{ filtered: number[]; spectrum: number[] }> {
      const r = await postBinary<{ filtered: number[] | number[][]; spectrum: number[] | number[][] }>(url, body);
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
      const f16 = await post(`${served.base}/v1/stft?dtype=f16&${query}`, bits);
      const f32 = await post(`${served.base}/v1/stft?dtype=f32&${query}`, asF32);
      expectRelClose(f16.filtered, f32.filtered, 1e-4, 'filtered');
      expectRelClose(f16.spectrum, f32.spectrum, 1e-4, 'spectrum');
    });

    it('kaiser with beta -8.6 is kaiser 8.6; tukey with alpha 1.5 is hann', async () => {
      const samples = Float32Array.from({ length: batch * n }, () => Math.random() * 2 - 1);
      const negative = await post(`${served.base}/v1/stft?window=kaiser,-8.6&${query}`, samples);
      const positive = await post(`${served.base}/v1/stft?window=kaiser,8.6&${query}`, samples);
      expectRelClose(negative.spectrum, positive.spectrum, 1e-6, 'kaiser -8.6 vs 8.6');
      const tukey = await post(`${served.base}/v1/stft?window=tukey,1.5&${query}`, samples);
      const hann = await post(`${served.base}/v1/stft?window=hann&${query}`, samples);
      expectRelClose(tukey.spectrum, hann.spectrum, 1e-6, 'tukey 1.5 vs hann');
    });
  },
);
