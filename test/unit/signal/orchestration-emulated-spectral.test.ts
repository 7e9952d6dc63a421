// src/signal's stft, istft, spectrogram, welch and detrend run on the CPU (device buffers, cuFFT and
// the kernels replaced by emulation/, the kernels being signal.cu compiled by g++) against scipy:
// the orchestration (argument order, sizes, scratch and plan use) before the GPU suite runs the real
// thing. Skipped, with the reason, where g++ or python3 with scipy is missing.
import './emulation/emulate-runtime.js';
import { describe, expect, it } from 'vitest';
import { randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from '../../gpu/signal/scipy.js';
import { TOL, skip, Buf, upload, seen, host, asDevice } from './emulation/orchestration-fixture.js';

const signal = await import('../../../src/signal/index.js');

describe.skipIf(!!skip)(
  `src/signal orchestration, emulated on the CPU: stft, istft, spectrogram, welch, detrend${skip ? ` (skipped: ${skip})` : ''}`,
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
    }
  },
);
