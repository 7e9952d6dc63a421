/**
 * src/signal's own code (stft, istft, spectrogram, welch, detrend, the primitives, cwt) run on the
 * CPU: device buffers, cuFFT and the kernels are replaced by the stand-ins of
 * emulation/fake-runtime.ts (the kernels are signal.cu compiled by g++). This checks the
 * orchestration (argument order, sizes, scratch and plan use) against scipy and float64
 * references before the GPU suite runs the real thing. Skipped, with the reason, where g++ or
 * python3 with scipy is missing.
 */
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { describe, expect, it, vi } from 'vitest';
import { randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from '../../gpu/signal/scipy.js';
import { emulatedKernels, FakeDeviceBuffer } from './emulation/fake-runtime.js';

vi.mock('../../../src/runtime/memory/device-buffer.js', async () => ({
  DeviceBuffer: (await import('./emulation/fake-runtime.js')).FakeDeviceBuffer,
}));
vi.mock('../../../src/runtime/fft/plan-cache.js', async () => ({
  FftPlanCache: (await import('./emulation/fake-runtime.js')).FakePlanCache,
}));
vi.mock('../../../src/runtime/event.js', () => ({ Event: class {} }));
vi.mock('../../../src/kernels/launchers.generated.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/kernels/launchers.generated.js')>();
  const fake = await import('./emulation/fake-runtime.js');
  return {
    ...original,
    loadSignalKernels: () => fake.fakeSignalKernels(fake.emulatedKernels().so, original.SIGNAL_SIGNATURES),
  };
});

const signal = await import('../../../src/signal/index.js');

type P = Precision;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };
const emu = emulatedKernels();
const skip = !emu.so ? emu.reason : !scipy.ok ? scipy.reason : '';

// The fakes stand in for DeviceBuffer: the casts below are the test's, not the library's.
type Buf = ReturnType<typeof FakeDeviceBuffer.alloc>;
const upload = (p: P, x: Float64Array): Buf => FakeDeviceBuffer.from(p, p === 'f32' ? Float32Array.from(x) : x);
const seen = (p: P, x: Float64Array): Float64Array => (p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x);
const host = (b: unknown): Float64Array => Float64Array.from((b as Buf).host as ArrayLike<number>);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const asDevice = (b: Buf): any => b;

