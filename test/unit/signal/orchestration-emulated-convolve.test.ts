/**
 * fftconvolve, convolve's FFT method and oaconvolve run whole on the CPU (device buffers, cuFFT and
 * the kernels replaced by emulation/; filter.cu compiled by g++) down both paths of
 * fft-convolution.ts: overlap-save blocks (the single-pass length shortened to 64 points, so short
 * series take several blocks with a partial last one) and the whole length (taps as long as the
 * series, one or two samples). Against the float64 convolution sum; random inputs; f32 and f64;
 * every mode; a batch; a complex signal with complex taps (four real products); the output option;
 * the taps' spectrum built once per taps and length. Skipped, with the reason, where g++ is missing.
 */
import './emulation/emulate-runtime.js';
import { describe, expect, it, vi } from 'vitest';
import type { FftConvolutionPlan } from '../../../src/signal/convolve-blocks.js';
import { emulatedKernels, FakeDeviceBuffer } from './emulation/fake-runtime.js';
import { upfirdnReference } from './emulation/references.js';

/** The plans fft-convolution.ts asked for, in order. */
const plans: FftConvolutionPlan[] = [];
/** The single-pass length the plans are made with here (SINGLE_PASS_POINTS on the GPU). */
const SINGLE = 64;

vi.mock('../../../src/signal/convolve-blocks.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/signal/convolve-blocks.js')>();
  return {
    ...original,
    fftConvolutionPlan: (...args: Parameters<typeof original.fftConvolutionPlan>) => {
      const plan = original.fftConvolutionPlan(args[0], args[1], args[2], args[3], args[4], args[5], SINGLE);
      plans.push(plan);
      return plan;
    },
  };
});

const signal = await import('../../../src/signal/index.js');

type P = 'f32' | 'f64';
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-11 };
const emu = emulatedKernels();
// The fakes stand in for DeviceBuffer: the casts below are the test's, not the library's.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const upload = (dtype: string, x: ArrayLike<number>): any => FakeDeviceBuffer.from(dtype, x);
const host = (b: unknown): Float64Array => Float64Array.from((b as FakeDeviceBuffer).host as ArrayLike<number>);
const random = (n: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() - 0.4);
const held = (p: P, x: Float64Array): Float64Array => (p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x);

/** max |a − b| / max |b|. */
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

/** The mode's window of each series' full convolution sum, concatenated (float64). */
function reference(
  x: Float64Array,
  batch: number,
  h: ArrayLike<number>,
  mode: 'full' | 'same' | 'valid',
): Float64Array {
  const length = x.length / batch;
  const w = signal.convolutionWindow(length, h.length, mode);
  const out = new Float64Array(batch * w.outLength);
  for (let b = 0; b < batch; b++)
    out.set(
      upfirdnReference(h, x.subarray(b * length, (b + 1) * length), 1, 1).subarray(w.start, w.start + w.outLength),
      b * w.outLength,
    );
  return out;
}

