/**
 * src/signal stft and istft against scipy.signal on fresh random inputs, in float32 and float64,
 * over odd and even nperseg/nfft and every boundary/padded/scaling combination.
 */
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import {
  clearSignalCaches,
  detrend,
  istft,
  stft,
  stftGeometry,
  type StftOptions,
  type WindowSpec,
} from '../../../src/signal/index.js';
import { randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from './scipy.js';
import {
  TOL,
  skip,
  upload,
  seen,
  poisoned,
  readAll,
  istftConditioning,
  weighted,
  windowParam,
  suiteName,
} from './scipy-compare-fixture.js';

describe.skipIf(!!skip)(suiteName('stft and istft'), { timeout: 300_000 }, () => {
  afterAll(() => {
    if (!skip) clearSignalCaches();
  });

  const batch = 3;
  const n = 1001;
  const stftCases: StftOptions[] = [];
  let i = 0;
  for (const boundary of ['zeros', 'even', 'odd', 'constant', null] as const)
    for (const padded of [true, false])
      for (const scaling of ['spectrum', 'psd'] as const) {
        stftCases.push({
          boundary,
          padded,
          scaling,
          nperseg: i % 2 ? 63 : 64,
          noverlap: i % 3 === 0 ? undefined : 17,
          nfft: i % 4 === 1 ? 75 : i % 4 === 3 ? 128 : undefined,
          detrend: (['constant', 'linear', false] as const)[i % 3],
          returnOnesided: i % 5 !== 2,
          window: (['hann', ['tukey', 0.3], 'hamming', ['kaiser', 7], 'blackmanharris'] as WindowSpec[])[i % 5],
          fs: 100,
        });
        i++;
      }

  for (const p of ['f32', 'f64'] as const) {
    it(`stft then istft (${p}): every boundary x padded x scaling, odd and even nperseg/nfft`, async () => {
      using stream = new Stream({ label: `signal-scipy-${p}` });
      const x64 = randomSeries(batch * n);
      using x = upload(p, x64);
      const ref: ScipyCase[] = [];
      const zs: {
        Z: DeviceBuffer<'c64' | 'c128'>;
        f: Float64Array;
        t: Float64Array;
        freqs: number;
        frames: number;
      }[] = [];
      stftCases.forEach((o, c) => {
        const g = stftGeometry(n, o);
        const out = poisoned(p === 'f32' ? 'c64' : 'c128', batch * g.freqs * g.frames);
        const r = stft(x, { ...o, batch, stream, output: out as DeviceBuffer<'c64'> });
        expect(r.Zxx).toBe(out);
        zs.push({ Z: out, f: r.f, t: r.t, freqs: g.freqs, frames: g.frames });
        ref.push({
          id: `stft${c}`,
          op: 'stft',
          input: seen(p, x64),
          shape: [batch, n],
          params: {
            fs: o.fs,
            window: windowParam(o.window),
            nperseg: o.nperseg,
            noverlap: o.noverlap ?? null,
            nfft: o.nfft ?? null,
            detrend: o.detrend,
            return_onesided: o.returnOnesided,
            boundary: o.boundary,
            padded: o.padded,
            scaling: o.scaling,
          },
        });
      });
      await stream.done();
      const want = await scipyReference(ref);
      const inverse: ScipyCase[] = [];
      const inverted: { id: string; x: DeviceBuffer<Precision>; roundtrip: boolean; conditioning: Float64Array }[] = [];
      stftCases.forEach((o, c) => {
        const z = zs[c]!;
        const w = want.get(`stft${c}`)!;
        expect(w.shape).toEqual([batch, z.freqs, z.frames]);
        expect(relativeL2(z.f, w.f!)).toBeLessThanOrEqual(1e-14);
        expect(relativeL2(z.t, w.t!)).toBeLessThanOrEqual(1e-14);
        const err = relativeL2(readAll(z.Z), w.values);
        expect(err, `stft case ${c} ${JSON.stringify(o)}`).toBeLessThanOrEqual(TOL[p]);
        // istft of the GPU's Zxx; scipy inverts the same Zxx.
        const g = stftGeometry(n, o);
        const iopts = {
          fs: o.fs,
          window: o.window,
          nperseg: g.nperseg,
          noverlap: g.noverlap,
          nfft: g.nfft,
          inputOnesided: g.onesided,
          boundary: o.boundary !== null,
          scaling: o.scaling,
        };
        const r = istft(z.Z as DeviceBuffer<'c64'>, { ...iopts, frames: z.frames, batch, stream });
        inverted.push({
          id: `istft${c}`,
          x: r.x,
          roundtrip: o.detrend === false && o.boundary !== null && o.padded === true,
          conditioning: istftConditioning(o.window, g.nperseg, g.noverlap, z.frames, o.boundary !== null),
        });
        const zHost = readAll(z.Z);
        inverse.push({
          id: `istft${c}`,
          op: 'istft',
          input: zHost,
          complex: true,
          shape: [batch, z.freqs, z.frames],
          params: {
            fs: o.fs,
            window: windowParam(o.window),
            nperseg: g.nperseg,
            noverlap: g.noverlap,
            nfft: g.nfft,
            input_onesided: g.onesided,
            boundary: o.boundary !== null,
            scaling: o.scaling,
          },
        });
      });
      await stream.done();
      const back = await scipyReference(inverse);
      for (const { id, x: xb, roundtrip, conditioning } of inverted) {
        const w = back.get(id)!;
        const wantX = w.complex ? w.values.filter((_, k) => k % 2 === 0) : w.values;
        const got = readAll(xb);
        expect(got.length, `${id} length`).toBe(batch * conditioning.length);
        // Weighted by the inverse's conditioning (istftConditioning): plain relative L2 where the window's overlap-add is flat.
        expect(relativeL2(weighted(got, conditioning), weighted(wantX, conditioning)), id).toBeLessThanOrEqual(TOL[p]);
        if (roundtrip) {
          // exact inverse where NOLA holds: the first N samples of each series are x
          const len = got.length / batch;
          const head = new Float64Array(batch * n);
          for (let b = 0; b < batch; b++) head.set(got.subarray(b * len, b * len + n), b * n);
          expect(relativeL2(head, seen(p, x64)), `${id} round trip`).toBeLessThanOrEqual(TOL[p]);
        }
        xb.dispose();
      }
      for (const z of zs) z.Z.dispose();
    });
  }
});
