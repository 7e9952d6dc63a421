/**
 * The comparisons of complex (IQ) series through the spectral operations with scipy.signal, shared
 * by the GPU tests (complex-spectral.test.ts) and their CPU emulation
 * (test/unit/signal/complex-emulated.test.ts): stft, spectrogram in every mode, welch (mean,
 * median), csd, coherence and istft (complex output) on c64/c128 series of odd and even lengths
 * and of 1 and 2 samples, two-sided in fftfreq order as scipy returns them for complex x; i8/i16
 * I/Q converted with a scale, against scipy on the converted values. Fresh random inputs,
 * NaN-poisoned outputs. Relative L2 <= 1e-5 (f32) / 1e-11 (f64); frequencies and times to 1e-14.
 */
import { expect } from 'vitest';
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import {
  coherence,
  csd,
  fftFrequencies,
  istft,
  iqToComplex,
  spectralGeometry,
  SPECTROGRAM_DEFAULTS,
  spectrogram,
  stft,
  stftGeometry,
  welch,
  WELCH_DEFAULTS,
  type ComplexBuffer,
  type IqBuffer,
  type RealBuffer,
  type SpectrogramMode,
} from '../../../src/signal/index.js';
import {
  COMPLEX_TOL,
  complexDevice,
  poisonedComplex,
  poisonedReal,
  randomComplex,
  randomIq,
  readBack,
  type SuiteEnv,
} from './complex-cases.js';
import { relativeL2, scipyReference, wrappingPhaseSeries, type ScipyCase } from './scipy.js';

/** One of our results waiting for its scipy reference. */
interface Pending {
  id: string;
  y: RealBuffer | ComplexBuffer;
  tol: number;
  f?: Float64Array | undefined;
  t?: Float64Array | undefined;
}

async function compare(pending: Pending[], cases: ScipyCase[], done: () => Promise<void>): Promise<void> {
  await done();
  const ref = await scipyReference(cases);
  for (const c of pending) {
    const want = ref.get(c.id)!;
    expect(relativeL2(readBack(c.y), want.values), c.id).toBeLessThanOrEqual(c.tol);
    if (c.f) expect(relativeL2(c.f, want.f!), `${c.id} f`).toBeLessThanOrEqual(1e-14);
    if (c.t) expect(relativeL2(c.t, want.t!), `${c.id} t`).toBeLessThanOrEqual(1e-14);
  }
}

/** Interleaved complex values whose phase falls linearly along frequency (no step near ±π: f32 angles compare). */
function wrappingComplex(batch: number, segments: number, nperseg: number): Float64Array {
  const re = wrappingPhaseSeries(batch, segments, nperseg);
  const out = new Float64Array(2 * re.length);
  for (let i = 0; i < re.length; i++) {
    out[2 * i] = re[i]!;
    out[2 * i + 1] = 0.01 * (Math.random() - 0.5);
  }
  return out;
}

