/**
 * The primitives the job engine calls, on the GPU, against float64 CPU references: detrendWindow,
 * rfft/irfft, bandMask, spectrumMagnitude, bandPowers (Parseval), dominantCycleDevice (exact on
 * planted bin-centred cosines), and the host-finishing conveniences bandPower and dominantCycle.
 * Fresh random inputs, NaN-poisoned outputs.
 */
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import {
  bandMask,
  bandMaskMany,
  bandPower,
  bandPowers,
  bandPowersReference,
  bandRanges,
  clearSignalCaches,
  detrendWindow,
  dominantCycle,
  dominantCycleDevice,
  finishDominantCycles,
  getWindow,
  halfBins,
  irfft,
  rfft,
  signalWorkspace,
  spectrumMagnitude,
  windowSum,
} from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import { relativeL2, randomSeries } from './scipy.js';

type P = Precision;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };

function upload(p: P, x: ArrayLike<number>): DeviceBuffer<'f32'> | DeviceBuffer<'f64'> {
  return p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(x)) : DeviceBuffer.from('f64', Float64Array.from(x));
}

function poisoned(dtype: Precision | 'c64' | 'c128', length: number): DeviceBuffer<Precision | 'c64' | 'c128'> {
  const n = dtype === 'c64' || dtype === 'c128' ? 2 * length : length;
  const host =
    dtype === 'f32' || dtype === 'c64' ? new Float32Array(n).fill(Number.NaN) : new Float64Array(n).fill(Number.NaN);
  return DeviceBuffer.from(dtype, host as never);
}

function readAll(b: DeviceBuffer<Precision | 'c64' | 'c128'>): Float64Array {
  const n = b.dtype === 'c64' || b.dtype === 'c128' ? 2 * b.length : b.length;
  const host = b.dtype === 'f32' || b.dtype === 'c64' ? new Float32Array(n) : new Float64Array(n);
  (b as DeviceBuffer<'f32'>).read(host as Float32Array);
  return Float64Array.from(host);
}

/** One-sided DFT of each row (float64, interleaved): direct sum with exact integer phase reduction. */
function rdftRows(x: Float64Array, batch: number, n: number): Float64Array {
  const h = halfBins(n);
  const cos = new Float64Array(n);
  const sin = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    cos[k] = Math.cos((2 * Math.PI * k) / n);
    sin[k] = Math.sin((2 * Math.PI * k) / n);
  }
  const out = new Float64Array(2 * batch * h);
  for (let b = 0; b < batch; b++)
    for (let k = 0; k < h; k++) {
      let re = 0;
      let im = 0;
      let idx = 0;
      for (let t = 0; t < n; t++) {
        re += x[b * n + t]! * cos[idx]!;
        im -= x[b * n + t]! * sin[idx]!;
        idx += k;
        if (idx >= n) idx -= n;
      }
      out[2 * (b * h + k)] = re;
      out[2 * (b * h + k) + 1] = im;
    }
  return out;
}

/** float64 reference of detrendWindow. */
function norm(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s);
}

function detrendWindowReference(
  x: Float64Array,
  batch: number,
  n: number,
  type: 'constant' | 'linear' | false,
  w: Float64Array | null,
): Float64Array {
  const out = new Float64Array(x.length);
  const tbar = (n - 1) / 2;
  const stt = (n * (n * n - 1)) / 12;
  for (let b = 0; b < batch; b++) {
    let s0 = 0;
    let s1 = 0;
    for (let t = 0; t < n; t++) {
      s0 += x[b * n + t]!;
      s1 += (t - tbar) * x[b * n + t]!;
    }
    const mean = type === false ? 0 : s0 / n;
    const slope = type === 'linear' ? s1 / stt : 0;
    for (let t = 0; t < n; t++) out[b * n + t] = (x[b * n + t]! - mean - slope * (t - tbar)) * (w ? w[t]! : 1);
  }
  return out;
}

