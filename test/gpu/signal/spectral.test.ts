/**
 * periodogram, csd and coherence against scipy.signal run on this host: a batch of series (pairs)
 * per call; periodogram with nfft absent, longer and shorter than the series, both scalings and
 * two-sided; csd by mean and median, one- and two-sided, odd nfft, linear detrend; coherence of
 * partly related series. y goes to scipy as an argument list. Relative L2: f64 1e-10, f32 1e-5.
 */
import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { coherence, csd, periodogram } from '../../../src/signal/index.js';
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
  `cross spectra vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 60_000 },
  () => {
    const { stream, keep } = gpuTestScope('spectral test', skip);
    const batch = 3;

    for (const p of ['f32', 'f64'] as const)
      it(`periodogram, csd, coherence (${p})`, async () => {
        const n = 2000;
        const tol = p === 'f32' ? 1e-5 : 1e-10;
        const x64 = randomSeries(batch * n);
        const noise = randomSeries(batch * n);
        const y64 = x64.map((v, i) => 0.7 * v + noise[i]!);
        const [x, y] = [keep(deviceSeries(p, x64)), keep(deviceSeries(p, y64))];
        const yRows = Array.from({ length: batch }, (_, b) => Array.from(asHeld(p, y64).subarray(b * n, (b + 1) * n)));
        const cases: ScipyCase[] = [];
        const ours = new Map<string, { values: DeviceBuffer<'f32' | 'f64' | 'c64' | 'c128'>; f: Float64Array }>();
        const add = (
          id: string,
          result: { f: Float64Array },
          values: DeviceBuffer<'f32' | 'f64' | 'c64' | 'c128'>,
          fn: string,
          args: unknown[],
          kwargs: Record<string, unknown>,
        ): void => {
          ours.set(id, { values: keep(values), f: result.f });
          cases.push({
            id,
            op: 'call',
            input: asHeld(p, x64),
            shape: [batch, n],
            params: { fn, args, kwargs: { axis: -1, ...kwargs }, result: 1 },
          });
          cases.push({
            id: `${id}-f`,
            op: 'call',
            input: asHeld(p, x64),
            shape: [batch, n],
            params: { fn, args, kwargs: { axis: -1, ...kwargs }, result: 0 },
          });
        };
        for (const [id, options, kwargs] of [
          ['default', {}, {}],
          ['nfft-long', { nfft: 2501, fs: 50 }, { nfft: 2501, fs: 50 }],
          ['nfft-short', { nfft: 1500, window: 'hann' }, { nfft: 1500, window: 'hann' }],
          [
            'spectrum-twosided',
            { scaling: 'spectrum', returnOnesided: false, detrend: 'linear' },
            { scaling: 'spectrum', return_onesided: false, detrend: 'linear' },
          ],
        ] as const) {
          const r = periodogram(x, { ...options, batch, stream });
          add(`periodogram-${id}`, r, r.Pxx, 'periodogram', ['$x'], kwargs);
        }
        for (const [id, options, kwargs] of [
          ['mean', { nperseg: 256 }, { nperseg: 256 }],
          ['median', { nperseg: 200, average: 'median' }, { nperseg: 200, average: 'median' }],
          [
            'twosided-odd',
            { nperseg: 128, nfft: 129, returnOnesided: false, detrend: 'linear', fs: 8 },
            { nperseg: 128, nfft: 129, return_onesided: false, detrend: 'linear', fs: 8 },
          ],
          [
            'spectrum-hamming',
            { nperseg: 300, noverlap: 100, window: 'hamming', scaling: 'spectrum' },
            { nperseg: 300, noverlap: 100, window: 'hamming', scaling: 'spectrum' },
          ],
        ] as const) {
          const r = csd(x, y, { ...options, batch, stream });
          add(`csd-${id}`, r, r.Pxy, 'csd', ['$x', yRows], kwargs);
        }
        for (const [id, options, kwargs] of [
          ['default', {}, {}],
          [
            'nperseg',
            { nperseg: 100, noverlap: 25, window: 'blackman' },
            { nperseg: 100, noverlap: 25, window: 'blackman' },
          ],
        ] as const) {
          const r = coherence(x, y, { ...options, batch, stream });
          add(`coherence-${id}`, r, r.Cxy, 'coherence', ['$x', yRows], kwargs);
        }
        await stream!.done();
        const ref = await scipyReference(cases);
        for (const [id, { values, f }] of ours) {
          expect(relativeL2(hostValues(values), ref.get(id)!.values), id).toBeLessThan(tol);
          expect(relativeL2(f, ref.get(`${id}-f`)!.values), `${id} f`).toBeLessThan(1e-12);
        }
      });

    it('refuses pairs that do not match and an unknown average, before GPU work', () => {
      const x = keep(deviceSeries('f64', randomSeries(512)));
      const y = keep(deviceSeries('f32', randomSeries(512)));
      const short = keep(deviceSeries('f64', randomSeries(500)));
      expect(() => csd(x, y)).toThrow(/same precision/);
      expect(() => csd(x, short)).toThrow(/different lengths/);
      expect(() => coherence(x, short)).toThrow(/different lengths/);
      expect(() => csd(x, x, { average: 'mode' as never })).toThrow(/average must be/);
    });
  },
);
