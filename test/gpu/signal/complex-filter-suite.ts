/**
 * The comparisons of complex (IQ) series through the filters and convolutions with scipy.signal,
 * shared by the GPU tests (complex-filter.test.ts) and their CPU emulation
 * (test/unit/signal/complex-emulated.test.ts): sosfilt, sosfiltfilt, lfilter and filtfilt on complex x with real coefficients; convolve
 * (direct, fft), fftconvolve, oaconvolve and correlate (which conjugates the taps, as scipy's) with
 * a complex signal, complex taps, or both, in every mode; series of odd and even lengths and of 1
 * and 2 samples; interleaved i8/i16 I/Q converted on the GPU with a scale. One 1-D scipy call per
 * series. Fresh random inputs, NaN-poisoned outputs. Relative L2 <= 1e-5 (f32) / 1e-11 (f64).
 */
import { expect } from 'vitest';
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import {
  butter,
  convolutionWindow,
  convolve,
  correlate,
  fftconvolve,
  filtfilt,
  lfilter,
  oaconvolve,
  sosfilt,
  sosfiltfilt,
  type ComplexBuffer,
  type ComplexInput,
  type ComplexTaps,
  type RealBuffer,
} from '../../../src/signal/index.js';
import {
  COMPLEX_TOL,
  complexDevice,
  poisonedComplex,
  randomComplex,
  randomIq,
  readBack,
  type SuiteEnv,
} from './complex-cases.js';
import { randomSeries, relativeL2, scipyReference, type ScipyCase } from './scipy.js';

interface Pending {
  id: string;
  y: ComplexBuffer;
  tol: number;
  batch: number;
}

/** One scipy call per series of `x` (interleaved complex when `complex`), `args` with "$x" where the series goes. */
function perSeries(
  id: string,
  held: Float64Array,
  batch: number,
  length: number,
  complex: boolean,
  fn: string,
  args: unknown[],
  kwargs: Record<string, unknown> = {},
): ScipyCase[] {
  const width = complex ? 2 * length : length;
  return Array.from({ length: batch }, (_, b) => ({
    id: `${id}-${b}`,
    op: 'call' as const,
    input: held.slice(b * width, (b + 1) * width),
    shape: [length],
    complex,
    params: { fn, args, kwargs },
  }));
}

async function compare(pending: Pending[], cases: ScipyCase[], done: () => Promise<void>): Promise<void> {
  await done();
  const ref = await scipyReference(cases);
  for (const c of pending) {
    const want: number[] = [];
    for (let b = 0; b < c.batch; b++) {
      const r = ref.get(`${c.id}-${b}`)!;
      // scipy returns a real array for real operands; ours is complex throughout (imaginary parts 0).
      if (r.complex) want.push(...r.values);
      else for (const v of r.values) want.push(v, 0);
    }
    expect(relativeL2(readBack(c.y), Float64Array.from(want)), c.id).toBeLessThanOrEqual(c.tol);
  }
}

function randomTaps(n: number): ComplexTaps {
  return {
    re: Array.from({ length: n }, () => Math.random() - 0.5),
    im: Array.from({ length: n }, () => Math.random() - 0.5),
  };
}

/** Sosfilt, sosfiltfilt, lfilter, filtfilt on ${p} complex series of 2000, 1001, 2 and 1 samples. */
export async function filterSuite(p: Precision, env: SuiteEnv): Promise<void> {
  const batch = 3;
  const tol = COMPLEX_TOL[p];
  const sos = butter(4, 0.2, { output: 'sos' });
  const taps = Array.from({ length: 21 }, () => Math.random() - 0.5);
  const cases: ScipyCase[] = [];
  const pending: Pending[] = [];
  for (const length of env.small ? [200, 101, 2, 1] : [2000, 1001, 2, 1]) {
    const x = env.keep(complexDevice(p, randomComplex(batch * length)));
    const held = readBack(x);
    const out = (): ComplexBuffer => env.keep(poisonedComplex(p, batch * length));
    const add = (id: string, y: ComplexBuffer, fn: string, args: unknown[], kwargs = {}): void => {
      pending.push({ id, y, tol, batch });
      cases.push(...perSeries(id, held, batch, length, true, fn, args, kwargs));
    };
    add(`sosfilt-${length}`, sosfilt(sos, x, { batch, stream: env.stream, output: out() }), 'sosfilt', [sos, '$x']);
    add(`lfilter-${length}`, lfilter(taps, 2, x, { batch, stream: env.stream, output: out() }), 'lfilter', [
      taps,
      [2],
      '$x',
    ]);
    // Padding must be shorter than the series: padlen 0 for the shortest, scipy's default where it fits.
    const sosPad = length > 3 * (2 * sos.length + 1) ? {} : { padlen: length - 1 };
    add(
      `sosfiltfilt-${length}`,
      sosfiltfilt(sos, x, { ...sosPad, batch, stream: env.stream, output: out() }),
      'sosfiltfilt',
      [sos, '$x'],
      sosPad,
    );
    const firPad = length > 3 * taps.length ? {} : { padlen: length - 1 };
    add(
      `filtfilt-${length}`,
      filtfilt(taps, 1, x, { ...firPad, batch, stream: env.stream, output: out() }),
      'filtfilt',
      [taps, [1], '$x'],
      firPad,
    );
  }
  await compare(pending, cases, env.done);
}

