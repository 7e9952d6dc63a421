/**
 * periodogram, csd and coherence run whole on the CPU (device buffers, cuFFT and the kernels
 * replaced by emulation/fake-runtime.ts) against scipy.signal run on this host, and resamplePoly,
 * decimate, resample and firwin2 with them: the options' mapping onto welch's segmenting (nfft
 * longer and shorter than the series), mean and median, one- and two-sided, and scipy's own
 * outputs for the resampling functions. Skipped, with the reason, where g++ or scipy is missing.
 */
import './emulation/emulate-runtime.js';
import { describe, expect, it } from 'vitest';
import { randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from '../../gpu/signal/scipy.js';
import { emulatedKernels, FakeDeviceBuffer } from './emulation/fake-runtime.js';

const signal = await import('../../../src/signal/index.js');

type P = 'f32' | 'f64';
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-10 };
const emu = emulatedKernels();
const skip = !emu.so ? emu.reason : !scipy.ok ? scipy.reason : '';
// The fakes stand in for DeviceBuffer: the casts below are the test's, not the library's.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const upload = (p: P, x: Float64Array): any => FakeDeviceBuffer.from(p, p === 'f32' ? Float32Array.from(x) : x);
const held = (p: P, x: Float64Array): Float64Array => (p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x);
const host = (b: unknown): Float64Array =>
  Float64Array.from((b as ReturnType<typeof FakeDeviceBuffer.alloc>).host as ArrayLike<number>);

describe.skipIf(!!skip)(
  `spectral and resampling orchestration vs scipy, emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 30_000 },
  () => {
    const batch = 2;
    // One scipy process for every case (its start-up is most of the time).
    it('periodogram, csd, coherence, resamplePoly, decimate, resample (f32, f64) and firwin2', async () => {
      const cases: ScipyCase[] = [];
      const ours = new Map<string, { values: Float64Array; tol: number }>();
      for (const p of ['f32', 'f64'] as const) {
        const n = 160;
        const x64 = randomSeries(batch * n);
        const y64 = x64.map((v) => 0.5 * v + Math.random() - 0.5);
        const [x, y] = [upload(p, x64), upload(p, y64)];
        const yRows = Array.from({ length: batch }, (_, b) => Array.from(held(p, y64).subarray(b * n, (b + 1) * n)));
        const add = (
          id: string,
          values: unknown,
          fn: string,
          args: unknown[],
          kwargs: Record<string, unknown>,
          result?: number,
        ): void => {
          ours.set(`${p}-${id}`, { values: host(values), tol: TOL[p] });
          cases.push({
            id: `${p}-${id}`,
            op: 'call',
            input: held(p, x64),
            shape: [batch, n],
            params: { fn, args, kwargs: { axis: -1, ...kwargs }, ...(result === undefined ? {} : { result }) },
          });
        };
        add('periodogram', signal.periodogram(x, { batch }).Pxx, 'periodogram', ['$x'], {}, 1);
        add(
          'periodogram-long',
          signal.periodogram(x, { batch, nfft: 170, fs: 4 }).Pxx,
          'periodogram',
          ['$x'],
          { nfft: 170, fs: 4 },
          1,
        );
        add(
          'periodogram-short',
          signal.periodogram(x, { batch, nfft: 101, window: 'hann', scaling: 'spectrum' }).Pxx,
          'periodogram',
          ['$x'],
          { nfft: 101, window: 'hann', scaling: 'spectrum' },
          1,
        );
        add(
          'periodogram-twosided',
          signal.periodogram(x, { batch, returnOnesided: false }).Pxx,
          'periodogram',
          ['$x'],
          { return_onesided: false },
          1,
        );
        add('csd-mean', signal.csd(x, y, { batch, nperseg: 40 }).Pxy, 'csd', ['$x', yRows], { nperseg: 40 }, 1);
        add(
          'csd-median',
          signal.csd(x, y, { batch, nperseg: 32, average: 'median' }).Pxy,
          'csd',
          ['$x', yRows],
          { nperseg: 32, average: 'median' },
          1,
        );
        add(
          'csd-twosided',
          signal.csd(x, y, { batch, nperseg: 30, nfft: 33, returnOnesided: false, detrend: 'linear' }).Pxy,
          'csd',
          ['$x', yRows],
          { nperseg: 30, nfft: 33, return_onesided: false, detrend: 'linear' },
          1,
        );
        add(
          'coherence',
          signal.coherence(x, y, { batch, nperseg: 32 }).Cxy,
          'coherence',
          ['$x', yRows],
          { nperseg: 32 },
          1,
        );
        add('poly-3-7', signal.resamplePoly(x, 3, 7, { batch }), 'resample_poly', ['$x', 3, 7], {});
        add('poly-5-2', signal.resamplePoly(x, 5, 2, { batch }), 'resample_poly', ['$x', 5, 2], {});
        for (const ftype of ['iir', 'fir'] as const)
          for (const zeroPhase of [true, false])
            add(
              `decimate-${ftype}-${zeroPhase}`,
              signal.decimate(x, 3, { batch, ftype, zeroPhase }),
              'decimate',
              ['$x', 3],
              { ftype, zero_phase: zeroPhase },
            );
        for (const num of [47, 160, 301, 80])
          add(`resample-${num}`, signal.resample(x, num, { batch }), 'resample', ['$x', num], {});
      }
      const firwin2 = signal.firwin2(75, [0, 0.2, 0.2, 0.5, 1], [1, 1, 0.3, 0.3, 0], { window: 'blackman' });
      ours.set('firwin2', { values: firwin2, tol: 1e-12 });
      cases.push({
        id: 'firwin2',
        op: 'call',
        shape: [],
        params: {
          fn: 'firwin2',
          args: [75, [0, 0.2, 0.2, 0.5, 1], [1, 1, 0.3, 0.3, 0]],
          kwargs: { window: 'blackman' },
        },
      });
      const ref = await scipyReference(cases);
      for (const [id, { values, tol }] of ours) expect(relativeL2(values, ref.get(id)!.values), id).toBeLessThan(tol);
    });
  },
);