describe.skipIf(!!skip)(
  `src/signal orchestration, emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 180_000 },
  () => {
    const batch = 2;
    for (const p of ['f32', 'f64'] as const) {
      it(`stft, istft, spectrogram, welch, detrend (${p}) vs scipy`, async () => {
        const n = 203;
        const x64 = randomSeries(batch * n);
        const x = asDevice(upload(p, x64));
        const cases = [
          { nperseg: 32, boundary: 'zeros', padded: true, scaling: 'spectrum', detrend: false },
          {
            nperseg: 31,
            noverlap: 9,
            nfft: 40,
            boundary: 'odd',
            padded: true,
            scaling: 'psd',
            detrend: 'linear',
            window: ['tukey', 0.4],
          },
          {
            nperseg: 24,
            boundary: 'even',
            padded: false,
            returnOnesided: false,
            detrend: 'constant',
            window: 'hamming',
          },
          { nperseg: 17, noverlap: 4, boundary: null, padded: false, scaling: 'psd', fs: 7 },
          { nperseg: 20, boundary: 'constant', padded: true, returnOnesided: false, window: 'blackman' },
        ] as const;
        const ref: ScipyCase[] = [];
        const zs: Buf[] = [];
        const inv: Buf[] = [];
        cases.forEach((o, c) => {
          const r = signal.stft(x, { ...o, batch });
          zs.push(r.Zxx as unknown as Buf);
          const g = r.geometry;
          ref.push({
            id: `s${c}`,
            op: 'stft',
            input: seen(p, x64),
            shape: [batch, n],
            params: {
              fs: (o as { fs?: number }).fs ?? 1,
              window: 'window' in o ? o.window : 'hann',
              nperseg: o.nperseg,
              noverlap: 'noverlap' in o ? o.noverlap : null,
              nfft: 'nfft' in o ? o.nfft : null,
              detrend: (o as { detrend?: unknown }).detrend ?? false,
              return_onesided: 'returnOnesided' in o ? o.returnOnesided : true,
              boundary: o.boundary,
              padded: o.padded,
              scaling: 'scaling' in o ? o.scaling : 'spectrum',
            },
          });
          const back = signal.istft(r.Zxx, {
            frames: g.frames,
            batch,
            fs: g.fs,
            window: g.windowSpec,
            nperseg: g.nperseg,
            noverlap: g.noverlap,
            nfft: g.nfft,
            inputOnesided: g.onesided,
            boundary: g.boundary !== null,
            scaling: 'scaling' in o ? o.scaling : 'spectrum',
          });
          inv.push(back.x as unknown as Buf);
        });
        const want = await scipyReference(ref);
        const iref: ScipyCase[] = [];
        cases.forEach((o, c) => {
          expect(relativeL2(host(zs[c]), want.get(`s${c}`)!.values), `stft ${c}`).toBeLessThanOrEqual(TOL[p]);
          const g = signal.stftGeometry(n, o);
          iref.push({
            id: `i${c}`,
            op: 'istft',
            input: host(zs[c]),
            complex: true,
            shape: [batch, g.freqs, g.frames],
            params: {
              fs: g.fs,
              window: 'window' in o ? o.window : 'hann',
              nperseg: g.nperseg,
              noverlap: g.noverlap,
              nfft: g.nfft,
              input_onesided: g.onesided,
              boundary: g.boundary !== null,
              scaling: 'scaling' in o ? o.scaling : 'spectrum',
            },
          });
        });
        const iwant = await scipyReference(iref);
        cases.forEach((_, c) => {
          const w = iwant.get(`i${c}`)!;
          expect(
            relativeL2(host(inv[c]), w.complex ? w.values.filter((_, k) => k % 2 === 0) : w.values),
            `istft ${c}`,
          ).toBeLessThanOrEqual(TOL[p]);
        });
        // round trip where nothing was detrended and the boundary was extended
        const first = host(inv[0]);
        const len = first.length / batch;
        const head = new Float64Array(batch * n);
        for (let b = 0; b < batch; b++) head.set(first.subarray(b * len, b * len + n), b * n);
        expect(relativeL2(head, seen(p, x64))).toBeLessThanOrEqual(TOL[p]);

        const psd: ScipyCase[] = [];
        const outs: Buf[] = [];
        for (const o of [
          { nperseg: 40 },
          { nperseg: 33, noverlap: 7, nfft: 50, detrend: 'linear', scaling: 'spectrum', fs: 4 },
          { nperseg: 30, returnOnesided: false, detrend: false },
        ] as const) {
          outs.push(
            signal.spectrogram(x, { ...o, batch }).Sxx as unknown as Buf,
            signal.welch(x, { ...o, batch }).Pxx as unknown as Buf,
          );
          const params = {
            fs: 'fs' in o ? o.fs : 1,
            nperseg: o.nperseg,
            noverlap: 'noverlap' in o ? o.noverlap : null,
            nfft: 'nfft' in o ? o.nfft : null,
            return_onesided: 'returnOnesided' in o ? o.returnOnesided : true,
            scaling: 'scaling' in o ? o.scaling : 'density',
            ...('detrend' in o ? { detrend: o.detrend } : {}),
          };
          psd.push(
            { id: `sg${psd.length}`, op: 'spectrogram', input: seen(p, x64), shape: [batch, n], params },
            { id: `w${psd.length}`, op: 'welch', input: seen(p, x64), shape: [batch, n], params },
          );
        }
        const pw = await scipyReference(psd);
        psd.forEach((c, k) =>
          expect(relativeL2(host(outs[k]), pw.get(c.id)!.values), c.id).toBeLessThanOrEqual(TOL[p]),
        );

        // The other spectrogram modes and Welch's median average. Angles are compared as points on the
        // unit circle (cos, sin): a value at the branch cut may land on either side of +-pi, and an
        // unwrapped phase may differ by whole turns where the branch cut was met.
        const modeCases: ScipyCase[] = [];
        const modeOuts: { buf: Buf; kind: 'values' | 'circle' }[] = [];
        for (const [mode, kind] of [
          ['magnitude', 'values'],
          ['complex', 'values'],
          ['angle', 'circle'],
          ['phase', 'circle'],
        ] as const) {
          const o = { nperseg: 36, noverlap: 12, scaling: 'spectrum', fs: 3 } as const;
          modeOuts.push({ buf: signal.spectrogram(x, { ...o, mode, batch }).Sxx as unknown as Buf, kind });
          modeCases.push({
            id: `m-${mode}`,
            op: 'spectrogram',
            input: seen(p, x64),
            shape: [batch, n],
            params: { fs: 3, nperseg: 36, noverlap: 12, scaling: 'spectrum', mode },
          });
        }
        for (const nperseg of [32, 41]) {
          modeOuts.push({
            buf: signal.welch(x, { nperseg, average: 'median', batch }).Pxx as unknown as Buf,
            kind: 'values',
          });
          modeCases.push({
            id: `med-${nperseg}`,
            op: 'welch',
            input: seen(p, x64),
            shape: [batch, n],
            params: { nperseg, average: 'median' },
          });
        }
        const modeRef = await scipyReference(modeCases);
        const circle = (a: ArrayLike<number>): Float64Array => {
          const out = new Float64Array(2 * a.length);
          for (let i = 0; i < a.length; i++) [out[2 * i], out[2 * i + 1]] = [Math.cos(a[i]!), Math.sin(a[i]!)];
          return out;
        };
        modeCases.forEach((c, k) => {
          const { buf, kind } = modeOuts[k]!;
          const want = modeRef.get(c.id)!.values;
          if (kind === 'values') expect(relativeL2(host(buf), want), c.id).toBeLessThanOrEqual(TOL[p]);
          else
            expect(relativeL2(circle(host(buf)), circle(want)), c.id).toBeLessThanOrEqual(p === 'f32' ? 1e-4 : 1e-10);
        });
        // Welch's median is not its mean: the two differ on these random inputs.
        expect(
          relativeL2(host(signal.welch(x, { nperseg: 32, batch }).Pxx), modeRef.get('med-32')!.values),
        ).toBeGreaterThan(1e-3);

        const d = signal.detrend(x, 'linear', { batch });
        const c0 = signal.detrend(x, 'constant', { batch });
        const dw = await scipyReference([
          { id: 'l', op: 'detrend', input: seen(p, x64), shape: [batch, n], params: { type: 'linear' } },
          { id: 'c', op: 'detrend', input: seen(p, x64), shape: [batch, n], params: { type: 'constant' } },
        ]);
        expect(relativeL2(host(d), dw.get('l')!.values)).toBeLessThanOrEqual(TOL[p]);
        expect(relativeL2(host(c0), dw.get('c')!.values)).toBeLessThanOrEqual(TOL[p]);
      });

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