/** Convolve (direct, fft), fftconvolve, oaconvolve, correlate (${p}): complex signal and/or complex taps, every mode. */
export async function convolutionSuite(p: Precision, env: SuiteEnv): Promise<void> {
  const batch = 2;
  const tol = COMPLEX_TOL[p];
  const cases: ScipyCase[] = [];
  const pending: Pending[] = [];
  // On the GPU, also series long enough for fft-convolution.ts's overlap-save blocks (several per
  // series) in both precisions; the CPU emulation's DFTs would take minutes over them.
  const long: [number, number][] = env.small ? [] : [[40_000, 257]];
  for (const [length, ntaps] of [[1000, 31], [999, 200], [40, 301], [2, 2], [1, 5], ...long] as const) {
    const cx = env.keep(complexDevice(p, randomComplex(batch * length)));
    const heldC = readBack(cx);
    const rx64 = randomSeries(batch * length);
    const rx = env.keep(
      p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(rx64)) : DeviceBuffer.from('f64', rx64),
    ) as RealBuffer;
    const heldR = readBack(rx);
    const ct = randomTaps(ntaps);
    const rt = Array.from(ct.re);
    for (const mode of ['full', 'same', 'valid'] as const) {
      const n = batch * convolutionWindow(length, ntaps, mode).outLength;
      const tag = `${length}-${ntaps}-${mode}`;
      const operands: [string, RealBuffer | ComplexInput, Float64Array, boolean, ComplexTaps | number[]][] = [
        ['cx-rt', cx, heldC, true, rt],
        ['cx-ct', cx, heldC, true, ct],
        ['rx-ct', rx, heldR, false, ct],
      ];
      for (const [kind, x, held, complex, taps] of operands) {
        const scipyTaps = Array.isArray(taps) ? taps : { re: Array.from(taps.re), im: Array.from(taps.im) };
        const run = (id: string, y: ComplexBuffer, fn: string, kwargs: Record<string, unknown>): void => {
          pending.push({ id, y, tol, batch });
          cases.push(...perSeries(id, held, batch, length, complex, fn, ['$x', scipyTaps], kwargs));
        };
        const o = (): { batch: number; stream: SuiteEnv['stream']; mode: typeof mode; output: ComplexBuffer } => ({
          batch,
          stream: env.stream,
          mode,
          output: env.keep(poisonedComplex(p, n)),
        });
        run(`direct-${kind}-${tag}`, convolve(x, taps, { ...o(), method: 'direct' }), 'convolve', {
          mode,
          method: 'direct',
        });
        run(`fft-${kind}-${tag}`, fftconvolve(x, taps, o()), 'fftconvolve', { mode });
        run(`oa-${kind}-${tag}`, oaconvolve(x, taps, o()), 'oaconvolve', { mode });
        run(`corr-${kind}-${tag}`, correlate(x, taps, o()), 'correlate', { mode, method: 'direct' });
      }
    }
  }
  await compare(pending, cases, env.done);
}

/** Interleaved ${dtype} I/Q with a scale (${p}): sosfilt and convolve vs scipy on the converted values. */
export async function iqFilterSuite(p: Precision, dtype: 'i8' | 'i16', env: SuiteEnv): Promise<void> {
  const batch = 2;
  const scale = dtype === 'i8' ? 1 / 64 : 1 / 4096;
  const sos = butter(3, [0.1, 0.3], { btype: 'bandpass', output: 'sos' });
  const ct = randomTaps(17);
  const cases: ScipyCase[] = [];
  const pending: Pending[] = [];
  for (const length of env.small ? [77, 2, 1] : [777, 2, 1]) {
    const { raw, values } = randomIq(dtype, batch * length, scale, p);
    const x = env.keep(
      dtype === 'i8' ? DeviceBuffer.from('i8', raw as Int8Array) : DeviceBuffer.from('i16', raw as Int16Array),
    );
    const io = { iq: true, scale, precision: p, batch, stream: env.stream } as const;
    const y = sosfilt(sos, x, { ...io, output: env.keep(poisonedComplex(p, batch * length)) });
    pending.push({ id: `sosfilt-${length}`, y, tol: COMPLEX_TOL[p], batch });
    cases.push(...perSeries(`sosfilt-${length}`, values, batch, length, true, 'sosfilt', [sos, '$x']));
    const n = batch * convolutionWindow(length, 17, 'full').outLength;
    const c = convolve(x, ct, { ...io, output: env.keep(poisonedComplex(p, n)) });
    pending.push({ id: `convolve-${length}`, y: c, tol: COMPLEX_TOL[p], batch });
    const taps = { re: Array.from(ct.re), im: Array.from(ct.im) };
    cases.push(...perSeries(`convolve-${length}`, values, batch, length, true, 'convolve', ['$x', taps]));
  }
  await compare(pending, cases, env.done);
}
