/**
 * The host side of sosfilt's parallel-in-time path (src/kernels/sos.cu): a cascade of second-order
 * sections is a linear system whose state (two values per section) moves, over L input samples, as
 * s_end = A^L · s_start + e, with e the state reached from a zero start. The GPU cuts every series
 * into tiles of SCAN_THREADS chunks of SCAN_CHUNK samples (one block per tile, one thread per
 * chunk), filters every chunk from a zero state, combines the chunks of a tile up a tree, scans the
 * tile starts along the series, sweeps the tree down to every chunk's true start and filters every
 * chunk again from it. This file builds the powers of A the tree and the scan need (float64, by
 * repeated squaring), sizes the tree and decides when the path pays. Pure: no CUDA.
 */

/** Samples per chunk (one thread's run) of the parallel path; a power of two (sos.cu indexes with shifts). */
export const SCAN_CHUNK = 64;
/** Threads per block of the tile kernels (sos.cu SOS_SCAN_THREADS, the register budget is set for it); a power of two (the tree). */
export const SCAN_THREADS = 64;
/** Samples per tile (one block's span). */
export const SCAN_TILE = SCAN_CHUNK * SCAN_THREADS;
/** Threads per block of the tile-start scan (one per state row: at least 2 · MAX_SCAN_SECTIONS). */
export const SCAN_ROW_THREADS = 32;
/** Doubles of shared memory a tile kernel has (sos.cu SOS_SCAN_SHARED): the staged tile, or the tree twice. */
export const SCAN_SHARED = 4160;
/** The most sections the parallel path takes (sos.cu instantiates the cascade for 1..16; longer cascades run sequentially). */
export const MAX_SCAN_SECTIONS = 16;
/**
 * The shortest series the parallel path takes. One thread per series walks a series sample by sample
 * through a dependent chain of float64 operations; past 32 chunks the three launches of the parallel
 * path cost less than that walk. From this length on the tree (scanGeometry) never holds more doubles
 * than the series has samples (at most 64 · 32 per tile of 4,096), what the engine's filter scratch
 * allows for (src/engine/series-buffers.ts).
 */
export const MIN_SCAN_LENGTH = 32 * SCAN_CHUNK;

/** Whether sosfilt filters series of `length` samples through `sections` sections in parallel along time. */
export function usesScan(length: number, sections: number): boolean {
  return sections <= MAX_SCAN_SECTIONS && length >= MIN_SCAN_LENGTH;
}

/** The zero-input one-step transition of the cascade's state (d × d, d = 2·sections, row-major), transposed direct form II as the kernels run it. */
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

const isPowerOfTwo = (n: number): boolean => Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;

/** RangeError unless the kernels can run this shape: powers of two, the tile and the tree within a block's shared memory. */
export function checkScanShape(sections: number, chunk: number, threads: number): void {
  const d = 2 * sections;
  if (!Number.isInteger(sections) || sections < 1 || sections > MAX_SCAN_SECTIONS)
    throw new RangeError(`sos scan: sections must be 1..${MAX_SCAN_SECTIONS}, got ${sections}`);
  if (!isPowerOfTwo(chunk) || !isPowerOfTwo(threads))
    throw new RangeError(`sos scan: chunk (${chunk}) and threads (${threads}) must be powers of two`);
  if (threads * (chunk + 1) > SCAN_SHARED || 2 * threads * d > SCAN_SHARED)
    throw new RangeError(
      `sos scan: ${threads} threads of ${chunk}-sample chunks, ${sections} sections exceed ${SCAN_SHARED} shared doubles`,
    );
}

/**
 * The powers the kernels read, packed d × d column-major each (sos.cu: one thread per row reads a
 * column side by side): A^(chunk·2^j) for j = 0 .. log2(threads), the tree's levels and last the whole
 * tile. Each is the square of the one before, in float64.
 */
export function scanPowers(
  sos: Float64Array,
  sections: number,
  chunk = SCAN_CHUNK,
  threads = SCAN_THREADS,
): Float64Array {
  checkScanShape(sections, chunk, threads);
  const d = 2 * sections;
  const levels = Math.log2(threads);
  const out = new Float64Array((levels + 1) * d * d);
  let m = matrixPower(cascadeTransition(sos, sections), d, chunk);
  for (let j = 0; j <= levels; j++) {
    for (let r = 0; r < d; r++) for (let k = 0; k < d; k++) out[j * d * d + k * d + r] = m[r * d + k]!;
    if (j < levels) m = multiply(m, m, d);
  }
  return out;
}

/** The tiles of one series and the doubles of the tree for all series (threads · d per tile). */
export function scanGeometry(
  batch: number,
  length: number,
  sections: number,
  chunk = SCAN_CHUNK,
  threads = SCAN_THREADS,
): { tiles: number; treeLength: number } {
  const tiles = Math.ceil(length / (chunk * threads));
  return { tiles, treeLength: batch * tiles * threads * 2 * sections };
}

/** Powers built lately, by filter: a filter applied call after call builds them once. */
const memo = new Map<string, Float64Array>();
/** How many filters `memo` keeps (each at most 7 · 32² float64 = 56 KiB). */
const MEMO_ENTRIES = 64;

/** scanPowers at the default shape, remembered for the last MEMO_ENTRIES filters. */
export function cachedScanPowers(sos: Float64Array, sections: number): Float64Array {
  const key = sos.join(',');
  let t = memo.get(key);
  if (t) {
    memo.delete(key); // most recently used goes last
  } else {
    t = scanPowers(sos, sections);
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
  }
  memo.set(key, t);
  return t;
}
