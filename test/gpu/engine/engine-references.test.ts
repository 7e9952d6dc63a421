import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import type { DType } from '../../../src/runtime/memory/dtype.js';
import { Stream } from '../../../src/runtime/stream.js';
import { cwt } from '../../../src/signal/cwt.js';
import { finishDominantCycles } from '../../../src/signal/cycles.js';
import {
  bandMask,
  bandPowers,
  detrendWindow,
  dominantCycleDevice,
  halfBins,
  irfft,
  rfft,
  spectrumMagnitude,
} from '../../../src/signal/primitives.js';
import { getWindow } from '../../../src/signal/window.js';
import { JobEngine } from '../../../src/engine/index.js';
import { gpu } from '../gpu-available.js';
import { BANDS, engineFactory } from './engines.js';
import { relL2, rows, testSeries } from './reference.js';
import { skip, referenceOf, expectMatches } from './engine-fixture.js';

const engine = engineFactory('test');

describe.skipIf(!gpu.available)(`JobEngine on the GPU: results equal the references${skip}`, () => {
  it('stft + cycles equal an independent float64 DFT reference (f32 and f64, even and odd N)', async () => {
    for (const precision of ['f32', 'f64'] as const) {
      const e = engine({ precision, lanes: 2 });
      for (const n of [1000, 777]) {
        const spec = {
          data: testSeries(3, n, 37, precision === 'f32' ? Float32Array : Float64Array),
          batch: 3,
          fs: 500,
          flags: ['stft', 'cycles'],
          passBand: [20, 120] as const,
          bands: BANDS,
          previewBins: 64,
        };
        const r = await e.submit(spec).result;
        expect(r).toMatchObject({ batch: 3, length: n, fs: 500 });
        expect(r.filtered).toBeInstanceOf(precision === 'f32' ? Float32Array : Float64Array);
        expect(r.dominant!.map((d) => d.bin)).toEqual([37, 38, 39]);
        expectMatches(r, referenceOf(spec), precision === 'f32' ? 5e-5 : 1e-10, `${precision} N=${n}`);
        expect(r.timings.gpuMs).toBeGreaterThan(0);
      }
    }
  });

  it('other windows and detrend modes match the reference too', async () => {
    const e = engine({ lanes: 1, precision: 'f64' });
    const n = 640;
    for (const [window, detrend] of [
      [['kaiser', 8], 'constant'],
      ['blackmanharris', false],
      [['tukey', 0.3], 'linear'],
    ] as const) {
      const spec = {
        data: testSeries(2, n, 50, Float64Array),
        batch: 2,
        fs: 640,
        flags: ['stft', 'cycles'],
        window,
        detrend,
        bands: [[10, 100]] as const,
        passBand: [5, 200] as const,
      };
      const r = await e.submit(spec).result;
      expectMatches(r, referenceOf(spec, getWindow(window, n)), 1e-10, `${JSON.stringify(window)} ${String(detrend)}`);
    }
  });

  it('engine results equal the signal operations run one by one on a stream', async () => {
    const n = 2048;
    const batch = 4;
    const fs = 1000;
    const spec = {
      data: testSeries(batch, n, 100) as Float32Array,
      batch,
      fs,
      flags: ['stft', 'cycles'],
      passBand: [50, 300] as const,
      bands: BANDS,
      previewBins: 100,
    };
    const r = await engine({ lanes: 2 }).submit(spec).result;
    using s = new Stream({ label: 'one by one' });
    const k = halfBins(n);
    const series = { batch, length: n, stream: s };
    const alloc = <T extends DType>(dtype: T, len: number): DeviceBuffer<T> =>
      DeviceBuffer.alloc(dtype, len, { stream: s });
    using x = alloc('f32', batch * n).write(spec.data, { stream: s });
    using xw = alloc('f32', batch * n);
    using X = alloc('c64', batch * k);
    using masked = alloc('c64', batch * k);
    using y = alloc('f32', batch * n);
    using preview = alloc('f32', batch * 100);
    using powers = alloc('f64', batch * BANDS.length);
    using dom = alloc('f64', batch * 4);
    detrendWindow(x, xw, { ...series, detrend: 'linear', window: 'hann' });
    rfft(xw, X, series);
    bandMask(X, { ...series, fs, band: [50, 300], output: masked, scale: 1 / n });
    irfft(masked, y, { ...series, normalize: false });
    spectrumMagnitude(X, preview, { ...series, bins: 100, scale: 1 / n });
    bandPowers(X, powers, { ...series, fs, bands: BANDS });
    dominantCycleDevice(X, dom, series);
    const waves: Float32Array[] = [];
    for (const band of BANDS) {
      using m = alloc('c64', batch * k);
      using wv = alloc('f32', batch * n);
      bandMask(X, { ...series, fs, band, output: m, scale: 1 / n });
      irfft(m, wv, { ...series, normalize: false });
      await s.done();
      waves.push(wv.read());
    }
    await s.done();
    expect(relL2(r.filtered!, y.read())).toBeLessThan(1e-6);
    expect(relL2(r.spectrum!, preview.read())).toBeLessThan(1e-6);
    expect(relL2(r.bandPowers!, powers.read())).toBeLessThan(1e-6);
    const cycles = finishDominantCycles(dom.read(), {
      batch,
      length: n,
      fs,
      windowSum: getWindow('hann', n).reduce((a, b) => a + b, 0),
    });
    expect(r.dominant!.map((d) => d.bin)).toEqual(cycles.map((c) => c.bin));
    for (let b = 0; b < batch; b++) {
      expect(r.dominant![b]!.amplitude).toBeCloseTo(cycles[b]!.amplitude, 4);
      for (let q = 0; q < BANDS.length; q++)
        expect(
          relL2(rows(r.bandWaves!, n, b * BANDS.length + q, 1), rows(waves[q]!, n, b, 1)),
          `band ${q} row ${b}`,
        ).toBeLessThan(1e-6);
    }
  });

  it('wavelet power equals the signal cwt, per frequency and reduced to bands on the GPU', async () => {
    const n = 3000;
    const batch = 2;
    const fs = 1000;
    const freqs = [5, 12, 30, 45, 80, 120, 200, 333, 450];
    const data = testSeries(batch, n, 90) as Float32Array;
    const e = engine({ lanes: 2 });
    const [perFreq, banded] = await Promise.all([
      e.submit({ data, batch, fs, flags: ['wavelet'], freqs, nCycles: 5 }).result,
      e.submit({ data, batch, fs, flags: ['wavelet'], freqs, nCycles: 5, bands: BANDS, waveletBands: true }).result,
    ]);
    expect(perFreq.waveletPower).toHaveLength(batch * freqs.length * n);
    expect(banded.waveletPower).toHaveLength(batch * BANDS.length * n);
    using s = new Stream();
    using x = DeviceBuffer.alloc('f32', batch * n).write(data, { stream: s });
    using a = cwt(x, { fs, freqs, nCycles: 5, output: 'power', batch, stream: s }) as DeviceBuffer<'f32'>;
    using c = cwt(x, { fs, freqs, nCycles: 5, output: 'power', batch, bands: BANDS, stream: s }) as DeviceBuffer<'f32'>;
    await s.done();
    const refA = a.read();
    const refC = c.read();
    expect(relL2(perFreq.waveletPower!, refA)).toBeLessThan(1e-6);
    expect(relL2(banded.waveletPower!, refC)).toBeLessThan(1e-6);
    // The band reduction is the sum of the per-frequency powers in each band.
    const summed = new Float64Array(batch * BANDS.length * n);
    for (let b = 0; b < batch; b++)
      BANDS.forEach(([lo, hi], q) =>
        freqs.forEach((f, j) => {
          if (f < lo || f > hi) return;
          for (let t = 0; t < n; t++) {
            const i = (b * BANDS.length + q) * n + t;
            summed[i] = summed[i]! + perFreq.waveletPower![(b * freqs.length + j) * n + t]!;
          }
        }),
      );
    expect(relL2(banded.waveletPower!, summed)).toBeLessThan(1e-5);
  });
});
