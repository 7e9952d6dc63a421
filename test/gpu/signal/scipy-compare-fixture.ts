/**
 * The shared setup of the src/signal against scipy.signal comparisons (scipy-compare-*.test.ts):
 * tolerances (relative L2 <= 1e-5 for f32, 1e-12 for f64), NaN-poisoned outputs, reads back in
 * float64, and istft's per-sample conditioning.
 */
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { getWindow, type WindowSpec } from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import { scipy } from './scipy.js';

/** The precision of a case. */
export type P = Precision;
/** Relative L2 tolerance by precision. */
export const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };
/** Why the scipy comparisons skip here (no GPU, or no scipy), or empty. */
export const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

/** A device buffer of `x` in precision `p`. */
export function upload(p: P, x: Float64Array): DeviceBuffer<'f32'> | DeviceBuffer<'f64'> {
  return p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(x)) : DeviceBuffer.from('f64', x);
}

/** The values the GPU sees, as float64 (f32 inputs rounded). */
export function seen(p: P, x: Float64Array): Float64Array {
  return p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x;
}

/** A device buffer of NaNs, so an element the GPU skips fails the comparison. */
export function poisoned<T extends Precision | 'c64' | 'c128'>(dtype: T, length: number): DeviceBuffer<T> {
  const n = dtype === 'c64' || dtype === 'c128' ? 2 * length : length;
  const host =
    dtype === 'f32' || dtype === 'c64' ? new Float32Array(n).fill(Number.NaN) : new Float64Array(n).fill(Number.NaN);
  return DeviceBuffer.from(dtype, host as never);
}

/** A buffer's contents as float64 (complex ones interleaved). */
export function readAll(b: DeviceBuffer<Precision | 'c64' | 'c128'>): Float64Array {
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
export function istftConditioning(
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
export function weighted(x: Float64Array, weights: Float64Array): Float64Array {
  return x.map((v, k) => v * weights[k % weights.length]!);
}

/** A window spec as scipy takes it (a name, or a name and its parameter). */
export function windowParam(w: WindowSpec | undefined): unknown {
  return w === undefined ? undefined : typeof w === 'string' ? w : [w[0], w[1]];
}

/** The name of a scipy comparison suite of `what`, saying why it skips or which scipy it compares with. */
export function suiteName(what: string): string {
  return `signal vs scipy.signal: ${what}${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`;
}