/** Stft, spectrogram (psd, complex, magnitude), welch, csd, coherence on ${p} complex series of 1000, 777, 2 and 1 samples. */
export async function spectraSuite(p: Precision, env: SuiteEnv): Promise<void> {
  const batch = 2;
  const tol = COMPLEX_TOL[p];
  const cases: ScipyCase[] = [];
  const pending: Pending[] = [];
  for (const length of env.small ? [100, 77, 2, 1] : [1000, 777, 2, 1]) {
    const nperseg = length >= 64 ? (length % 2 ? 63 : 64) : Math.min(length, 16);
    const values = randomComplex(batch * length);
    const other = randomComplex(batch * length);
    const x = env.keep(complexDevice(p, values));
    const y = env.keep(complexDevice(p, other));
    const held = Float64Array.from(x.read() as ArrayLike<number>);
    const heldY = Float64Array.from(y.read() as ArrayLike<number>);
    const input = { input: held, shape: [batch, length], complex: true };
    for (const [tag, opts] of [
      ['plain', { nperseg }],
      // A line through two points leaves only rounding (0 against 0): linear detrend where frames are longer.
      ['detrend-even', { nperseg, detrend: nperseg > 2 ? 'linear' : 'constant', boundary: 'even', nfft: nperseg + 3 }],
      ['odd-psd', { nperseg, boundary: 'odd', padded: false, scaling: 'psd', fs: 250 }],
    ] as const) {
      const id = `stft-${length}-${tag}`;
      const g = stftGeometry(length, opts, true);
      const Zxx = env.keep(poisonedComplex(p, batch * g.freqs * g.frames));
      const r = stft(x, { ...opts, batch, stream: env.stream, output: Zxx });
      pending.push({ id, y: r.Zxx, tol, f: r.f, t: r.t });
      cases.push({ id, op: 'stft', ...input, params: opts });
    }
    for (const mode of ['psd', 'complex', 'magnitude'] as const satisfies readonly SpectrogramMode[]) {
      const id = `spectrogram-${length}-${mode}`;
      const opts = { nperseg, scaling: mode === 'psd' ? 'spectrum' : 'density' } as const;
      const g = spectralGeometry(length, opts, SPECTROGRAM_DEFAULTS, true);
      const n = batch * g.freqs * g.frames;
      const out = env.keep(mode === 'complex' ? poisonedComplex(p, n) : poisonedReal(p, n));
      const r = spectrogram(x, { ...opts, mode, batch, stream: env.stream, output: out });
      pending.push({ id, y: r.Sxx, tol, f: r.f, t: r.t });
      cases.push({ id, op: 'spectrogram', ...input, params: { ...opts, mode } });
    }
    const g = spectralGeometry(length, { nperseg }, WELCH_DEFAULTS, true);
    for (const average of ['mean', 'median'] as const) {
      const id = `welch-${length}-${average}`;
      const r = welch(x, {
        nperseg,
        average,
        batch,
        stream: env.stream,
        output: env.keep(poisonedReal(p, batch * g.freqs)),
      });
      pending.push({ id, y: r.Pxx, tol, f: r.f });
      cases.push({ id, op: 'welch', ...input, params: { nperseg, average } });
      const cid = `csd-${length}-${average}`;
      const c = csd(x, y, {
        nperseg,
        average,
        batch,
        stream: env.stream,
        output: env.keep(poisonedComplex(p, batch * g.freqs)),
      });
      // scipy's call op returns Pxy alone: the frequencies are welch's, checked above.
      expect(c.f).toEqual(r.f);
      pending.push({ id: cid, y: c.Pxy, tol });
      cases.push({
        id: cid,
        op: 'call',
        input: Float64Array.of(...held, ...heldY),
        shape: [2, batch, length],
        complex: true,
        params: { fn: 'csd', args: ['$x0', '$x1'], kwargs: { nperseg, average }, result: 1 },
      });
    }
    if (length > 1) {
      // coherence of one sample is 0/0 in scipy too.
      const id = `coherence-${length}`;
      const r = coherence(x, y, {
        nperseg,
        batch,
        stream: env.stream,
        output: env.keep(poisonedReal(p, batch * g.freqs)),
      });
      expect(r.f).toEqual(fftFrequencies(g.nfft, 1));
      pending.push({ id, y: r.Cxy, tol: 10 * tol });
      cases.push({
        id,
        op: 'call',
        input: Float64Array.of(...held, ...heldY),
        shape: [2, batch, length],
        complex: true,
        params: { fn: 'coherence', args: ['$x0', '$x1'], kwargs: { nperseg }, result: 1 },
      });
    }
  }
  await compare(pending, cases, env.done);
}

/** Spectrogram angle and phase (unwrapped along frequency) of ${p} complex series, odd and even nperseg. */
export async function phaseSuite(p: Precision, env: SuiteEnv): Promise<void> {
  const batch = 2;
  const cases: ScipyCase[] = [];
  const pending: Pending[] = [];
  for (const nperseg of [48, 45]) {
    const values = wrappingComplex(batch, 12, nperseg);
    const length = 12 * nperseg;
    const x = env.keep(complexDevice(p, values));
    const held = Float64Array.from(x.read() as ArrayLike<number>);
    const opts = { nperseg, noverlap: 0, detrend: false } as const;
    const g = spectralGeometry(length, opts, SPECTROGRAM_DEFAULTS, true);
    for (const mode of ['angle', 'phase'] as const) {
      const id = `${mode}-${nperseg}`;
      const out = env.keep(poisonedReal(p, batch * g.freqs * g.frames));
      const r = spectrogram(x, { ...opts, mode, batch, stream: env.stream, output: out });
      pending.push({ id, y: r.Sxx, tol: COMPLEX_TOL[p], f: r.f });
      cases.push({
        id,
        op: 'spectrogram',
        input: held,
        shape: [batch, length],
        complex: true,
        params: { ...opts, mode },
      });
    }
  }
  await compare(pending, cases, env.done);
}

