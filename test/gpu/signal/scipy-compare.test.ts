/**
 * src/signal against scipy.signal on fresh random inputs: stft, istft, spectrogram, welch, detrend
 * and getWindow, in float32 and float64, over odd and even nperseg/nfft and every
 * boundary/padded/scaling combination. Relative L2 <= 1e-5 (f32) / 1e-12 (f64). Outputs are
 * written into NaN-poisoned buffers, so an element the GPU skips fails the comparison.
 */
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import {
  clearSignalCaches,
  detrend,
  getWindow,
  istft,
  spectrogram,
  stft,
  stftGeometry,
  welch,
  type StftOptions,
  type SpectrogramOptions,
  type WelchOptions,
  type WindowSpec,
} from '../../../src/signal/index.js';
import { SPECTROGRAM_DEFAULTS, spectralGeometry } from '../../../src/signal/geometry.js';
import { gpu } from '../gpu-available.js';
import { randomSeries, relativeL2, scipy, scipyReference, wrappingPhaseSeries, type ScipyCase } from './scipy.js';

type P = Precision;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };
const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

function upload(p: P, x: Float64Array): DeviceBuffer<'f32'> | DeviceBuffer<'f64'> {
  return p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(x)) : DeviceBuffer.from('f64', x);
}

/** The values the GPU sees, as float64 (f32 inputs rounded). */
function seen(p: P, x: Float64Array): Float64Array {
  return p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x;
}

function poisoned<T extends Precision | 'c64' | 'c128'>(dtype: T, length: number): DeviceBuffer<T> {
  const n = dtype === 'c64' || dtype === 'c128' ? 2 * length : length;
  const host =
    dtype === 'f32' || dtype === 'c64' ? new Float32Array(n).fill(Number.NaN) : new Float64Array(n).fill(Number.NaN);
  return DeviceBuffer.from(dtype, host as never);
}

function readAll(b: DeviceBuffer<Precision | 'c64' | 'c128'>): Float64Array {
  const n = b.dtype === 'c64' || b.dtype === 'c128' ? 2 * b.length : b.length;
  const host = b.dtype === 'f32' || b.dtype === 'c64' ? new Float32Array(n) : new Float64Array(n);
  (b as DeviceBuffer<'f32'>).read(host as Float32Array);
  return Float64Array.from(host);
}

/**
 * Per-sample conditioning of istft's overlap-add inverse, sum(w^2) / sum(|w|) over the frames
 * covering each output sample: a rounding error e in a frame's inverse FFT reaches x[t] as about
 * e * sum(|w|) / sum(w^2). Where the window nearly vanishes (blackmanharris edges without
 * boundary extension) that gain is 10^4, so a float32 inverse is as exact as its input allows
 * only in this weighted norm; weighting each sample's error by the inverse gain compares it on
 * the precision it can have. Samples no frame covers with weight (sum < 1e-10, which scipy
 * leaves unnormalized) get weight 0.
 */
function istftConditioning(
  window: WindowSpec | undefined,
  nperseg: number,
  noverlap: number,
  frames: number,
  boundary: boolean,
): Float64Array {
  const w = getWindow(window ?? 'hann', nperseg);
  const hop = nperseg - noverlap;
  const full = nperseg + (frames - 1) * hop;
  const sq = new Float64Array(full);
  const abs = new Float64Array(full);
  for (let f = 0; f < frames; f++)
    for (let j = 0; j < nperseg; j++) {
      sq[f * hop + j]! += w[j]! * w[j]!;
      abs[f * hop + j]! += Math.abs(w[j]!);
    }
  const c = sq.map((v, t) => (v > 1e-10 ? v / abs[t]! : 0));
  const trim = boundary ? Math.floor(nperseg / 2) : 0;
  return c.subarray(trim, full - trim);
}

/** Multiplies each series (rows of `weights.length`) by the weights. */
function weighted(x: Float64Array, weights: Float64Array): Float64Array {
  return x.map((v, k) => v * weights[k % weights.length]!);
}

function windowParam(w: WindowSpec | undefined): unknown {
  return w === undefined ? undefined : typeof w === 'string' ? w : [w[0], w[1]];
}

describe.skipIf(!!skip)(
  `signal vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 300_000 },
  () => {
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
        const inverted: { id: string; x: DeviceBuffer<Precision>; roundtrip: boolean; conditioning: Float64Array }[] =
          [];
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
          expect(relativeL2(weighted(got, conditioning), weighted(wantX, conditioning)), id).toBeLessThanOrEqual(
            TOL[p],
          );
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
  },
);
