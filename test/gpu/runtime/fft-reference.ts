/**
 * The float64 CPU references of the cuFFT plan tests (fft-*.test.ts) and their device helpers: every
 * copy and poison on the test's stream, so nothing races it.
 */
import FFT from 'fft.js';
import { expect } from 'vitest';
import { DeviceBuffer, type DType, type HostArray, type Stream } from '../../../src/runtime/index.js';

// ---- CPU references, all in float64 ---------------------------------------------------------

/** Whether `n` is a power of two (fft.js takes those). */
const isPow2 = (n: number): boolean => n >= 2 && (n & (n - 1)) === 0;
/** Twiddle factors of the direct sum, by size. */
const twiddles = new Map<number, { cos: Float64Array; sin: Float64Array }>();

/**
 * DFT of one interleaved complex signal (length 2n): forward e^(-2πi jk/n), inverse e^(+2πi jk/n)
 * unnormalized like cuFFT. fft.js (radix-4) for powers of two, a direct O(n²) sum otherwise.
 */
export function dft(x: Float64Array, n: number, inverse = false): Float64Array {
  if (isPow2(n)) {
    const f = new FFT(n);
    const out = new Float64Array(2 * n);
    if (inverse) {
      f.inverseTransform(out, x);
      for (let i = 0; i < out.length; i++) out[i]! *= n; // fft.js divides its inverse by n (exact: n is a power of two)
    } else f.transform(out, x);
    return out;
  }
  let t = twiddles.get(n);
  if (!t) {
    t = { cos: new Float64Array(n), sin: new Float64Array(n) };
    for (let k = 0; k < n; k++) {
      t.cos[k] = Math.cos((2 * Math.PI * k) / n);
      t.sin[k] = Math.sin((2 * Math.PI * k) / n);
    }
    twiddles.set(n, t);
  }
  const sign = inverse ? 1 : -1;
  const out = new Float64Array(2 * n);
  for (let k = 0; k < n; k++) {
    let re = 0;
    let im = 0;
    let idx = 0; // (j·k) mod n
    for (let j = 0; j < n; j++) {
      const c = t.cos[idx]!;
      const s = sign * t.sin[idx]!;
      const a = x[2 * j]!;
      const b = x[2 * j + 1]!;
      re += a * c - b * s;
      im += a * s + b * c;
      idx += k;
      if (idx >= n) idx -= n;
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
  return out;
}

/** `batch` contiguous signals of n complex elements each. */
export function batchedDft(x: Float64Array, n: number, batch: number, inverse = false): Float64Array {
  const out = new Float64Array(2 * n * batch);
  for (let b = 0; b < batch; b++) out.set(dft(x.subarray(2 * n * b, 2 * n * (b + 1)), n, inverse), 2 * n * b);
  return out;
}

/** The DFT along one axis of a row-major complex array of `shape` (last axis fastest). */
export function dftAlong(x: Float64Array, shape: readonly number[], axis: number, inverse = false): Float64Array {
  const n = shape[axis]!;
  const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const out = new Float64Array(x.length);
  const line = new Float64Array(2 * n);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      for (let j = 0; j < n; j++) {
        const at = 2 * ((o * n + j) * inner + i);
        line[2 * j] = x[at]!;
        line[2 * j + 1] = x[at + 1]!;
      }
      const f = dft(line, n, inverse);
      for (let j = 0; j < n; j++) {
        const at = 2 * ((o * n + j) * inner + i);
        out[at] = f[2 * j]!;
        out[at + 1] = f[2 * j + 1]!;
      }
    }
  }
  return out;
}

/** The multi-dimensional DFT: one axis after the other (rows, then columns, ...). */
export function dftNd(x: Float64Array, shape: readonly number[], inverse = false): Float64Array {
  let y = x;
  for (let axis = shape.length - 1; axis >= 0; axis--) y = dftAlong(y, shape, axis, inverse);
  return y;
}

/** Interleaved complex (im = 0) from reals. */
export function complexFromReal(x: Float64Array): Float64Array {
  const c = new Float64Array(2 * x.length);
  for (let i = 0; i < x.length; i++) c[2 * i] = x[i]!;
  return c;
}

/** The first n/2+1 bins of each of `batch` spectra of length n (what R2C/D2Z produce). */
export function halfSpectra(full: Float64Array, n: number, batch: number): Float64Array {
  const h = Math.floor(n / 2) + 1;
  const out = new Float64Array(2 * h * batch);
  for (let b = 0; b < batch; b++) out.set(full.subarray(2 * n * b, 2 * (n * b + h)), 2 * h * b);
  return out;
}

/** ‖actual − expected‖₂ / ‖expected‖₂ (NaN, hence failing, where the GPU left poison). */
export function relL2(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < expected.length; i++) {
    num += (actual[i]! - expected[i]!) ** 2;
    den += expected[i]! ** 2;
  }
  return Math.sqrt(num / den);
}

/** `x` times `k` (an unnormalized inverse gives N·x). */
export const scaled = (x: ArrayLike<number>, k: number): Float64Array =>
  Float64Array.from(x as ArrayLike<number>, (v) => v * k);
/** float64 values as float32 would hold them, back in float64: the exact input of a single-precision transform. */
export const asF32 = (x: Float64Array): Float64Array => Float64Array.from(Float32Array.from(x));

// ---- device helpers: every copy and poison on the test's stream, so nothing races it ------------

/** A device buffer holding `data`, written on stream `s`. */
export function upload<T extends DType>(dtype: T, data: HostArray<T>, s: Stream): DeviceBuffer<T> {
  const components = dtype === 'c64' || dtype === 'c128' ? 2 : 1;
  return DeviceBuffer.alloc(dtype, data.length / components).write(data, { stream: s });
}

/** A buffer of NaNs (all bits set), so an element the transform did not write is caught. */
export function poisoned<T extends DType>(dtype: T, length: number, s: Stream): DeviceBuffer<T> {
  return DeviceBuffer.alloc(dtype, length).memset(0xffffffff, { width: 32, stream: s });
}

/** The contents of `b` once the work on `s` is done. */
export async function download<T extends DType>(b: DeviceBuffer<T>, s: Stream): Promise<HostArray<T>> {
  await s.done();
  return b.read();
}

/** Relative L2 tolerances of single and double precision transforms. */
export const SINGLE = 1e-5;
/** See SINGLE. */
export const DOUBLE = 1e-12;
