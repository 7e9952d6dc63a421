/**
 * src/kernels/signal.cu compiled for the CPU (g++, with include/cuda_runtime.h standing in for
 * CUDA) and driven the way src/signal drives it on the GPU, with a float64 DFT in place of cuFFT,
 * then compared with scipy. Each kernel runs once per emulated block (grid of 3, one thread each),
 * which checks the grid-stride loops and the indexing; the GPU tests check the real thing.
 * Skipped, with the reason, where g++ or python3 with scipy is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  detrendCode,
  psdScale,
  SPECTROGRAM_DEFAULTS,
  spectralGeometry,
  stftScale,
  WELCH_DEFAULTS,
  type SpectralGeometry,
} from '../../../src/signal/geometry.js';
import { istftGeometry } from '../../../src/signal/inverse-geometry.js';
import { stftGeometry, type StftOptions } from '../../../src/signal/stft.js';
import { cwtReference, bandMembers, morletGeometry } from '../../../src/signal/morlet.js';
import { getWindow } from '../../../src/signal/window.js';
import { randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from '../../gpu/signal/scipy.js';
import {
  arr,
  cdftRows,
  emu,
  framesSpectra,
  irfftRows,
  launch,
  loadEmulatedKernels,
  rfftRows,
  typed,
  type Arr,
  type P,
} from './emulation/emulator.js';

const skipReason = !emu.so ? emu.reason : !scipy.ok ? scipy.reason : '';

const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };

describe.skipIf(!!skipReason)(
  `signal kernels emulated on the CPU vs scipy${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  { timeout: 120_000 },
  () => {
    beforeAll(loadEmulatedKernels);

    const batch = 2;
    const stftCases: StftOptions[] = [];
    const boundaries = ['zeros', 'even', 'odd', 'constant', null] as const;
    let i = 0;
    for (const boundary of boundaries)
      for (const padded of [true, false])
        for (const scaling of ['spectrum', 'psd'] as const) {
          const nperseg = i % 2 ? 15 : 16;
          stftCases.push({
            boundary,
            padded,
            scaling,
            nperseg,
            noverlap: i % 3 === 0 ? undefined : 5,
            nfft: i % 4 === 1 ? 21 : undefined,
            detrend: (['constant', 'linear', false] as const)[i % 3],
            returnOnesided: i % 5 !== 2,
            window: i % 2 ? ['tukey', 0.3] : 'hann',
            fs: 2.5,
          });
          i++;
        }

    for (const p of ['f32', 'f64'] as const) {
      it(`stft, istft (${p}) over every boundary/padded/scaling`, async () => {
        const n = 117;
        const x64 = randomSeries(batch * n);
        const x = typed(p, x64);
        const ref: ScipyCase[] = [];
        const ours = new Map<string, { Z: Arr; g: SpectralGeometry }>();
        stftCases.forEach((o, c) => {
          const g = stftGeometry(n, o);
          const half = framesSpectra(p, x, batch, g);
          const total = batch * g.freqs * g.frames;
          const Z = arr(p, 2 * total);
          launch(`arrange_stft_${p}`, half, Z, batch, g.frames, g.halfBins, g.freqs, g.nfft, stftScale(g, o.scaling!));
          ours.set(`s${c}`, { Z, g });
          const params: Record<string, unknown> = {
            fs: o.fs,
            window: o.window,
            nperseg: o.nperseg,
            noverlap: o.noverlap ?? null,
            nfft: o.nfft ?? null,
            detrend: o.detrend,
            return_onesided: o.returnOnesided,
            boundary: o.boundary,
            padded: o.padded,
            scaling: o.scaling,
          };
          ref.push({ id: `s${c}`, op: 'stft', input: Float64Array.from(x), shape: [batch, n], params });
        });
        const got = await scipyReference(ref);
        const inverse: ScipyCase[] = [];
        const oursInv = new Map<string, Arr>();
        stftCases.forEach((o, c) => {
          const { Z, g } = ours.get(`s${c}`)!;
          const r = got.get(`s${c}`)!;
          expect(r.shape).toEqual([batch, g.freqs, g.frames]);
          expect(relativeL2(Z, r.values), `stft case ${c} ${JSON.stringify(o)}`).toBeLessThanOrEqual(TOL[p]);
          // istft of our Zxx, compared with scipy's istft of the same Zxx.
          if (o.boundary === null || !o.padded) return;
          const ig = istftGeometry(g.freqs, g.frames, {
            fs: o.fs,
            window: o.window,
            nperseg: g.nperseg,
            noverlap: g.noverlap,
            nfft: g.nfft,
            inputOnesided: g.onesided,
            boundary: true,
            scaling: o.scaling,
          });
          const rowBins = ig.onesided ? Math.floor(ig.nfft / 2) + 1 : ig.nfft;
          const rows = batch * g.frames;
          const spectra = arr(p, 2 * rows * rowBins);
          launch(`arrange_istft_${p}`, Z, spectra, batch, g.frames, g.freqs, rowBins, ig.nfft, ig.onesided ? 1 : 0);
          const out = arr(p, batch * ig.outputLength);
          const win = typed(p, ig.window);
          if (ig.onesided)
            launch(
              `overlap_add_${p}`,
              irfftRows(p, spectra, rows, ig.nfft),
              out,
              win,
              batch,
              g.frames,
              ig.nperseg,
              ig.hop,
              ig.nfft,
              1,
              ig.trim,
              ig.outputLength,
              ig.frameGain,
            );
          else
            launch(
              `overlap_add_${p}`,
              cdftRows(p, spectra, rows, ig.nfft, 1),
              out,
              win,
              batch,
              g.frames,
              ig.nperseg,
              ig.hop,
              2 * ig.nfft,
              2,
              ig.trim,
              ig.outputLength,
              ig.frameGain,
            );
          oursInv.set(`i${c}`, out);
          inverse.push({
            id: `i${c}`,
            op: 'istft',
            input: Float64Array.from(Z),
            complex: true,
            shape: [batch, g.freqs, g.frames],
            params: {
              fs: o.fs,
              window: o.window,
              nperseg: g.nperseg,
              noverlap: g.noverlap,
              nfft: g.nfft,
              input_onesided: g.onesided,
              boundary: true,
              scaling: o.scaling,
            },
          });
        });
        const inv = await scipyReference(inverse);
        for (const [id, out] of oursInv) {
          const r = inv.get(id)!;
          // scipy returns a complex signal for two-sided input: its real part is the signal.
          const want = r.complex ? r.values.filter((_, k) => k % 2 === 0) : r.values;
          // scipy keeps the padding at the end; ours too (outputLength): compare all of it.
          expect(relativeL2(out, want), `istft ${id}`).toBeLessThanOrEqual(TOL[p]);
          // and the round trip gives x back where no detrend was applied
          const c = Number(id.slice(1));
          if (stftCases[c]!.detrend === false) {
            const n0 = 117;
            const back = new Float64Array(batch * n0);
            const len = out.length / batch;
            for (let b = 0; b < batch; b++) for (let t = 0; t < n0; t++) back[b * n0 + t] = out[b * len + t]!;
            expect(relativeL2(back, Float64Array.from(x)), `roundtrip ${id}`).toBeLessThanOrEqual(TOL[p] * 10);
          }
        }
      });

      it(`spectrogram and welch (${p})`, async () => {
        const n = 300;
        const x = typed(p, randomSeries(batch * n));
        const cases = [
          { nperseg: 32 },
          { nperseg: 31, noverlap: 10, nfft: 40, detrend: 'linear' as const, scaling: 'spectrum' as const },
          { nperseg: 20, returnOnesided: false, detrend: false as const, window: 'blackman' },
          { fs: 3, window: ['kaiser', 6] as const },
        ];
        const ref: ScipyCase[] = [];
        const ours: Arr[] = [];
        cases.forEach((o, c) => {
          for (const op of ['spectrogram', 'welch'] as const) {
            const g = spectralGeometry(n, o, op === 'welch' ? WELCH_DEFAULTS : SPECTROGRAM_DEFAULTS);
            const half = framesSpectra(p, x, batch, g);
            const scale = psdScale(g, o.scaling ?? 'density');
            let out: Arr;
            if (op === 'spectrogram') {
              out = arr(p, batch * g.freqs * g.frames);
              launch(
                `arrange_psd_${p}`,
                half,
                out,
                batch,
                g.frames,
                g.halfBins,
                g.freqs,
                g.nfft,
                g.onesided ? 1 : 0,
                scale,
              );
            } else {
              out = arr(p, batch * g.freqs);
              launch(
                `welch_mean_${p}`,
                half,
                out,
                batch,
                g.frames,
                g.halfBins,
                g.freqs,
                g.nfft,
                g.onesided ? 1 : 0,
                scale,
              );
            }
            ours.push(out);
            const params: Record<string, unknown> = {
              fs: o.fs ?? 1,
              nperseg: o.nperseg ?? null,
              noverlap: o.noverlap ?? null,
              nfft: o.nfft ?? null,
              return_onesided: o.returnOnesided ?? true,
              scaling: o.scaling ?? 'density',
            };
            if (o.window !== undefined) params.window = o.window;
            if (o.detrend !== undefined) params.detrend = o.detrend;
            ref.push({ id: `${op}${c}`, op, input: Float64Array.from(x), shape: [batch, n], params });
          }
        });
        const got = await scipyReference(ref);
        ref.forEach((c, k) => expect(relativeL2(ours[k]!, got.get(c.id)!.values), c.id).toBeLessThanOrEqual(TOL[p]));
      });

      it(`whole-series detrend and window (${p})`, async () => {
        const n = 1001;
        const x = typed(p, randomSeries(batch * n));
        const ref: ScipyCase[] = [];
        const ours: Arr[] = [];
        for (const type of ['constant', 'linear'] as const) {
          const stats = new Float64Array(2 * batch);
          launch(`series_stats_${p}`, x, stats, n, batch, 64);
          const out = arr(p, batch * n);
          launch(`detrend_window_${p}`, x, out, stats, x, n, batch, detrendCode(type), 0, 16);
          ours.push(out);
          ref.push({ id: type, op: 'detrend', input: Float64Array.from(x), shape: [batch, n], params: { type } });
        }
        const got = await scipyReference(ref);
        // detrended values are small next to x: compare relative to x's scale
        ref.forEach((c, k) => {
          const want = got.get(c.id)!.values;
          expect(relativeL2(ours[k]!, want), c.id).toBeLessThanOrEqual(p === 'f32' ? 1e-5 : 1e-12);
        });
        // with a window: (x - trend) * w
        const stats = new Float64Array(2 * batch);
        launch(`series_stats_${p}`, x, stats, n, batch, 100);
        const w = getWindow('hann', n);
        const out = arr(p, batch * n);
        launch(`detrend_window_${p}`, x, out, stats, typed(p, w), n, batch, detrendCode('linear'), 1, 16);
        const lin = got.get('linear')!.values;
        expect(
          relativeL2(
            out,
            lin.map((v, i) => v * w[i % n]!),
          ),
        ).toBeLessThanOrEqual(TOL[p]);
      });
    }

    it('cwt (f64, f32): pad, multiply by the wavelet table, inverse, power and band power vs direct convolution', () => {
      for (const p of ['f64', 'f32'] as const) {
        const n = 150;
        const fs = 50;
        const x = typed(p, randomSeries(batch * n));
        const g = morletGeometry(n, { fs, freqs: [2, 5.5, 11, 25], nCycles: 5 });
        const L = g.paddedLength;
        const nf = g.freqs.length;
        const table = arr(p, 2 * nf * L);
        launch(`morlet_table_${p}`, table, g.params, nf, L);
        const tableSpectra = cdftRows(p, table, nf, L, -1);
        const padded = arr(p, batch * L);
        launch(`pad_rows_${p}`, x, padded, batch, n, L);
        const half = rfftRows(p, padded, batch, L);
        const work = arr(p, 2 * batch * nf * L);
        launch(`cwt_multiply_${p}`, half, tableSpectra, work, batch, nf, L);
        const inv = cdftRows(p, work, batch * nf, L, 1);
        const y = arr(p, 2 * batch * nf * n);
        launch(`cwt_complex_${p}`, inv, y, batch * nf, n, L, 1 / L);
        const pw = arr(p, batch * nf * n);
        launch(`cwt_power_${p}`, inv, pw, batch * nf, n, L, 1 / (L * L));
        const bands = [
          [1, 6],
          [10, 25],
        ] as const;
        const csr = bandMembers(g.freqs, bands);
        const bp = arr(p, batch * bands.length * n);
        launch(`cwt_band_power_${p}`, inv, bp, csr.offsets, csr.members, batch, nf, bands.length, n, L, 1 / (L * L));
        const want = new Float64Array(2 * batch * nf * n);
        for (let b = 0; b < batch; b++) want.set(cwtReference(x.subarray(b * n, (b + 1) * n), g), 2 * b * nf * n);
        expect(relativeL2(y, want)).toBeLessThanOrEqual(TOL[p]);
        const wantPw = new Float64Array(batch * nf * n).map((_, i) => want[2 * i]! ** 2 + want[2 * i + 1]! ** 2);
        expect(relativeL2(pw, wantPw)).toBeLessThanOrEqual(TOL[p]);
        const wantBp = new Float64Array(batch * 2 * n);
        for (let b = 0; b < batch; b++)
          for (let t = 0; t < n; t++) {
            wantBp[(b * 2 + 0) * n + t] = wantPw[(b * nf + 0) * n + t]! + wantPw[(b * nf + 1) * n + t]!;
            wantBp[(b * 2 + 1) * n + t] = wantPw[(b * nf + 2) * n + t]! + wantPw[(b * nf + 3) * n + t]!;
          }
        expect(relativeL2(bp, wantBp)).toBeLessThanOrEqual(TOL[p]);
      }
    });

    it('band mask, magnitude, band powers, dominant (f64)', () => {
      const n = 64;
      const h = n / 2 + 1;
      const k0 = 9;
      const x = new Float64Array(batch * n);
      for (let b = 0; b < batch; b++)
        for (let t = 0; t < n; t++)
          x[b * n + t] =
            (1 + b) * Math.cos((2 * Math.PI * (k0 + b) * t) / n + 0.4) + 0.3 * Math.cos((2 * Math.PI * 3 * t) / n);
      const spec = rfftRows('f64', x, batch, n) as Float64Array;
      const masked = new Float64Array(2 * batch * h).fill(Number.NaN);
      launch('band_mask_f64', spec, masked, batch, h, 5, 20, 0.5);
      for (let b = 0; b < batch; b++)
        for (let k = 0; k < h; k++) {
          const keep = k >= 5 && k <= 20 ? 0.5 : 0;
          expect(masked[2 * (b * h + k)]).toBe(keep ? spec[2 * (b * h + k)]! * keep : 0);
          expect(masked[2 * (b * h + k) + 1]).toBe(keep ? spec[2 * (b * h + k) + 1]! * keep : 0);
        }
      const mag = new Float64Array(batch * 10).fill(Number.NaN);
      launch('magnitude_f64', spec, mag, batch, h, 10, 2);
      expect(mag[9]).toBeCloseTo(2 * Math.hypot(spec[18]!, spec[19]!), 12);
      const ranges = Int32Array.from([0, 32, 9, 9, 3, 3]);
      const powers = new Float64Array(batch * 3).fill(Number.NaN);
      launch('band_powers_f64', spec, powers, ranges, batch, h, n, 3);
      for (let b = 0; b < batch; b++) {
        let ms = 0;
        for (let t = 0; t < n; t++) ms += x[b * n + t]! ** 2 / n;
        expect(powers[3 * b]! / ms).toBeCloseTo(1, 12);
        expect(powers[3 * b + 2]).toBeCloseTo(0.045, 12);
      }
      expect(powers[1]).toBeCloseTo(0.5, 12);
      // The two-phase search as dominantCycleDevice drives it, with chunks of 8 bins so the strongest
      // bin of each row sits in a later chunk than the first.
      const dominant = (lo: number, hi: number, spectrum: Float64Array): Float64Array => {
        const chunk = 8;
        const chunks = hi >= lo ? Math.ceil((hi - lo + 1) / chunk) : 0;
        const partial = new Float64Array(2 * batch * Math.max(1, chunks)).fill(Number.NaN);
        if (chunks > 0) launch('dominant_chunks_f64', spectrum, partial, batch, h, lo, hi, chunk, chunks);
        const dom = new Float64Array(4 * batch).fill(Number.NaN);
        launch('dominant_f64', spectrum, partial, dom, batch, h, lo, hi, chunks);
        return dom;
      };
      const dom = dominant(1, 32, spec);
      expect([dom[0], dom[4]]).toEqual([k0, k0 + 1]);
      expect([dom[1], dom[2]]).toEqual([spec[2 * k0], spec[2 * k0 + 1]]);
      expect(dom[3]).toBeCloseTo(spec[2 * k0]! ** 2 + spec[2 * k0 + 1]! ** 2, 9);
      // Ties go to the lowest bin, across chunks too; an empty range gives bin -1.
      const flat = new Float64Array(2 * batch * h).fill(1);
      expect(dominant(3, 30, flat)[0]).toBe(3);
      expect(Array.from(dominant(20, 10, spec).subarray(0, 4))).toEqual([-1, 0, 0, 0]);
    });
  },
);
