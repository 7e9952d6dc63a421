import { describe, expect, it } from 'vitest';
import { getWindow } from '../../../src/signal/window.js';
import { JobEngine } from '../../../src/engine/index.js';
import { gpu } from '../gpu-available.js';
import { engineFactory } from './engines.js';
import { framedReference, hannPeriodic, relL2, rows, testSeries } from './reference.js';
import { skip } from './engine-fixture.js';

const engine = engineFactory('test');

describe.skipIf(!gpu.available)(`JobEngine on the GPU: framed stft${skip}`, () => {
  it('framed stft (nperseg): equals scipy stft -> mask -> istft computed in float64, and all-pass gives the input back', async () => {
    const e = engine({ lanes: 2, precision: 'f64' });
    const n = 3001;
    const batch = 2;
    const data = testSeries(batch, n, 300, Float64Array) as Float64Array;
    const allPass = await e.submit({ data, batch, fs: 1000, flags: ['stft'], nperseg: 256, detrend: false }).result;
    expect(relL2(allPass.filtered!, data)).toBeLessThan(1e-12);
    for (const [nperseg, noverlap, window, detrend] of [
      [256, 128, 'hann', 'linear'],
      [201, 150, ['kaiser', 6], 'constant'],
      [64, 0, 'boxcar', false],
    ] as const) {
      const spec = {
        data,
        batch,
        fs: 1000,
        flags: ['stft'],
        nperseg,
        noverlap,
        window,
        detrend,
        passBand: [40, 160] as const,
        previewBins: 20,
      };
      const r = await e.submit(spec).result;
      for (let b = 0; b < batch; b++) {
        const ref = framedReference(data.subarray(b * n, (b + 1) * n), {
          fs: 1000,
          nperseg,
          noverlap,
          window: getWindow(window, nperseg),
          detrend,
          passBand: [40, 160],
          previewBins: 20,
        });
        expect(r.frames).toBe(ref.frames);
        expect(
          relL2(rows(r.filtered!, n, b, 1), ref.filtered),
          `filtered ${nperseg}/${noverlap} row ${b}`,
        ).toBeLessThan(1e-10);
        expect(
          relL2(rows(r.spectrum!, 20 * ref.frames, b, 1), ref.spectrum),
          `spectrum ${nperseg}/${noverlap} row ${b}`,
        ).toBeLessThan(1e-10);
      }
    }
  });

  it('framed stft streams a long series through a small lane in chunks of whole frames: equal to one pass and to the reference', async () => {
    const n = 200_000;
    const batch = 2;
    const data = testSeries(batch, n, 5000) as Float32Array;
    const spec = {
      data,
      batch,
      fs: 48_000,
      flags: ['stft'],
      nperseg: 256,
      noverlap: 192,
      passBand: [500, 3000] as const,
      previewBins: 32,
    };
    const big = engine({ lanes: 1 });
    const small = engine({ lanes: 2, laneMemoryBytes: 1 << 19 });
    const frames = big.chunkFrames(spec);
    const perChunk = small.chunkFrames(spec);
    expect(perChunk).toBeGreaterThanOrEqual(4);
    expect(perChunk * 10).toBeLessThan(frames);
    const [one, chunked] = await Promise.all([big.submit(spec).result, small.submit(spec).result]);
    expect(relL2(chunked.filtered!, one.filtered!)).toBeLessThan(1e-6);
    expect(relL2(chunked.spectrum!, one.spectrum!)).toBeLessThan(1e-6);
    const ref = framedReference(data.subarray(0, n), {
      fs: 48_000,
      nperseg: 256,
      noverlap: 192,
      window: hannPeriodic(256),
      detrend: 'linear',
      passBand: [500, 3000],
      previewBins: 32,
    });
    expect(relL2(rows(chunked.filtered!, n, 0, 1), ref.filtered)).toBeLessThan(5e-5);
    expect(relL2(rows(chunked.spectrum!, 32 * ref.frames, 0, 1), ref.spectrum)).toBeLessThan(5e-5);
    console.log(`framed stft: ${frames} frames per series in chunks of ${perChunk}`);
  });
});
