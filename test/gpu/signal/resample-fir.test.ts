/**
 * firwin2, correlate and oaconvolve against scipy.signal run on this host: firwin2's four filter
 * types, a step and fs; correlate in every mode by both methods and 'auto' (one 1-D scipy call per
 * series, taps longer than the series); oaconvolve in every mode (where scipy runs overlap-add
 * blocks and where it falls back to one FFT; on the GPU the whole length and overlap-save blocks). Relative L2: f64 1e-12 (design, direct), 1e-10 (FFT); f32 2e-6 / 1e-5.
 */
import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import {
  convolutionWindow,
  correlate,
  firwin2,
  fastLength,
  fftConvolutionPlan,
  oaconvolve,
  overlapAddBlocks,
  type RealBuffer,
} from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import {
  asHeld,
  gpuTestScope,
  deviceSeries,
  hostValues,
  randomSeries,
  relativeL2,
  scipy,
  scipyReference,
  type ScipyCase,
} from './scipy.js';

const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

describe.skipIf(!!skip)(
  `firwin2, correlate, oaconvolve vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 60_000 },
  () => {
    const { stream, keep } = gpuTestScope('resample-fir test', skip);

    it('firwin2 designs the taps scipy designs', async () => {
      const designs = [
        {
          id: 'type1',
          ours: firwin2(151, [0, 0.3, 0.3, 1], [1, 1, 0, 0]),
          args: [151, [0, 0.3, 0.3, 1], [1, 1, 0, 0]],
          kwargs: {},
        },
        {
          id: 'type2',
          ours: firwin2(64, [0, 0.2, 0.6, 1], [0.5, 1, 0.2, 0], { window: 'hann' }),
          args: [64, [0, 0.2, 0.6, 1], [0.5, 1, 0.2, 0]],
          kwargs: { window: 'hann' },
        },
        {
          id: 'type3',
          ours: firwin2(51, [0, 0.5, 1], [0, 1, 0], { antisymmetric: true }),
          args: [51, [0, 0.5, 1], [0, 1, 0]],
          kwargs: { antisymmetric: true },
        },
        {
          id: 'type4',
          ours: firwin2(50, [0, 0.5, 1], [0, 1, 1], { antisymmetric: true, nfreqs: 513 }),
          args: [50, [0, 0.5, 1], [0, 1, 1]],
          kwargs: { antisymmetric: true, nfreqs: 513 },
        },
        {
          id: 'fs',
          ours: firwin2(45, [0, 100, 200, 500], [1, 1, 0, 0], { fs: 1000, window: null }),
          args: [45, [0, 100, 200, 500], [1, 1, 0, 0]],
          kwargs: { fs: 1000, window: null },
        },
      ];
      const ref = await scipyReference(
        designs.map((d) => ({
          id: d.id,
          op: 'call',
          shape: [],
          params: { fn: 'firwin2', args: d.args, kwargs: d.kwargs },
        })),
      );
      for (const d of designs) expect(relativeL2(d.ours, ref.get(d.id)!.values), d.id).toBeLessThan(1e-12);
    });

    for (const p of ['f32', 'f64'] as const)
      it(`correlate (direct, fft, auto) and oaconvolve (${p}): every mode, taps longer than the series`, async () => {
        const batch = 3;
        const cases: ScipyCase[] = [];
        const ours = new Map<string, { y: RealBuffer; tol: number }>();
        const direct = p === 'f32' ? 2e-6 : 1e-12;
        const viaFft = p === 'f32' ? 1e-5 : 1e-10;
        for (const [length, ntaps] of [
          [3000, 31],
          [30_000, 31],
          [999, 200],
          [50, 301],
          [1, 5],
        ] as const) {
          const x64 = randomSeries(batch * length);
          const held = asHeld(p, x64);
          const x = keep(deviceSeries(p, x64));
          const taps = Array.from({ length: ntaps }, () => Math.random() - 0.5);
          for (const mode of ['full', 'same', 'valid'] as const) {
            const tag = `${length}-${ntaps}-${mode}`;
            for (const method of ['direct', 'fft', 'auto'] as const) {
              ours.set(`correlate-${method}-${tag}`, {
                y: keep(correlate(x, taps, { mode, method, batch, stream })),
                tol: method === 'direct' ? direct : viaFft,
              });
              for (let b = 0; b < batch; b++)
                cases.push({
                  id: `correlate-${method}-${tag}-${b}`,
                  op: 'call',
                  input: held.slice(b * length, (b + 1) * length),
                  shape: [length],
                  params: { fn: 'correlate', args: ['$x', taps], kwargs: { mode, method } },
                });
            }
            ours.set(`oaconvolve-${tag}`, { y: keep(oaconvolve(x, taps, { mode, batch, stream })), tol: viaFft });
            for (let b = 0; b < batch; b++)
              cases.push({
                id: `oaconvolve-${tag}-${b}`,
                op: 'call',
                input: held.slice(b * length, (b + 1) * length),
                shape: [length],
                params: { fn: 'oaconvolve', args: ['$x', taps], kwargs: { mode } },
              });
            expect(ours.get(`oaconvolve-${tag}`)!.y.length).toBe(
              batch * convolutionWindow(length, ntaps, mode).outLength,
            );
          }
        }
        expect(overlapAddBlocks(3000, 31), 'scipy runs the 3000 x 31 case by overlap-add blocks').toBeDefined();
        const w = convolutionWindow(30_000, 31, 'full');
        expect(
          fftConvolutionPlan(30_000, 31, w, p, batch, fastLength(w.fullLength)).kind,
          'the GPU runs the 30000 x 31 case by overlap-save blocks',
        ).toBe('blocks');
        await stream!.done();
        const ref = await scipyReference(cases);
        for (const [id, { y, tol }] of ours) {
          const rows = Array.from({ length: batch }, (_, b) => Array.from(ref.get(`${id}-${b}`)!.values));
          expect(relativeL2(hostValues(y), Float64Array.from(rows.flat())), id).toBeLessThan(tol);
        }
      });
  },
);
