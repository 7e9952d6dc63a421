/**
 * The host side of sosfilt's parallel-in-time path: a cascade of second-order sections is a linear
 * system whose state (two values per section) moves, over L input samples, as
 * s_end = A^L · s_start + e, with e the state reached from a zero start. The GPU filters every
 * chunk of a series from a zero start at once (e), scans the chunk starts along the series with
 * A^L, then refilters every chunk from its true start. This file builds A^L (float64, by repeated
 * squaring) and decides when the path pays. Pure: no CUDA.
 */

/** Samples per chunk of the parallel path. */
export const SCAN_CHUNK = 2048;
/** The most sections the parallel path takes (its state matrices grow as (2·sections)²; longer cascades run sequentially). */
export const MAX_SCAN_SECTIONS = 16;

/** Whether sosfilt splits series of `length` samples into chunks (long enough that the second pass is cheaper than the sequential wait). */
export function usesScan(length: number, sections: number): boolean {
  return sections <= MAX_SCAN_SECTIONS && length >= 4 * SCAN_CHUNK;
}

/** The zero-input one-step transition of the cascade's state (d × d, d = 2·sections, row-major), transposed direct form II as filter.cu runs it. */
export function cascadeTransition(sos: Float64Array, sections: number): Float64Array {
  const d = 2 * sections;
  const a = new Float64Array(d * d);
  const z = new Float64Array(d);
  for (let j = 0; j < d; j++) {
    z.fill(0);
    z[j] = 1;
    let v = 0;
    for (let s = 0; s < sections; s++) {
      const c = sos.subarray(6 * s, 6 * s + 6);
      const y = c[0]! * v + z[2 * s]!;
      z[2 * s] = c[1]! * v - c[4]! * y + z[2 * s + 1]!;
      z[2 * s + 1] = c[2]! * v - c[5]! * y;
      v = y;
    }
    for (let i = 0; i < d; i++) a[i * d + j] = z[i]!;
  }
  return a;
}

function multiply(x: Float64Array, y: Float64Array, d: number): Float64Array {
  const out = new Float64Array(d * d);
  for (let i = 0; i < d; i++)
    for (let k = 0; k < d; k++) {
      const v = x[i * d + k]!;
      if (v === 0) continue;
      for (let j = 0; j < d; j++) out[i * d + j]! += v * y[k * d + j]!;
    }
  return out;
}

/** A^power (d × d, row-major) by repeated squaring. */
export function matrixPower(a: Float64Array, d: number, power: number): Float64Array {
  let result: Float64Array = new Float64Array(d * d);
  for (let i = 0; i < d; i++) result[i * d + i] = 1;
  let base = a;
  for (let p = power; p > 0; p = Math.floor(p / 2)) {
    if (p % 2 === 1) result = multiply(result, base, d);
    if (p > 1) base = multiply(base, base, d);
  }
  return result;
}

/** The two transitions the scan needs, packed: A^chunk, then A^(length of the last chunk). */
export function scanTransitions(sos: Float64Array, sections: number, length: number, chunk = SCAN_CHUNK): Float64Array {
  const d = 2 * sections;
  const a = cascadeTransition(sos, sections);
  const chunks = Math.ceil(length / chunk);
  const last = length - (chunks - 1) * chunk;
  const out = new Float64Array(2 * d * d);
  out.set(matrixPower(a, d, chunk), 0);
  out.set(matrixPower(a, d, last), d * d);
  return out;
}

/** Transitions built lately, by sections and last-chunk length: a filter applied call after call builds them once. */
const memo = new Map<string, Float64Array>();
/** How many transition pairs `memo` keeps (each at most 2·32² float64 = 16 KiB). */
const MEMO_ENTRIES = 64;

/** scanTransitions, remembered for the last MEMO_ENTRIES filters and chunk lengths. */
export function cachedScanTransitions(sos: Float64Array, sections: number, length: number): Float64Array {
  const last = length - (Math.ceil(length / SCAN_CHUNK) - 1) * SCAN_CHUNK;
  const key = `${last}:${sos.join(',')}`;
  let t = memo.get(key);
  if (t) {
    memo.delete(key); // most recently used goes last
  } else {
    t = scanTransitions(sos, sections, length);
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
  }
  memo.set(key, t);
  return t;
}
