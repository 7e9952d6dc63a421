/**
 * src/signal's resampling and convolution functions run whole on the CPU (device buffers, cuFFT
 * and the kernels replaced by emulation/fake-runtime.ts; the kernels are filter.cu and signal.cu
 * compiled by g++): the argument order, sizes and scratch of upfirdn, resamplePoly, decimate,
 * resample, correlate and oaconvolve, against float64 references from the definitions (upfirdn,
 * the correlation sum, band-limited closed forms) and sosfiltfilt's own output for decimate's IIR
 * path. Skipped, with the reason, where g++ is missing.
 */
import './emulation/emulate-runtime.js';
import { describe, expect, it } from 'vitest';
import { emulatedKernels, FakeDeviceBuffer } from './emulation/fake-runtime.js';
import { upfirdnReference } from './emulation/references.js';

const signal = await import('../../../src/signal/index.js');

type P = 'f32' | 'f64';
type Buf = ReturnType<typeof FakeDeviceBuffer.alloc>;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-11 };
const emu = emulatedKernels();
// The fakes stand in for DeviceBuffer: the casts below are the test's, not the library's.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const upload = (p: P, x: Float64Array): any => FakeDeviceBuffer.from(p, p === 'f32' ? Float32Array.from(x) : x);
const held = (p: P, x: Float64Array): Float64Array => (p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x);
const host = (b: unknown): Float64Array => Float64Array.from((b as Buf).host as ArrayLike<number>);
const random = (n: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() - 0.4);

/** max |a − b| / max |b|, per series rows concatenated. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return Number.isNaN(num) ? Infinity : num / (den || 1);
}

/** Each series of x (batch rows of length) through `f`, concatenated. */
function perSeries(x: Float64Array, batch: number, f: (row: Float64Array) => ArrayLike<number>): Float64Array {
  const length = x.length / batch;
  return Float64Array.from(
    Array.from({ length: batch }, (_, b) => Array.from(f(x.subarray(b * length, (b + 1) * length)))).flat(),
  );
}

describe.skipIf(!emu.so)(
  `resampling and convolution orchestration, emulated on the CPU${emu.so ? '' : ` (skipped: ${emu.reason})`}`,
  { timeout: 30_000 },
  () => {
    const batch = 2;
    for (const p of ['f32', 'f64'] as const) {
      it(`upfirdn, resamplePoly, decimate (fir, iir) (${p})`, () => {
        const n = 90;
        const x64 = random(batch * n);
        const x = upload(p, x64);
        const taps = random(13);
        expect(
          relErr(
            host(signal.upfirdn(taps, x, 3, 2, { batch })),
            perSeries(held(p, x64), batch, (r) => upfirdnReference(taps, r, 3, 2)),
          ),
        ).toBeLessThan(TOL[p]);
        const plan = signal.resamplePolyPlan(n, 2, 5);
        const poly = perSeries(held(p, x64), batch, (r) =>
          upfirdnReference(plan.taps, r, plan.up, plan.down).subarray(plan.start, plan.start + plan.outLength),
        );
        expect(relErr(host(signal.resamplePoly(x, 2, 5, { batch })), poly)).toBeLessThan(TOL[p]);
        // FIR decimation, forward only: upfirdn with firwin(20q + 1, 1/q) taps, the first ceil(n / q) samples.
        const fir = signal.firwin(61, 1 / 3, { window: 'hamming' });
        const forward = perSeries(held(p, x64), batch, (r) => upfirdnReference(fir, r, 1, 3).subarray(0, 30));
        expect(relErr(host(signal.decimate(x, 3, { ftype: 'fir', zeroPhase: false, batch })), forward)).toBeLessThan(
          TOL[p],
        );
        // IIR decimation: every third sample of sosfiltfilt through cheby1(8, 0.05, 0.8 / 3).
        const filtered = host(signal.sosfiltfilt(signal.cheby1(8, 0.05, 0.8 / 3), x, { batch }));
        const picked = perSeries(filtered, batch, (r) => r.filter((_, i) => i % 3 === 0));
        expect(relErr(host(signal.decimate(x, 3, { batch })), picked)).toBeLessThan(TOL[p]);
      });

      it(`resample lands band-limited series on the new grid (${p})`, () => {
        const nx = 24;
        const signalAt = (b: number, t: number, period: number): number =>
          (b + 1) *
          (0.5 + Math.cos((2 * Math.PI * 3 * t) / period + 0.4) - 0.7 * Math.sin((2 * Math.PI * 5 * t) / period));
        const x64 = Float64Array.from({ length: batch * nx }, (_, i) => signalAt(Math.floor(i / nx), i % nx, nx));
        for (const num of [15, 40]) {
          const expected = Float64Array.from({ length: batch * num }, (_, i) =>
            signalAt(Math.floor(i / num), i % num, num),
          );
          expect(
            relErr(host(signal.resample(upload(p, x64), num, { batch })), expected),
            `${nx} -> ${num}`,
          ).toBeLessThan(TOL[p]);
        }
      });

      it(`correlate (every method) and oaconvolve (${p}): the correlation and convolution sums`, () => {
        const n = 400;
        const x64 = random(batch * n);
        const x = upload(p, x64);
        const taps = random(9);
        const reversed = taps.slice().reverse();
        for (const mode of ['full', 'same', 'valid'] as const) {
          const w = signal.convolutionWindow(n, taps.length, mode);
          const correlation = perSeries(held(p, x64), batch, (r) =>
            upfirdnReference(reversed, r, 1, 1).subarray(w.start, w.start + w.outLength),
          );
          for (const method of ['direct', 'fft', 'auto'] as const)
            expect(
              relErr(host(signal.correlate(x, taps, { mode, method, batch })), correlation),
              `correlate ${mode} ${method}`,
            ).toBeLessThan(TOL[p]);
          const convolution = perSeries(held(p, x64), batch, (r) =>
            upfirdnReference(taps, r, 1, 1).subarray(w.start, w.start + w.outLength),
          );
          expect(signal.overlapAddBlocks(n, taps.length)).toBeDefined();
          expect(
            relErr(host(signal.oaconvolve(x, taps, { mode, batch })), convolution),
            `oaconvolve ${mode}`,
          ).toBeLessThan(TOL[p]);
        }
      });
    }
  },
);
