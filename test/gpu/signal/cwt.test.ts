/**
 * The Morlet CWT on the GPU (pad, one forward FFT, wavelet table, one batched inverse FFT) against
 * a float64 CPU CWT by direct convolution with the same wavelets (MNE's morlet convention, see
 * src/signal/morlet.ts): complex output, power, band power; freqs with nCycles and scales with w0;
 * f32 and f64; the table built on one stream and used from another.
 */
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { clearSignalCaches, cwt, cwtGeometry, cwtReference, morletGeometry } from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import { randomSeries, relativeL2 } from './scipy.js';

type P = Precision;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };

function readAll(b: DeviceBuffer<Precision | 'c64' | 'c128'>): Float64Array {
  const n = b.dtype === 'c64' || b.dtype === 'c128' ? 2 * b.length : b.length;
  const host = b.dtype === 'f32' || b.dtype === 'c64' ? new Float32Array(n) : new Float64Array(n);
  (b as DeviceBuffer<'f32'>).read(host as Float32Array);
  return Float64Array.from(host);
}

function poisoned(dtype: Precision | 'c64' | 'c128', length: number): DeviceBuffer<Precision | 'c64' | 'c128'> {
  const n = dtype === 'c64' || dtype === 'c128' ? 2 * length : length;
  const host =
    dtype === 'f32' || dtype === 'c64' ? new Float32Array(n).fill(Number.NaN) : new Float64Array(n).fill(Number.NaN);
  return DeviceBuffer.from(dtype, host as never);
}

describe.skipIf(!gpu.available)(
  `Morlet CWT by FFT${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  { timeout: 300_000 },
  () => {
    afterAll(() => {
      if (gpu.available) clearSignalCaches();
    });

    for (const p of ['f32', 'f64'] as const) {
      it(`complex, power and band power (${p}) match a direct convolution`, async () => {
        using s1 = new Stream({ label: `cwt-a-${p}` });
        using s2 = new Stream({ label: `cwt-b-${p}` });
        const batch = 3;
        const n = 3000;
        const fs = 500;
        const freqs = [1.5, 4, 9.5, 20, 47, 120, 249];
        const raw = randomSeries(batch * n);
        const x64 = p === 'f32' ? Float64Array.from(Float32Array.from(raw)) : raw;
        using x = p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(x64)) : DeviceBuffer.from('f64', x64);
        const opts = { fs, freqs, nCycles: 7, batch };
        const g = morletGeometry(n, opts);
        const want = new Float64Array(2 * batch * freqs.length * n);
        for (let b = 0; b < batch; b++)
          want.set(cwtReference(x64.subarray(b * n, (b + 1) * n), g), 2 * b * freqs.length * n);
        const wantPower = new Float64Array(batch * freqs.length * n).map(
          (_, i) => want[2 * i]! ** 2 + want[2 * i + 1]! ** 2,
        );

        using complex = poisoned(p === 'f32' ? 'c64' : 'c128', batch * freqs.length * n);
        cwt(x, { ...opts, output: 'complex', stream: s1, into: complex as DeviceBuffer<'c64'> });
        using power = poisoned(p, batch * freqs.length * n);
        cwt(x, { ...opts, output: 'power', stream: s2, into: power as DeviceBuffer<'f32'> }); // table built on s1, used on s2
        const bands = [
          [1, 10],
          [15, 130],
          [200, 250],
        ] as const;
        expect(cwtGeometry(n, { ...opts, bands: [...bands] }).rows).toBe(3);
        using banded = poisoned(p, batch * bands.length * n);
        cwt(x, { ...opts, output: 'power', bands: [...bands], stream: s2, into: banded as DeviceBuffer<'f32'> });
        await Promise.all([s1.done(), s2.done()]);

        expect(relativeL2(readAll(complex), want)).toBeLessThanOrEqual(TOL[p]);
        expect(relativeL2(readAll(power), wantPower)).toBeLessThanOrEqual(TOL[p]);
        const members = bands.map(([lo, hi]) =>
          freqs.map((f, j) => (f >= lo && f <= hi ? j : -1)).filter((j) => j >= 0),
        );
        const wantBands = new Float64Array(batch * bands.length * n);
        for (let b = 0; b < batch; b++)
          members.forEach((js, q) => {
            for (const j of js)
              for (let t = 0; t < n; t++)
                wantBands[(b * bands.length + q) * n + t] =
                  wantBands[(b * bands.length + q) * n + t]! + wantPower[(b * freqs.length + j) * n + t]!;
          });
        expect(relativeL2(readAll(banded), wantBands)).toBeLessThanOrEqual(TOL[p]);
      });
    }

    it('scales with w0 equal the matching freqs with nCycles = w0; a new output buffer when none is given', async () => {
      using stream = new Stream({ label: 'cwt-scales' });
      const n = 1024;
      const fs = 100;
      using x = DeviceBuffer.from('f64', randomSeries(n));
      const scales = [3, 7.5, 20];
      const w0 = 6;
      const viaScales = cwt(x, { fs, scales, w0, output: 'complex', stream });
      const viaFreqs = cwt(x, {
        fs,
        freqs: scales.map((s) => (w0 * fs) / (2 * Math.PI * s)),
        nCycles: w0,
        output: 'complex',
        stream,
      });
      await stream.done();
      expect(viaScales.dtype).toBe('c128');
      expect(viaScales.length).toBe(scales.length * n);
      expect(relativeL2(readAll(viaScales), readAll(viaFreqs))).toBeLessThanOrEqual(1e-14);
      viaScales.dispose();
      viaFreqs.dispose();
    });

    it('refuses bad parameters naming them', () => {
      using x = DeviceBuffer.alloc('f32', 100);
      expect(() => cwt(x, { fs: 10, freqs: [6] })).toThrow(/freqs\[0\]/);
      expect(() => cwt(x, { fs: 10 })).toThrow(/freqs or scales/);
      expect(() => cwt(x, { fs: 10, freqs: [1], output: 'complex', bands: [[0, 2]] })).toThrow(/bands/);
      expect(() => cwt(x, { fs: 10, freqs: [1], wavelet: 'mexh' as 'morlet' })).toThrow(/morlet/);
      expect(() => cwt(x, { fs: 10, freqs: [1], batch: 3 })).toThrow(/3 series/);
    });
  },
);
