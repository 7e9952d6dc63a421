/**
 * What the complex (IQ) GPU tests share: fresh random complex series (interleaved re, im),
 * integer I/Q pairs and the complex values they stand for, complex device buffers, NaN-poisoned
 * outputs, and the tolerances per precision the comparisons with scipy use.
 */
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import type { Precision } from '../../../src/runtime/fft/precision.js';
import type { DType } from '../../../src/runtime/memory/dtype.js';
import type { Stream } from '../../../src/runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from '../../../src/signal/index.js';
import { randomSeries } from './scipy.js';

/** Where a suite runs: the stream its work goes on, how its buffers are kept for disposal, how to wait for the work, and whether to use the small sizes (the CPU emulation). */
export interface SuiteEnv {
  stream: Stream | undefined;
  keep: <T extends DeviceBuffer<DType>>(buffer: T) => T;
  done: () => Promise<void>;
  small: boolean;
}

/**
 * Relative L2 tolerances against scipy (float64): f32 work rounds each value to float32 and runs
 * cuFFT in float32; f64 agrees to rounding. The same bounds as the real path's.
 */
export const COMPLEX_TOL: Record<Precision, number> = { f32: 1e-5, f64: 1e-11 };

/** `n` complex samples, interleaved (re, im): each part a fresh random series (offset, trend, noise). */
export function randomComplex(n: number): Float64Array {
  const re = randomSeries(n);
  const im = randomSeries(n);
  const out = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    out[2 * i] = re[i]!;
    out[2 * i + 1] = im[i]!;
  }
  return out;
}

/** Interleaved complex values as a c64 (f32) or c128 (f64) device buffer. */
export function complexDevice(p: Precision, interleaved: Float64Array): ComplexBuffer {
  return p === 'f32'
    ? DeviceBuffer.from('c64', Float32Array.from(interleaved))
    : DeviceBuffer.from('c128', Float64Array.from(interleaved));
}

/** A complex output of `n` values filled with NaN (a value the operation leaves unwritten fails the comparison). */
export function poisonedComplex(p: Precision, n: number): ComplexBuffer {
  return p === 'f32'
    ? DeviceBuffer.from('c64', new Float32Array(2 * n).fill(Number.NaN))
    : DeviceBuffer.from('c128', new Float64Array(2 * n).fill(Number.NaN));
}

/** A real output of `n` values filled with NaN. */
export function poisonedReal(p: Precision, n: number): RealBuffer {
  return p === 'f32'
    ? DeviceBuffer.from('f32', new Float32Array(n).fill(Number.NaN))
    : DeviceBuffer.from('f64', new Float64Array(n).fill(Number.NaN));
}

/**
 * `pairs` random integer I/Q pairs of `dtype` (spanning most of its range) and the complex values
 * the conversion gives in precision `p`: value × scale, rounded to float32 for f32 work.
 */
export function randomIq(
  dtype: 'i8' | 'i16',
  pairs: number,
  scale: number,
  p: Precision,
): { raw: Int8Array | Int16Array; values: Float64Array } {
  const full = dtype === 'i8' ? 127 : 32767;
  const raw = dtype === 'i8' ? new Int8Array(2 * pairs) : new Int16Array(2 * pairs);
  const values = new Float64Array(2 * pairs);
  const phase = Math.random() * 2 * Math.PI;
  for (let i = 0; i < 2 * pairs; i++) {
    // A tone plus noise, so the spectrum has structure; I and Q a quarter period apart.
    const tone = 0.6 * Math.cos(2 * Math.PI * 0.05 * Math.floor(i / 2) + phase - (i % 2) * (Math.PI / 2));
    const v = Math.max(-full - 1, Math.min(full, Math.round(full * (tone + 0.3 * (Math.random() * 2 - 1)))));
    raw[i] = v;
    values[i] = p === 'f32' ? Math.fround(raw[i]! * scale) : raw[i]! * scale; // from the stored integer (no -0)
  }
  return { raw, values };
}

/** A device buffer's values as float64 (complex interleaved re, im); read after the stream is done. */
export function readBack(buffer: RealBuffer | ComplexBuffer): Float64Array {
  return Float64Array.from(buffer.read() as ArrayLike<number>);
}
