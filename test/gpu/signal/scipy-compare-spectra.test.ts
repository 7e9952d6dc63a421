/**
 * src/signal spectrogram, welch, detrend and getWindow against scipy.signal on fresh random
 * inputs, in float32 and float64.
 */
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import {
  clearSignalCaches,
  detrend,
  getWindow,
  spectrogram,
  welch,
  type SpectrogramOptions,
  type WelchOptions,
  type WindowSpec,
} from '../../../src/signal/index.js';
import { SPECTROGRAM_DEFAULTS, spectralGeometry } from '../../../src/signal/geometry.js';
import { randomSeries, relativeL2, scipy, scipyReference, wrappingPhaseSeries, type ScipyCase } from './scipy.js';
import { TOL, skip, upload, seen, poisoned, readAll, windowParam, suiteName } from './scipy-compare-fixture.js';

describe.skipIf(!!skip)(suiteName('spectrogram, welch, detrend, windows'), { timeout: 300_000 }, () => {
  afterAll(() => {
    if (!skip) clearSignalCaches();
  });

  const batch = 3;
  const n = 1001;

  for (const p of ['f32', 'f64'] as const) {
    it(`spectrogram and welch (${p})`, async () => {
      using stream = new Stream({ label: `signal-psd-${p}` });
      const x64 = randomSeries(batch * n);
      using x = upload(p, x64);
      const cases: (SpectrogramOptions & WelchOptions)[] = [
        {},
        { nperseg: 128 },
        { nperseg: 127, noverlap: 31, nfft: 150, detrend: 'linear', scaling: 'spectrum', fs: 30 },
        { nperseg: 100, returnOnesided: false, detrend: false, window: 'blackman' },
        { nperseg: 65, window: ['kaiser', 6], scaling: 'spectrum' },
      ];
      const ref: ScipyCase[] = [];
      const outs: DeviceBuffer<Precision>[] = [];
      cases.forEach((o, c) => {
        const s = spectrogram(x, { ...o, batch, stream });
        const w = welch(x, { ...o, batch, stream });
        outs.push(s.Sxx, w.Pxx);
        const params: Record<string, unknown> = {
          fs: o.fs ?? 1,
          nperseg: o.nperseg ?? null,
          noverlap: o.noverlap ?? null,
          nfft: o.nfft ?? null,
          return_onesided: o.returnOnesided ?? true,
          scaling: o.scaling ?? 'density',
        };
        if (o.window !== undefined) params.window = windowParam(o.window);
        if (o.detrend !== undefined) params.detrend = o.detrend;
        ref.push({ id: `spectrogram${c}`, op: 'spectrogram', input: seen(p, x64), shape: [batch, n], params });
        ref.push({ id: `welch${c}`, op: 'welch', input: seen(p, x64), shape: [batch, n], params });
      });
      await stream.done();
      const want = await scipyReference(ref);
      ref.forEach((c, k) => {
        expect(relativeL2(readAll(outs[k]!), want.get(c.id)!.values), c.id).toBeLessThanOrEqual(TOL[p]);
        outs[k]!.dispose();
      });
    });

    it(`spectrogram mode 'phase' (${p}) unwraps along frequency as scipy does, on a phase that wraps every few bins`, async () => {
      using stream = new Stream({ label: `signal-phase-${p}` });
      const nperseg = 48;
      const x64 = wrappingPhaseSeries(batch, 12, nperseg);
      const m = x64.length / batch;
      using x = upload(p, x64);
      const ref: ScipyCase[] = [];
      const outs: DeviceBuffer<'f32' | 'f64'>[] = [];
      for (const onesided of [true, false]) {
        const g = spectralGeometry(
          m,
          { nperseg, noverlap: 0, detrend: false, returnOnesided: onesided },
          SPECTROGRAM_DEFAULTS,
        );
        const out = poisoned(p, batch * g.freqs * g.frames);
        spectrogram(x, {
          nperseg,
          noverlap: 0,
          detrend: false,
          returnOnesided: onesided,
          mode: 'phase',
          batch,
          stream,
          output: out as DeviceBuffer<'f32'>,
        });
        outs.push(out);
        ref.push({
          id: `phase-${onesided}`,
          op: 'spectrogram',
          input: seen(p, x64),
          shape: [batch, m],
          params: { nperseg, noverlap: 0, detrend: false, return_onesided: onesided, mode: 'phase' },
        });
      }
      // Random noise too: the unwrap may take whole turns anywhere; f64 agrees exactly, f32 to a turn at a step near pi.
      const noise = randomSeries(batch * n);
      using xn = upload(p, noise);
      outs.push(
        spectrogram(xn, { nperseg: 36, noverlap: 12, fs: 3, mode: 'phase', batch, stream }).Sxx as DeviceBuffer<
          'f32' | 'f64'
        >,
      );
      ref.push({
        id: 'phase-noise',
        op: 'spectrogram',
        input: seen(p, noise),
        shape: [batch, n],
        params: { fs: 3, nperseg: 36, noverlap: 12, mode: 'phase' },
      });
      await stream.done();
      const want = await scipyReference(ref);
      ref.forEach((c, k) => {
        const got = readAll(outs[k]!);
        const w = want.get(c.id)!.values;
        if (c.id !== 'phase-noise') {
          // Many turns down a line along frequency: unwrapped along time it would stay within +-pi.
          expect(Math.min(...w), c.id).toBeLessThan(-8 * Math.PI);
          expect(relativeL2(got, w), c.id).toBeLessThanOrEqual(TOL[p]);
        } else if (p === 'f64') expect(relativeL2(got, w), c.id).toBeLessThanOrEqual(1e-10);
        else {
          // Each element is scipy's up to whole turns (cos and sin agree), as the f32 rounding may flip a step near pi.
          let worst = 0;
          for (let i = 0; i < w.length; i++)
            worst = Math.max(
              worst,
              Math.hypot(Math.cos(got[i]!) - Math.cos(w[i]!), Math.sin(got[i]!) - Math.sin(w[i]!)),
            );
          expect(worst, c.id).toBeLessThan(1e-3);
        }
        outs[k]!.dispose();
      });
    });

    it(`detrend (${p}) 'constant' and 'linear', in place and out of place`, async () => {
      using stream = new Stream({ label: `signal-detrend-${p}` });
      const m = 4097;
      const x64 = randomSeries(batch * m);
      using x = upload(p, x64);
      using out = poisoned(p, batch * m);
      detrend(x, 'constant', { batch, stream, output: out as DeviceBuffer<'f32'> });
      await stream.done();
      const gotConstant = readAll(out);
      detrend(x, 'linear', { batch, stream, output: x });
      await stream.done();
      const gotLinear = readAll(x);
      const want = await scipyReference([
        { id: 'c', op: 'detrend', input: seen(p, x64), shape: [batch, m], params: { type: 'constant' } },
        { id: 'l', op: 'detrend', input: seen(p, x64), shape: [batch, m], params: { type: 'linear' } },
      ]);
      expect(relativeL2(gotConstant, want.get('c')!.values)).toBeLessThanOrEqual(TOL[p]);
      // Linear residuals are O(1) while x carries an offset and trend: float32 rounding of x itself bounds this.
      expect(relativeL2(gotLinear, want.get('l')!.values)).toBeLessThanOrEqual(TOL[p]);
    });
  }

  it('getWindow matches scipy.signal.get_window (periodic and symmetric, odd and even n)', async () => {
    const specs: WindowSpec[] = [
      'hann',
      'hamming',
      'blackman',
      'blackmanharris',
      'bartlett',
      'boxcar',
      'flattop',
      'nuttall',
      'triang',
      'cosine',
      ['tukey', 0.25],
      ['kaiser', 14],
      ['gaussian', 40],
    ];
    const cases: ScipyCase[] = [];
    const ours: Float64Array[] = [];
    specs.forEach((s, k) => {
      for (const nn of [255, 256])
        for (const sym of [false, true]) {
          cases.push({
            id: `w${k}_${nn}_${sym}`,
            op: 'get_window',
            shape: [nn],
            params: { window: windowParam(s), n: nn, fftbins: !sym },
          });
          ours.push(getWindow(s, nn, { sym }));
        }
    });
    const want = await scipyReference(cases);
    cases.forEach((c, k) => expect(relativeL2(ours[k]!, want.get(c.id)!.values), c.id).toBeLessThanOrEqual(1e-14));
  });
});