describe.skipIf(!emu.so)(
  `FFT convolution orchestration, emulated on the CPU${emu.so ? '' : ` (skipped: ${emu.reason})`}`,
  { timeout: 120_000 },
  () => {
    const batch = 3;
    for (const p of ['f32', 'f64'] as const) {
      it(`overlap-save blocks: fftconvolve, convolve (fft), oaconvolve, every mode (${p})`, () => {
        for (const [length, ntaps] of [
          [301, 9],
          [250, 24],
          [203, 1],
        ] as const) {
          const x64 = random(batch * length);
          const x = upload(p, p === 'f32' ? Float32Array.from(x64) : x64);
          const taps = random(ntaps);
          for (const mode of ['full', 'same', 'valid'] as const) {
            const want = reference(held(p, x64), batch, taps, mode);
            const outLength = signal.convolutionWindow(length, ntaps, mode).outLength;
            plans.length = 0;
            const output = upload(p, new Float64Array(batch * outLength).fill(Number.NaN));
            const tag = `${length}x${ntaps} ${mode}`;
            expect(relErr(host(signal.fftconvolve(x, taps, { mode, batch, output })), want), tag).toBeLessThan(TOL[p]);
            expect(relErr(host(signal.convolve(x, taps, { mode, batch, method: 'fft' })), want), tag).toBeLessThan(
              TOL[p],
            );
            expect(relErr(host(signal.oaconvolve(x, taps, { mode, batch })), want), tag).toBeLessThan(TOL[p]);
            expect(plans.length).toBe(3);
            for (const plan of plans) {
              expect(plan.kind, tag).toBe('blocks');
              // Several blocks per series, the last one partial: the scatter's bound is exercised.
              if (plan.kind === 'blocks') {
                expect(plan.blocks).toBeGreaterThan(2);
                expect(outLength % plan.step, tag).not.toBe(0);
              }
            }
          }
        }
      });

      it(`taps as long as the series or longer, one and two samples (${p})`, () => {
        for (const [length, ntaps] of [
          [40, 50],
          [60, 60],
          [1, 5],
          [2, 3],
          [7, 1],
        ] as const) {
          const x64 = random(batch * length);
          const x = upload(p, p === 'f32' ? Float32Array.from(x64) : x64);
          const taps = random(ntaps);
          for (const mode of ['full', 'same', 'valid'] as const) {
            plans.length = 0;
            const got = host(signal.fftconvolve(x, taps, { mode, batch }));
            expect(relErr(got, reference(held(p, x64), batch, taps, mode)), `${length}x${ntaps} ${mode}`).toBeLessThan(
              TOL[p],
            );
            // The full window needs the whole length; 'same' and 'valid' may take fewer elements as blocks.
            if (mode === 'full') expect(plans.map((q) => q.kind)).toEqual(['whole']);
          }
        }
      });

      it(`a complex signal with complex taps through the blocks (${p})`, () => {
        const length = 280;
        const ntaps = 11;
        const re = random(batch * length);
        const im = random(batch * length);
        const taps = { re: random(ntaps), im: random(ntaps) };
        const interleaved = new Float64Array(2 * batch * length);
        for (let i = 0; i < batch * length; i++) [interleaved[2 * i], interleaved[2 * i + 1]] = [re[i]!, im[i]!];
        const x = upload(p === 'f32' ? 'c64' : 'c128', p === 'f32' ? Float32Array.from(interleaved) : interleaved);
        for (const mode of ['full', 'valid'] as const) {
          plans.length = 0;
          const got = host(signal.fftconvolve(x, taps, { mode, batch }));
          // (xr + j·xi)(hr + j·hi) from the four real convolution sums.
          const [rr, ii, ri, ir] = [
            reference(held(p, re), batch, taps.re, mode),
            reference(held(p, im), batch, taps.im, mode),
            reference(held(p, re), batch, taps.im, mode),
            reference(held(p, im), batch, taps.re, mode),
          ];
          const want = new Float64Array(2 * rr.length);
          for (let i = 0; i < rr.length; i++) [want[2 * i], want[2 * i + 1]] = [rr[i]! - ii[i]!, ri[i]! + ir[i]!];
          expect(relErr(got, want), mode).toBeLessThan(TOL[p]);
          expect(plans.length).toBeGreaterThan(0);
          expect(plans.every((q) => q.kind === 'blocks')).toBe(true);
        }
      });
    }

    it('builds the taps spectrum once per taps, length and precision', () => {
      const x = upload('f32', Float32Array.from(random(batch * 300)));
      const taps = random(9);
      const tables = signal.signalWorkspace.tables(x.context);
      signal.fftconvolve(x, taps, { batch });
      const held = tables.size;
      signal.fftconvolve(x, taps, { batch, mode: 'full' });
      signal.oaconvolve(x, taps, { batch });
      expect(tables.size).toBe(held);
      signal.fftconvolve(x, random(9), { batch });
      // A new set of taps: its float64 table and its spectrum.
      expect(tables.size).toBe(held + 2);
    });
  },
);
