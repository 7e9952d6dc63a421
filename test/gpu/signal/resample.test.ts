/**
 * upfirdn, resamplePoly, decimate and resample against scipy.signal run on this host: a batch of
 * series per call, rates up and down, odd and even lengths, taps longer than the series, series
 * long enough for several tiles of the tiled polyphase kernel (4999) and taps too long for a tile
 * (the untiled kernel, upfirdn-tiling.ts), both
 * decimate filter types with and without zero phase, Fourier resampling up and down (even and odd
 * lengths: the Nyquist bin joined and split); fresh random inputs, NaN-poisoned outputs.
 * Relative L2: f64 1e-12 (direct sums), 1e-10 (IIR, FFT); f32 2e-6 / 1e-5.
 */
import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import {
  decimate,
  decimateLength,
  resample,
  resamplePoly,
  resamplePolyLength,
  upfirdn,
  upfirdnLength,
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
  `resampling vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 60_000 },
  () => {
    const { stream, keep } = gpuTestScope('resample test', skip);
    const poisoned = (p: 'f32' | 'f64', n: number): RealBuffer =>
      keep(deviceSeries(p, new Float64Array(n).fill(Number.NaN)));
    const batch = 3;

    for (const p of ['f32', 'f64'] as const)
      it(`upfirdn, resamplePoly, decimate, resample (${p})`, async () => {
        const cases: ScipyCase[] = [];
        const ours = new Map<string, { y: RealBuffer; tol: number }>();
        const direct = p === 'f32' ? 2e-6 : 1e-12;
        const viaFft = p === 'f32' ? 1e-5 : 1e-10;
        for (const n of [1000, 999, 40, 4999]) {
          const x64 = randomSeries(batch * n);
          const x = keep(deviceSeries(p, x64));
          const input = { input: asHeld(p, x64), shape: [batch, n] };
          const add = (
            id: string,
            y: RealBuffer,
            tol: number,
            fn: string,
            args: unknown[],
            kwargs: Record<string, unknown>,
          ): void => {
            ours.set(id, { y, tol });
            cases.push({ id, op: 'call', ...input, params: { fn, args, kwargs: { axis: -1, ...kwargs } } });
          };
          for (const [up, down, ntaps] of [
            [3, 7, 31],
            [2, 1, 64],
            [1, 3, 5],
            [2, 3, 12500], // 6250 taps a phase: more samples than a tile's shared memory holds
          ] as const) {
            const taps = Array.from({ length: ntaps }, () => Math.random() - 0.5);
            const id = `upfirdn-${n}-${up}-${down}`;
            add(
              id,
              upfirdn(taps, x, up, down, {
                batch,
                stream,
                output: poisoned(p, batch * upfirdnLength(ntaps, n, up, down)),
              }),
              direct,
              'upfirdn',
              [taps, '$x', up, down],
              {},
            );
          }
          for (const [up, down] of [
            [3, 7],
            [7, 3],
            [4, 6],
            [5, 5],
          ] as const)
            add(
              `poly-${n}-${up}-${down}`,
              resamplePoly(x, up, down, {
                batch,
                stream,
                output: poisoned(p, batch * resamplePolyLength(n, up, down)),
              }),
              direct,
              'resample_poly',
              ['$x', up, down],
              {},
            );
          add(
            `poly-hamming-${n}`,
            resamplePoly(x, 2, 3, { batch, stream, window: 'hamming' }),
            direct,
            'resample_poly',
            ['$x', 2, 3],
            { window: 'hamming' },
          );
          for (const q of [2, 5])
            for (const ftype of ['iir', 'fir'] as const)
              for (const zeroPhase of [true, false]) {
                if (n === 40 && ftype === 'iir' && zeroPhase) continue; // shorter than sosfiltfilt's padding: refused, as scipy
                const y = decimate(x, q, {
                  ftype,
                  zeroPhase,
                  batch,
                  stream,
                  output: poisoned(p, batch * decimateLength(n, q)),
                });
                add(
                  `decimate-${n}-${q}-${ftype}-${zeroPhase}`,
                  y,
                  ftype === 'iir' ? viaFft : direct,
                  'decimate',
                  ['$x', q],
                  { ftype, zero_phase: zeroPhase },
                );
              }
          for (const num of [n * 2, Math.floor(n / 3), n + 1, 7])
            add(
              `resample-${n}-${num}`,
              resample(x, num, { batch, stream, output: poisoned(p, batch * num) }),
              viaFft,
              'resample',
              ['$x', num],
              {},
            );
        }
        await stream!.done();
        const ref = await scipyReference(cases);
        for (const [id, { y, tol }] of ours)
          expect(relativeL2(hostValues(y), ref.get(id)!.values), id).toBeLessThan(tol);
      });

    it('refuses bad rates and lengths before GPU work, naming them', () => {
      const x = keep(deviceSeries('f64', randomSeries(60)));
      expect(() => upfirdn([1], x, 1.5, 1)).toThrow(/up must be a positive integer/);
      expect(() => resamplePoly(x, 2, 0)).toThrow(/down must be a positive integer/);
      expect(() => resamplePoly(x, 2, 3, { padtype: 'mean' as never })).toThrow(/padtype/);
      expect(() => decimate(x, 2.5)).toThrow(/q must be a positive integer/);
      expect(() => decimate(x, 2, { batch: 3 })).toThrow(/padlen|greater than/);
      expect(() => resample(x, 0)).toThrow(/num must be a positive integer/);
      expect(() => resample(x, 30, { window: 'hann' } as never)).toThrow(/window argument is not supported/);
      expect(() => upfirdn([], x)).toThrow(/zero-length/);
    });
  },
);
