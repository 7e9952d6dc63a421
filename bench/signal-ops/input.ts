/**
 * The rows' shared input (pure): `batch` series of `length` float32 samples, unit Gaussian noise
 * plus three tones (in and out of the rows' pass bands) with random phases, from a seeded generator
 * so every run times and checks the same data. Broadband on purpose: every filter of the rows keeps
 * a good share of its energy, so a wrong output (a mis-designed filter, an output shifted by even one
 * sample) shows as a relative L2 error of a tenth or more, hundreds of times the checks' tolerances.
 */

/** The shared job size of issue 41: 16 series of 1M samples (2^20, a power of two: fft.js checks hilbert). */
export const SIGNAL_OPS_BATCH = 16;
export const SIGNAL_OPS_LENGTH = 2 ** 20;
export const SIGNAL_OPS_SEED = 41;

/** Tones as (cycles per sample, amplitude): below, inside and above the rows' pass bands. */
const TONES: readonly (readonly [number, number])[] = [
  [0.01, 1.0],
  [0.085, 0.7],
  [0.31, 0.5],
];

/** A seeded uniform generator on (0, 1): xorshift32, deterministic across runs and hosts. */
export function uniformSource(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return (s + 0.5) / 4294967296;
  };
}

/** The shared input, batch × length, row-major. */
export function signalOpsInput(batch: number, length: number, seed = SIGNAL_OPS_SEED): Float32Array {
  const out = new Float32Array(batch * length);
  const uniform = uniformSource(seed);
  for (let b = 0; b < batch; b++) {
    const phases = TONES.map(() => uniform() * 2 * Math.PI);
    const row = out.subarray(b * length, (b + 1) * length);
    for (let i = 0; i < length; i++) {
      // Box-Muller: one normal per sample.
      let v = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
      for (let k = 0; k < TONES.length; k++) v += TONES[k]![1] * Math.cos(2 * Math.PI * TONES[k]![0] * i + phases[k]!);
      row[i] = v;
    }
  }
  return out;
}

/** `count` distinct sample positions in [0, length): the first and last `edge` and the rest spread by `uniform`, ascending. */
export function checkPositions(length: number, count: number, edge: number, uniform: () => number): number[] {
  const picked = new Set<number>();
  for (let i = 0; i < Math.min(edge, length); i++) {
    picked.add(i);
    picked.add(length - 1 - i);
  }
  while (picked.size < Math.min(count, length)) picked.add(Math.floor(uniform() * length));
  return [...picked].sort((a, b) => a - b);
}
