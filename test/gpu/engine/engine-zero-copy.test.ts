import { describe, expect, it } from 'vitest';
import { bandPowers } from '../../../src/signal/primitives.js';
import { JobEngine } from '../../../src/engine/index.js';
import { gpu } from '../gpu-available.js';
import { engineFactory } from './engines.js';
import { relL2, rows, testSeries } from './reference.js';
import { skip, referenceOf, expectMatches } from './engine-fixture.js';

const engine = engineFactory('test');

describe.skipIf(!gpu.available)(`JobEngine on the GPU: lent arrays and chunks${skip}`, () => {
  it('zero-copy: arrays lent by hostBuffer() and subarrays of them give the reference results; f64 data in an f32 engine is copied', async () => {
    const e = engine({ lanes: 2 });
    const n = 1500;
    const batch = 5;
    const lent = e.hostBuffer('f32', batch * n);
    lent.set(testSeries(batch, n, 33));
    const spec = {
      data: lent,
      batch,
      fs: 300,
      flags: ['stft', 'cycles'],
      bands: [
        [0, 30],
        [30, 150],
      ] as const,
      passBand: [1, 40] as const,
    };
    const ref = referenceOf(spec);
    expectMatches(await e.submit(spec).result, ref, 5e-5, 'lent');
    const part = { ...spec, data: lent.subarray(2 * n, 4 * n), batch: 2 };
    expectMatches(await e.submit(part).result, ref.slice(2, 4), 5e-5, 'lent rows 2..3');
    const f64 = Float64Array.from(lent);
    expectMatches(await e.submit({ ...spec, data: f64 }).result, ref, 5e-5, 'f64 copied');
    expect(e.releaseHostBuffer(lent)).toBe(true);
    expect(e.releaseHostBuffer(new Float32Array(4))).toBe(false);
  });

  it('zero-copy outputs: results land in lent arrays (into), also chunked, and equal the reference', async () => {
    const n = 2000;
    const batch = 7;
    const bands = [
      [0, 100],
      [100, 300],
      [300, 500],
    ] as const;
    const freqs = [20, 60, 200];
    const spec = {
      data: testSeries(batch, n, 120) as Float32Array,
      batch,
      fs: 1000,
      flags: ['stft', 'cycles', 'wavelet'],
      bands,
      freqs,
      previewBins: 40,
      passBand: [50, 250] as const,
    };
    const big = engine({ lanes: 2 });
    const perRow = Math.ceil((1 << 30) / big.chunkRows(spec));
    for (const e of [big, engine({ lanes: 2, laneMemoryBytes: Math.floor(2.5 * perRow) })]) {
      const into = {
        filtered: e.hostBuffer('f32', batch * n),
        spectrum: e.hostBuffer('f32', batch * 40),
        bandPowers: e.hostBuffer('f64', batch * bands.length),
        bandWaves: e.hostBuffer('f32', batch * bands.length * n),
        waveletPower: e.hostBuffer('f32', batch * freqs.length * n),
      };
      for (const a of Object.values(into)) a.fill(Number.NaN);
      const r = await e.submit({ ...spec, into }).result;
      for (const [key, a] of Object.entries(into)) expect(r[key as keyof typeof into], key).toBe(a);
      expectMatches(r, referenceOf(spec), 5e-5, `into, ${e.chunkRows(spec)} rows per chunk`);
      const plain = await e.submit(spec).result;
      expect(relL2(r.waveletPower!, plain.waveletPower!)).toBeLessThan(1e-6);
      for (const a of Object.values(into)) e.releaseHostBuffer(a);
    }
  });

  it('a job bigger than a lane can hold runs in chunks of whole series and equals the one-shot result', async () => {
    const n = 4096;
    const batch = 11;
    const spec = {
      data: testSeries(batch, n, 200) as Float32Array,
      batch,
      fs: 4096,
      flags: ['stft', 'cycles', 'wavelet'],
      bands: [
        [0, 500],
        [500, 2048],
      ] as const,
      freqs: [100, 300, 900],
      passBand: [150, 400] as const,
    };
    const big = engine({ lanes: 1 });
    expect(big.chunkRows(spec)).toBeGreaterThanOrEqual(batch);
    const perRow = Math.ceil((1 << 30) / big.chunkRows(spec));
    const small = engine({ lanes: 1, laneMemoryBytes: Math.floor(3.5 * perRow) });
    const chunkRows = small.chunkRows(spec);
    expect(chunkRows).toBeGreaterThanOrEqual(2);
    expect(chunkRows).toBeLessThan(batch);
    const [one, chunked] = await Promise.all([big.submit(spec).result, small.submit(spec).result]);
    for (const field of ['filtered', 'spectrum', 'bandPowers', 'bandWaves', 'waveletPower'] as const)
      expect(relL2(chunked[field]!, one[field]!), field).toBeLessThan(1e-6);
    expect(chunked.dominant!.map((d) => d.bin)).toEqual(one.dominant!.map((d) => d.bin));
    expectMatches(chunked, referenceOf(spec), 5e-5, 'chunked');
  });
});
