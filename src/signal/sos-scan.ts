/**
 * The host side of sosfilt's kernels, which run the cascade in parallel along time (filter.cu, "second-
 * order sections in parallel along time"): the tile geometry they are compiled for, the per-section
 * tables they read (coefficients, the transitions of the scan across a warp's lanes, the zero-input
 * responses), the whole cascade's state transition across a tile and across a group of tiles (float64,
 * by repeated squaring), and the scratch a call needs. Pure: no CUDA.
 */

/** Samples each lane of a warp filters (filter.cu SOS_LANE_SAMPLES). */
export const LANE_SAMPLES = 32;
/** Lanes of a warp (filter.cu SOS_LANES). */
export const LANES = 32;
/** Samples of a tile, one warp's (filter.cu SOS_TILE). */
export const TILE = LANES * LANE_SAMPLES;
/** Steps of the scan across a warp's lanes, log2(LANES) (filter.cu SOS_SCAN_STEPS). */
export const SCAN_STEPS = 5;
/** The most sections one launch takes (filter.cu SOS_GROUP_SECTIONS): a longer cascade runs in groups of this many. */
export const GROUP_SECTIONS = 16;
/** Threads per block of the tile and group kernels: 4 warps (filter.cu SOS_TILE_WARPS, which sizes their shared memory). */
export const TILE_THREADS = 128;
/** Where a section's zero-input responses h_t start in its table row (filter.cu SOS_RESPONSE). */
const RESPONSE = 5 + 4 * SCAN_STEPS;
/** Doubles per section in the section table (filter.cu SOS_SECTION_STRIDE). */
export const SECTION_STRIDE = RESPONSE + 2 * (LANE_SAMPLES + 1);

/**
 * The table the tile kernels read, SECTION_STRIDE doubles per section: b0, b1, b2, a1, a2; the scan's
 * transitions A^(LANE_SAMPLES·2^k) for k < SCAN_STEPS (2 × 2, row-major), A = [[-a1, 1], [-a2, 0]] being a
 * section's state transition with no input (transposed direct form II); then h_t, the first row of A^t,
 * for t = 0 .. LANE_SAMPLES (the output t samples after a state s, with no input, is h_t · s).
 */
export function sectionTable(sos: Float64Array, sections: number): Float64Array {
  const out = new Float64Array(sections * SECTION_STRIDE);
  for (let s = 0; s < sections; s++) {
    const [b0, b1, b2, , a1, a2] = sos.subarray(6 * s, 6 * s + 6);
    const row = out.subarray(s * SECTION_STRIDE, (s + 1) * SECTION_STRIDE);
    row.set([b0!, b1!, b2!, a1!, a2!]);
    const a = Float64Array.of(-a1!, 1, -a2!, 0);
    for (let k = 0; k < SCAN_STEPS; k++) row.set(matrixPower(a, 2, LANE_SAMPLES * 2 ** k), 5 + 4 * k);
    let [h0, h1] = [1, 0];
    for (let t = 0; t <= LANE_SAMPLES; t++) {
      row[RESPONSE + 2 * t] = h0;
      row[RESPONSE + 2 * t + 1] = h1;
      [h0, h1] = [-a1! * h0 - a2! * h1, h0]; // h_(t+1) = h_t · A
    }
  }
  return out;
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

/** The group kernels' transitions for a cascade of `sections` (≤ GROUP_SECTIONS): A^TILE, then A^(TILE·group), d × d each. */
export function groupTransitions(sos: Float64Array, sections: number, group: number): Float64Array {
  const d = 2 * sections;
  const tile = matrixPower(cascadeTransition(sos, sections), d, TILE);
  const out = new Float64Array(2 * d * d);
  out.set(tile, 0);
  out.set(matrixPower(tile, d, group), d * d);
  return out;
}

/** How a series of `length` samples is cut: `tiles` tiles, the tiles that end in an e (all but the last) in `groups` groups of `group`. */
export interface ScanGeometry {
  tiles: number;
  group: number;
  groups: number;
}

/** The cut of a series of `length` samples; about √tiles tiles a group, so that the scans within groups and along them take as many steps. */
export function scanGeometry(length: number): ScanGeometry {
  const tiles = Math.ceil(length / TILE);
  if (tiles <= 1) return { tiles, group: 1, groups: 0 };
  const group = Math.ceil(Math.sqrt(tiles - 1));
  return { tiles, group, groups: Math.ceil((tiles - 1) / group) };
}

/**
 * The float64 scratch sosfilt needs per series of precision `p`: start states (all sections), tile and
 * group end states (one launch of sections at a time), and for a float32 cascade of more than one
 * launch its float64 copy (`wide`).
 */
export function scanScratch(
  length: number,
  sections: number,
  p: 'f32' | 'f64',
): { init: number; ends: number; carries: number; wide: number } {
  const { tiles, groups } = scanGeometry(length);
  const d = 2 * Math.min(sections, GROUP_SECTIONS);
  return {
    init: 2 * sections,
    ends: tiles > 1 ? tiles * d : 0,
    carries: groups * d,
    wide: p === 'f32' && sections > GROUP_SECTIONS ? length : 0,
  };
}

/** All of scanScratch, in float64 elements per series (what the engine counts for a filter job). */
export function scanScratchPerSeries(length: number, sections: number, p: 'f32' | 'f64'): number {
  const { init, ends, carries, wide } = scanScratch(length, sections, p);
  return init + ends + carries + wide;
}