/** Istft of two-sided ${p} spectra to complex signals (returnComplex), odd and even nperseg. */
export async function istftSuite(p: Precision, env: SuiteEnv): Promise<void> {
  const batch = 2;
  const cases: ScipyCase[] = [];
  const pending: Pending[] = [];
  for (const [nperseg, frames] of [
    [64, 20],
    [63, 9],
    [2, 5],
  ] as const) {
    const Zv = randomComplex(batch * nperseg * frames);
    const Z = env.keep(complexDevice(p, Zv));
    const held = Float64Array.from(Z.read() as ArrayLike<number>);
    const id = `istft-${nperseg}-${frames}`;
    const r = istft(Z, { frames, batch, inputOnesided: false, returnComplex: true, stream: env.stream });
    env.keep(r.x);
    pending.push({ id, y: r.x, tol: COMPLEX_TOL[p] });
    cases.push({
      id,
      op: 'istft',
      input: held,
      shape: [batch, nperseg, frames],
      complex: true,
      params: { nperseg, input_onesided: false },
    });
  }
  await compare(pending, cases, env.done);
}

/** Interleaved ${dtype} I/Q with a scale, converted on the GPU (${p}): stft, spectrogram, welch vs scipy on the converted values. */
export async function iqSpectraSuite(p: Precision, dtype: 'i8' | 'i16', env: SuiteEnv): Promise<void> {
  const batch = 2;
  const scale = dtype === 'i8' ? 0.5 / 128 : 3 / 32768;
  const cases: ScipyCase[] = [];
  const pending: Pending[] = [];
  const converts: [ComplexBuffer, Float64Array][] = [];
  for (const length of env.small ? [99, 100, 2, 1] : [999, 1000, 2, 1]) {
    const nperseg = Math.min(length, 128);
    const { raw, values } = randomIq(dtype, batch * length, scale, p);
    const x = env.keep(
      dtype === 'i8' ? DeviceBuffer.from('i8', raw as Int8Array) : DeviceBuffer.from('i16', raw as Int16Array),
    );
    const input = { input: values, shape: [batch, length], complex: true };
    const io = { iq: true, scale, precision: p, batch, stream: env.stream } as const;
    // The conversion alone: exactly pair × scale, rounded to the precision (what scipy is given below).
    const converted = iqToComplex(x as IqBuffer, {
      scale,
      precision: p,
      stream: env.stream,
      output: env.keep(poisonedComplex(p, batch * length)),
    });
    converts.push([converted, values]);
    const gs = stftGeometry(length, { nperseg }, true);
    const z = stft(x, { ...io, nperseg, output: env.keep(poisonedComplex(p, batch * gs.freqs * gs.frames)) });
    pending.push({ id: `stft-${length}`, y: z.Zxx, tol: COMPLEX_TOL[p], f: z.f, t: z.t });
    cases.push({ id: `stft-${length}`, op: 'stft', ...input, params: { nperseg } });
    const gp = spectralGeometry(length, { nperseg }, SPECTROGRAM_DEFAULTS, true);
    const s = spectrogram(x, { ...io, nperseg, output: env.keep(poisonedReal(p, batch * gp.freqs * gp.frames)) });
    pending.push({ id: `spectrogram-${length}`, y: s.Sxx, tol: COMPLEX_TOL[p], f: s.f, t: s.t });
    cases.push({ id: `spectrogram-${length}`, op: 'spectrogram', ...input, params: { nperseg } });
    const gw = spectralGeometry(length, { nperseg }, WELCH_DEFAULTS, true);
    const w = welch(x, { ...io, nperseg, output: env.keep(poisonedReal(p, batch * gw.freqs)) });
    pending.push({ id: `welch-${length}`, y: w.Pxx, tol: COMPLEX_TOL[p], f: w.f });
    cases.push({ id: `welch-${length}`, op: 'welch', ...input, params: { nperseg } });
  }
  await compare(pending, cases, env.done);
  for (const [got, want] of converts) expect(readBack(got)).toEqual(want);
}
