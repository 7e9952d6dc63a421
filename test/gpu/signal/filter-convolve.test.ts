/**
 * convolve, fftconvolve and oaconvolve against scipy.signal.convolve / fftconvolve run on this
 * host: one set of taps against a batch of series, every mode, both methods, taps longer than the
 * series, a series of one sample, and series long enough for the overlap-save blocks
 * (fft-convolution.ts: several blocks per series, a partial last one; the cases assert that path);
 * fresh random inputs, NaN-poisoned outputs. Relative L2: 1e-12 (f64 direct), 1e-11 (f64 FFT),
 * 1e-5 (f32: cuFFT in float32 on the FFT path).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import {
  clearSignalCaches,
  convolve,
  convolutionWindow,
  fastLength,
  fftConvolutionPlan,
  fftconvolve,
  oaconvolve,
  type RealBuffer,
} from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import { randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from './scipy.js';

type P = Precision;
const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

describe.skipIf(!!skip)(
  `convolution vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 60_000 },
  () => {
    const stream = skip ? undefined : new Stream({ label: 'convolve test' });
    const made: DeviceBuffer<P>[] = [];
    afterAll(async () => {
      if (skip) return;
      await stream!.done();
      for (const b of made) if (!b.disposed) b.dispose();
      clearSignalCaches();
      stream!.dispose();
    });

    for (const p of ['f32', 'f64'] as const)
      it(`convolve (direct, fft), fftconvolve, oaconvolve (${p}): every mode, taps longer than the series, blocks`, async () => {
        const batch = 3;
        const cases: ScipyCase[] = [];
        const ours = new Map<string, { y: RealBuffer; tol: number }>();
        for (const [length, ntaps] of [
          [1000, 31],
          [999, 200],
          [50, 301],
          [1, 5],
          // Overlap-save blocks in both precisions (asserted below): many short taps, and taps long against the block.
          [100_003, 101],
          [30_001, 2000],
        ] as const) {
          const x64 = randomSeries(batch * length);
          const seen = p === 'f32' ? Float64Array.from(Float32Array.from(x64)) : x64;
          const x = p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(x64)) : DeviceBuffer.from('f64', x64);
          made.push(x);
          const taps = Array.from({ length: ntaps }, () => Math.random() - 0.5);
          for (const mode of ['full', 'same', 'valid'] as const) {
            const rows = batch * convolutionWindow(length, ntaps, mode).outLength;
            const poisoned = (): RealBuffer => {
              const b =
                p === 'f32'
                  ? DeviceBuffer.from('f32', new Float32Array(rows).fill(Number.NaN))
                  : DeviceBuffer.from('f64', new Float64Array(rows).fill(Number.NaN));
              made.push(b);
              return b;
            };
            const tag = `${length}-${ntaps}-${mode}`;
            const window = convolutionWindow(length, ntaps, mode);
            const plan = fftConvolutionPlan(length, ntaps, window, p, batch, fastLength(window.fullLength));
            if (length > 10_000) {
              expect(plan.kind, tag).toBe('blocks');
              if (plan.kind === 'blocks') expect(plan.blocks, tag).toBeGreaterThan(1);
            }
            ours.set(`direct-${tag}`, {
              y: convolve(x, taps, { mode, method: 'direct', batch, stream, output: poisoned() }),
              tol: p === 'f32' ? 1e-6 : 1e-12,
            });
            ours.set(`fft-${tag}`, {
              y: fftconvolve(x, taps, { mode, batch, stream, output: poisoned() }),
              tol: p === 'f32' ? 1e-5 : 1e-11,
            });
            // oaconvolve computes the same convolution (scipy's own oaconvolve equals its fftconvolve to rounding).
            ours.set(`oa-${tag}`, {
              y: oaconvolve(x, taps, { mode, batch, stream, output: poisoned() }),
              tol: p === 'f32' ? 1e-5 : 1e-11,
            });
            // One 1-D scipy call per series (scipy swaps the inputs for 'valid' when the taps are longer, as 1-D only).
            for (const [kind, fn] of [
              ['direct', 'convolve'],
              ['fft', 'fftconvolve'],
              ['oa', 'oaconvolve'],
            ] as const)
              for (let b = 0; b < batch; b++)
                cases.push({
                  id: `${kind}-${tag}-${b}`,
                  op: 'call',
                  input: seen.slice(b * length, (b + 1) * length),
                  shape: [length],
                  params: { fn, args: ['$x', taps], kwargs: fn === 'convolve' ? { mode, method: 'direct' } : { mode } },
                });
          }
        }
        await stream!.done();
        const ref = await scipyReference(cases);
        for (const [id, { y, tol }] of ours) {
          const host = p === 'f32' ? new Float32Array(y.length) : new Float64Array(y.length);
          (y as DeviceBuffer<'f32'>).read(host as Float32Array);
          const rows = Array.from({ length: batch }, (_, b) => Array.from(ref.get(`${id}-${b}`)!.values));
          expect(relativeL2(Float64Array.from(host), Float64Array.from(rows.flat())), id).toBeLessThan(tol);
        }
      });
  },
);
