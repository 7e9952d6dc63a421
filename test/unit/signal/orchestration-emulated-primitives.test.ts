// src/signal's primitives (bandPower, dominantCycle, ...) and cwt run on the CPU (device buffers,
// cuFFT and the kernels replaced by emulation/) against float64 references. Skipped, with the
// reason, where g++ or python3 with scipy is missing.
import './emulation/emulate-runtime.js';
import { describe, expect, it } from 'vitest';
import { randomSeries, relativeL2 } from '../../gpu/signal/scipy.js';
import { FakeDeviceBuffer } from './emulation/fake-runtime.js';
import { TOL, skip, upload, seen, host, asDevice } from './emulation/orchestration-fixture.js';

const signal = await import('../../../src/signal/index.js');

describe.skipIf(!!skip)(
  `src/signal orchestration, emulated on the CPU: primitives and cwt${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 180_000 },
  () => {
    const batch = 2;
    for (const p of ['f32', 'f64'] as const) {
      it(`primitives, bandPower, dominantCycle (${p})`, async () => {
        const n = 128;
        const fs = 64;
        const k0 = 13;
        const x64 = new Float64Array(batch * n);
        for (let b = 0; b < batch; b++)
          for (let t = 0; t < n; t++)
            x64[b * n + t] =
              (1 + b) * Math.cos((2 * Math.PI * k0 * t) / n + 0.5 + b) +
              0.2 * Math.cos((2 * Math.PI * 40 * t) / n) +
              0.1;
        const x = asDevice(upload(p, x64));
        const h = n / 2 + 1;
        const spec = asDevice(FakeDeviceBuffer.alloc(p === 'f32' ? 'c64' : 'c128', batch * h));
        signal.rfft(x, spec, { batch, length: n });
        const powers = asDevice(FakeDeviceBuffer.alloc('f64', batch * 3));
        signal.bandPowers(spec, powers, {
          batch,
          length: n,
          fs,
          bands: [
            [0, fs / 2],
            [6, 7],
            [19, 21],
          ],
        });
        const bp = host(powers);
        for (let b = 0; b < batch; b++) {
          let ms = 0;
          for (let t = 0; t < n; t++) ms += x64[b * n + t]! ** 2 / n;
          expect(Math.abs(bp[3 * b]! / ms - 1)).toBeLessThanOrEqual(TOL[p]);
          expect(Math.abs(bp[3 * b + 1]! / ((1 + b) ** 2 / 2) - 1)).toBeLessThanOrEqual(TOL[p]);
          expect(Math.abs(bp[3 * b + 2]! / 0.02 - 1)).toBeLessThanOrEqual(TOL[p] * 10);
        }
        const rows = asDevice(FakeDeviceBuffer.alloc('f64', 4 * batch));
        signal.dominantCycleDevice(spec, rows, { batch, length: n, fs });
        const cyc = signal.finishDominantCycles(host(rows), { batch, length: n, fs });
        const viaHelper = await signal.dominantCycle(x, { fs, batch, window: 'hann' });
        for (let b = 0; b < batch; b++)
          for (const c of [cyc[b]!, viaHelper[b]!]) {
            expect(c.frequency).toBe((k0 * fs) / n);
            expect(c.amplitude).toBeCloseTo(1 + b, p === 'f32' ? 5 : 11);
            expect(c.phase).toBeCloseTo(0.5 + b - (0.5 + b > Math.PI ? 2 * Math.PI : 0), p === 'f32' ? 5 : 11);
          }
        const rel = await signal.bandPower(
          x,
          [
            [6, 7],
            [19, 21],
          ],
          { fs, batch, relative: true },
        );
        expect(rel[0]! / (bp[1]! / bp[0]!)).toBeCloseTo(1, 5);
        const mag = asDevice(FakeDeviceBuffer.alloc(p, batch * 20));
        signal.spectrumMagnitude(spec, mag, { batch, length: n, bins: 20, scale: 2 / n });
        expect(host(mag)[k0]).toBeCloseTo(1, p === 'f32' ? 5 : 11);
        const masked = asDevice(FakeDeviceBuffer.alloc(p === 'f32' ? 'c64' : 'c128', batch * h));
        signal.bandMask(spec, { batch, length: n, fs, band: [6, 7], output: masked });
        const wave = asDevice(FakeDeviceBuffer.alloc(p, batch * n));
        signal.irfft(masked, wave, { batch, length: n });
        const w = host(wave);
        for (let b = 0; b < batch; b++)
          for (let t = 0; t < n; t++)
            expect(Math.abs(w[b * n + t]! - (1 + b) * Math.cos((2 * Math.PI * k0 * t) / n + 0.5 + b))).toBeLessThan(
              p === 'f32' ? 1e-5 : 1e-12,
            );
        // one masked copy per band, one batched inverse: each band's wave
        const many = asDevice(FakeDeviceBuffer.alloc(p === 'f32' ? 'c64' : 'c128', batch * 2 * h));
        signal.bandMaskMany(spec, many, {
          batch,
          length: n,
          fs,
          bands: [
            [6, 7],
            [19, 21],
          ],
          scale: 1 / n,
        });
        const waves = asDevice(FakeDeviceBuffer.alloc(p, batch * 2 * n));
        signal.irfft(many, waves, { batch: batch * 2, length: n, normalize: false });
        const ww = host(waves);
        for (let b = 0; b < batch; b++)
          for (let t = 0; t < n; t++) {
            expect(
              Math.abs(ww[2 * b * n + t]! - (1 + b) * Math.cos((2 * Math.PI * k0 * t) / n + 0.5 + b)),
            ).toBeLessThan(p === 'f32' ? 1e-5 : 1e-12);
            expect(Math.abs(ww[(2 * b + 1) * n + t]! - 0.2 * Math.cos((2 * Math.PI * 40 * t) / n))).toBeLessThan(
              p === 'f32' ? 1e-5 : 1e-12,
            );
          }
        const dwOut = asDevice(FakeDeviceBuffer.alloc(p, batch * n));
        signal.detrendWindow(x, dwOut, { batch, length: n, detrend: 'constant', window: 'hann' });
        const win = signal.getWindow('hann', n);
        const dwh = host(dwOut);
        for (let b = 0; b < batch; b++) {
          let mean = 0;
          for (let t = 0; t < n; t++) mean += x64[b * n + t]! / n;
          for (let t = 0; t < n; t++)
            expect(dwh[b * n + t]).toBeCloseTo((x64[b * n + t]! - mean) * win[t]!, p === 'f32' ? 5 : 12);
        }
        // warm: the same calls again allocate nothing
        const z = signal.stft(x, { batch, nperseg: 16 });
        const before = FakeDeviceBuffer.allocations;
        signal.rfft(x, spec, { batch, length: n });
        signal.bandPowers(spec, powers, {
          batch,
          length: n,
          fs,
          bands: [
            [0, fs / 2],
            [6, 7],
            [19, 21],
          ],
        });
        signal.detrendWindow(x, dwOut, { batch, length: n, detrend: 'linear', window: 'hann' });
        signal.stft(x, { batch, nperseg: 16, output: z.Zxx });
        expect(FakeDeviceBuffer.allocations).toBe(before);
      });

      it(`cwt (${p}) vs direct convolution`, () => {
        const n = 180;
        const fs = 60;
        const x64 = randomSeries(batch * n);
        const x = asDevice(upload(p, x64));
        const freqs = [2, 6.5, 14, 29];
        const g = signal.morletGeometry(n, { fs, freqs, nCycles: 5 });
        const want = new Float64Array(2 * batch * freqs.length * n);
        for (let b = 0; b < batch; b++)
          want.set(signal.cwtReference(seen(p, x64).subarray(b * n, (b + 1) * n), g), 2 * b * freqs.length * n);
        const y = signal.cwt(x, { fs, freqs, nCycles: 5, batch, output: 'complex' });
        expect(relativeL2(host(y), want)).toBeLessThanOrEqual(TOL[p]);
        const power = signal.cwt(x, { fs, freqs, nCycles: 5, batch });
        const wantPower = new Float64Array(batch * freqs.length * n).map(
          (_, i) => want[2 * i]! ** 2 + want[2 * i + 1]! ** 2,
        );
        expect(relativeL2(host(power), wantPower)).toBeLessThanOrEqual(TOL[p]);
        const banded = signal.cwt(x, {
          fs,
          freqs,
          nCycles: 5,
          batch,
          bands: [
            [0, 7],
            [10, 30],
          ],
        });
        const wb = new Float64Array(batch * 2 * n);
        for (let b = 0; b < batch; b++)
          for (let t = 0; t < n; t++) {
            wb[2 * b * n + t] = wantPower[(b * 4 + 0) * n + t]! + wantPower[(b * 4 + 1) * n + t]!;
            wb[(2 * b + 1) * n + t] = wantPower[(b * 4 + 2) * n + t]! + wantPower[(b * 4 + 3) * n + t]!;
          }
        expect(relativeL2(host(banded), wb)).toBeLessThanOrEqual(TOL[p]);
      });
    }
  },
);