describe.skipIf(!gpu.available)(
  `signal primitives${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  { timeout: 120_000 },
  () => {
    afterAll(() => {
      if (gpu.available) clearSignalCaches();
    });

    for (const p of ['f32', 'f64'] as const) {
      const c = p === 'f32' ? 'c64' : 'c128';

      it(`detrendWindow (${p}): constant / linear / none, with and without a window, in place`, async () => {
        using stream = new Stream({ label: `dw-${p}` });
        const batch = 5;
        const n = 40_001; // several stats blocks per series
        const raw = randomSeries(batch * n);
        const x64 = p === 'f32' ? Float64Array.from(Float32Array.from(raw)) : raw;
        using x = upload(p, x64);
        for (const type of ['constant', 'linear', false] as const)
          for (const window of [null, 'hann', ['kaiser', 5]] as const) {
            using out = poisoned(p, batch * n);
            detrendWindow(x, out as DeviceBuffer<'f32'>, { batch, length: n, detrend: type, window, stream });
            await stream.done();
            const want = detrendWindowReference(x64, batch, n, type, window === null ? null : getWindow(window, n));
            // Detrending cancels: the residual is smaller than the input, so rounding of the sums
            // (order-dependent on the GPU and in the reference) is bounded relative to the input.
            const conditioning = Math.max(1, norm(x64) / norm(want));
            expect(relativeL2(readAll(out), want), `${String(type)} ${JSON.stringify(window)}`).toBeLessThanOrEqual(
              TOL[p] * conditioning,
            );
          }
        using inPlace = upload(p, x64);
        detrendWindow(inPlace, inPlace, { batch, length: n, detrend: 'linear', window: 'hann', stream });
        await stream.done();
        const wantInPlace = detrendWindowReference(x64, batch, n, 'linear', getWindow('hann', n));
        expect(relativeL2(readAll(inPlace), wantInPlace)).toBeLessThanOrEqual(
          TOL[p] * Math.max(1, norm(x64) / norm(wantInPlace)),
        );
      });

      it(`rfft / bandMask / irfft / spectrumMagnitude (${p}), odd and even N`, async () => {
        using stream = new Stream({ label: `fft-${p}` });
        for (const n of [1000, 999]) {
          const batch = 3;
          const h = halfBins(n);
          const x64 = Float64Array.from(Float32Array.from(randomSeries(batch * n)));
          using x = upload(p, x64);
          using spec = poisoned(c, batch * h);
          rfft(x, spec as DeviceBuffer<'c64'>, { batch, length: n, stream });
          await stream.done();
          const want = rdftRows(x64, batch, n);
          expect(relativeL2(readAll(spec), want)).toBeLessThanOrEqual(TOL[p]);
          using mag = poisoned(p, batch * 100);
          spectrumMagnitude(spec as DeviceBuffer<'c64'>, mag as DeviceBuffer<'f32'>, {
            batch,
            length: n,
            bins: 100,
            stream,
            scale: 2 / n,
          });
          using masked = poisoned(c, batch * h);
          const fs = 50;
          const band = [3.2, 11.9] as const;
          bandMask(spec as DeviceBuffer<'c64'>, {
            batch,
            length: n,
            fs,
            band,
            stream,
            output: masked as DeviceBuffer<'c64'>,
          });
          using wave = poisoned(p, batch * n);
          irfft(masked as DeviceBuffer<'c64'>, wave as DeviceBuffer<'f32'>, { batch, length: n, stream });
          await stream.done();
          const wantMag = new Float64Array(batch * 100);
          for (let b = 0; b < batch; b++)
            for (let k = 0; k < 100; k++)
              wantMag[b * 100 + k] = (2 / n) * Math.hypot(want[2 * (b * h + k)]!, want[2 * (b * h + k) + 1]!);
          expect(relativeL2(readAll(mag), wantMag)).toBeLessThanOrEqual(TOL[p]);
          // band-limited wave: inverse DFT of the kept bins, float64
          const wantWave = new Float64Array(batch * n);
          for (let b = 0; b < batch; b++)
            for (let k = 0; k < h; k++) {
              const f = (k * fs) / n;
              if (f < band[0] || f > band[1]) continue;
              const re = want[2 * (b * h + k)]!;
              const im = want[2 * (b * h + k) + 1]!;
              const unpaired = k === 0 || 2 * k === n;
              for (let t = 0; t < n; t++) {
                const a = (2 * Math.PI * ((k * t) % n)) / n;
                wantWave[b * n + t] =
                  wantWave[b * n + t]! + ((unpaired ? 1 : 2) * (re * Math.cos(a) - im * Math.sin(a))) / n;
              }
            }
          expect(relativeL2(readAll(wave), wantWave)).toBeLessThanOrEqual(TOL[p]);
          // every band at once: one masked copy per band, one batched inverse; the band with `band` equals the wave above
          using many = poisoned(c, batch * 2 * h);
          bandMaskMany(spec as DeviceBuffer<'c64'>, many as DeviceBuffer<'c64'>, {
            batch,
            length: n,
            fs,
            bands: [band, [0, fs / 2]],
            stream,
            scale: 1 / n,
          });
          using waves = poisoned(p, batch * 2 * n);
          irfft(many as DeviceBuffer<'c64'>, waves as DeviceBuffer<'f32'>, {
            batch: batch * 2,
            length: n,
            stream,
            normalize: false,
          });
          await stream.done();
          const wv = readAll(waves);
          for (let b = 0; b < batch; b++) {
            expect(
              relativeL2(wv.subarray(2 * b * n, (2 * b + 1) * n), wantWave.subarray(b * n, (b + 1) * n)),
            ).toBeLessThanOrEqual(TOL[p]);
            expect(
              relativeL2(wv.subarray((2 * b + 1) * n, (2 * b + 2) * n), x64.subarray(b * n, (b + 1) * n)),
            ).toBeLessThanOrEqual(TOL[p]);
          }
          // irfft(rfft(x)) = x, with the normalisation folded into the mask (scale 1/N, normalize false)
          rfft(x, spec as DeviceBuffer<'c64'>, { batch, length: n, stream });
          bandMask(spec as DeviceBuffer<'c64'>, { batch, length: n, fs, band: [0, fs / 2], stream, scale: 1 / n });
          irfft(spec as DeviceBuffer<'c64'>, wave as DeviceBuffer<'f32'>, {
            batch,
            length: n,
            stream,
            normalize: false,
          });
          await stream.done();
          expect(relativeL2(readAll(wave), x64)).toBeLessThanOrEqual(TOL[p]);
        }
      });

      it(`bandPowers (${p}): Parseval over all bins, CPU reference per band`, async () => {
        using stream = new Stream({ label: `bp-${p}` });
        for (const n of [4096, 4095]) {
          const batch = 4;
          const fs = 1000;
          const x64 = Float64Array.from(Float32Array.from(randomSeries(batch * n)));
          using x = upload(p, x64);
          using spec = poisoned(c, batch * halfBins(n));
          rfft(x, spec as DeviceBuffer<'c64'>, { batch, length: n, stream });
          const bands = [
            [0, fs / 2],
            [0, 10],
            [10.5, 99],
            [100, 250],
            [400, 500],
          ] as [number, number][];
          using out = poisoned('f64', batch * bands.length);
          bandPowers(spec as DeviceBuffer<'c64'>, out as DeviceBuffer<'f64'>, { batch, length: n, fs, bands, stream });
          await stream.done();
          const got = readAll(out);
          const ranges = bandRanges(bands, fs, n);
          const full = rdftRows(x64, batch, n);
          const h = halfBins(n);
          for (let b = 0; b < batch; b++) {
            let ms = 0;
            for (let t = 0; t < n; t++) ms += x64[b * n + t]! ** 2;
            ms /= n;
            expect(Math.abs(got[b * bands.length]! / ms - 1), 'Parseval').toBeLessThanOrEqual(TOL[p]);
            const want = bandPowersReference(full.subarray(2 * b * h, 2 * (b + 1) * h), n, ranges);
            expect(relativeL2(got.subarray(b * bands.length, (b + 1) * bands.length), want)).toBeLessThanOrEqual(
              TOL[p],
            );
          }
          const rel = await bandPower(x, bands.slice(1), { fs, batch, stream, relative: true });
          for (let b = 0; b < batch; b++)
            for (let q = 0; q < 4; q++)
              expect(rel[b * 4 + q]).toBeCloseTo(got[b * 5 + q + 1]! / got[b * 5]!, p === 'f32' ? 5 : 11);
        }
      });

      it(`dominant cycle (${p}) of planted bin-centred cosines is exact`, async () => {
        using stream = new Stream({ label: `dom-${p}` });
        const n = 8192;
        const fs = 256;
        const batch = 6;
        const planted: { k: number; A: number; phi: number }[] = [];
        const x = new Float64Array(batch * n);
        for (let b = 0; b < batch; b++) {
          const k = 10 + Math.floor(Math.random() * (n / 2 - 12)); // >= 2 bins from the second tone, DC and Nyquist: hann leaks into neither
          const A = 1 + Math.random();
          const phi = Math.random() * 2 * Math.PI - Math.PI;
          planted.push({ k, A, phi });
          const k2 = 3; // a weaker second tone
          for (let t = 0; t < n; t++)
            x[b * n + t] =
              A * Math.cos((2 * Math.PI * ((k * t) % n)) / n + phi) +
              0.3 * A * Math.cos((2 * Math.PI * ((k2 * t) % n)) / n) +
              0.7;
        }
        using xb = upload(p, x);
        using spec = poisoned(c, batch * halfBins(n));
        rfft(xb, spec as DeviceBuffer<'c64'>, { batch, length: n, stream });
        using rows = poisoned('f64', 4 * batch);
        dominantCycleDevice(spec as DeviceBuffer<'c64'>, rows as DeviceBuffer<'f64'>, { batch, length: n, fs, stream });
        await stream.done();
        const cycles = finishDominantCycles(readAll(rows), { batch, length: n, fs });
        const viaHelper = await dominantCycle(xb, { fs, batch, stream, window: 'hann' });
        planted.forEach(({ k, A, phi }, b) => {
          for (const cyc of [cycles[b]!, viaHelper[b]!]) {
            expect(cyc.bin).toBe(k);
            expect(cyc.frequency).toBe((k * fs) / n);
            expect(cyc.period).toBe(n / (k * fs));
            expect(Math.abs(cyc.amplitude - A) / A).toBeLessThanOrEqual(p === 'f32' ? 1e-4 : 1e-10);
            expect(Math.abs(Math.atan2(Math.sin(cyc.phase - phi), Math.cos(cyc.phase - phi)))).toBeLessThanOrEqual(
              p === 'f32' ? 1e-4 : 1e-10,
            );
          }
        });
        expect(windowSum('hann', n)).toBeCloseTo(n / 2, 8);
      });

      it(`a warm call allocates nothing new (${p})`, async () => {
        using stream = new Stream({ label: `warm-${p}` });
        const batch = 2;
        const n = 2048;
        using x = upload(p, randomSeries(batch * n));
        using spec = poisoned(c, batch * halfBins(n));
        using out = poisoned('f64', batch * 2);
        const run = (): void => {
          detrendWindow(x, x, { batch, length: n, detrend: 'linear', window: 'hann', stream });
          rfft(x, spec as DeviceBuffer<'c64'>, { batch, length: n, stream });
          bandPowers(spec as DeviceBuffer<'c64'>, out as DeviceBuffer<'f64'>, {
            batch,
            length: n,
            fs: 1,
            bands: [
              [0, 0.1],
              [0.1, 0.5],
            ],
            stream,
          });
        };
        run();
        await stream.done();
        const misses = signalWorkspace.plans.misses;
        for (let k = 0; k < 10; k++) run();
        await stream.done();
        expect(signalWorkspace.plans.misses).toBe(misses);
      });
    }

    it('refuses bad arguments before enqueuing', () => {
      using x = DeviceBuffer.alloc('f32', 100);
      using spec = DeviceBuffer.alloc('c64', 51);
      using c128 = DeviceBuffer.alloc('c128', 51);
      expect(() => rfft(x, c128 as unknown as DeviceBuffer<'c64'>, { batch: 1, length: 100 })).toThrow(/c64/);
      expect(() => rfft(x, spec, { batch: 2, length: 100 })).toThrow(/holds 100/);
      expect(() => bandMask(spec, { batch: 1, length: 100, fs: 10, band: [1, 6] })).toThrow(/fs\/2/);
      expect(() => detrendWindow(x, x, { batch: 1, length: 100, detrend: 'quad' as 'linear', window: null })).toThrow(
        /detrend/,
      );
      expect(() => detrendWindow(x, x, { batch: 1, length: 100, detrend: false, window: 'nope' })).toThrow(/nope/);
      expect(() => spectrumMagnitude(spec, x, { batch: 1, length: 100, bins: 52 })).toThrow(/bins/);
    });
  },
);
