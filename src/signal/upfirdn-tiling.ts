/**
 * The geometry of the tiled polyphase kernel (filter.cu upfirdn_tiled_impl): how many outputs a
 * block takes, how many input samples it stages in shared memory, and the taps regrouped phase by
 * phase. Pure (no CUDA), so the CPU tests plan exactly what the GPU runs.
 */

/** Shared memory of one tile (its samples and its sums, double each): 48 KiB, the most a launch gets without opting in (cudaFuncSetAttribute). */
export const TILE_SHARED_BYTES = 48 * 1024;
/** Outputs a tile aims at: enough that the samples staged for the tile's edges (phase_taps − 1 more) stay a small part. */
export const TILE_OUTPUTS = 1024;

/** What upfirdn_tiled_{f32,f64} take besides the series: see filter.cu. */
export interface UpfirdnTiling {
  /** Taps per phase: ceil(ntaps / up); the phased table holds up × phaseTaps taps. */
  phaseTaps: number;
  /** Outputs of each phase in a tile: a tile is up × perClass consecutive outputs. */
  perClass: number;
  /** Input samples a tile stages (shared memory: span doubles, then up × perClass sums). */
  span: number;
  /** Tiles per series. */
  tiles: number;
  /** Dynamic shared memory of the launch: span + up × perClass doubles. */
  sharedMemBytes: number;
}

/** Samples a tile of up × perClass outputs reads: from phaseTaps − 1 before its first output's input to its last output's. */
export function tileSpan(perClass: number, phaseTaps: number, up: number, down: number): number {
  return Math.floor(((up * perClass - 1) * down) / up) + phaseTaps;
}

/**
 * The tiling of outputs [start, start + outLength) of upfirdn with `ntaps` taps, or undefined where
 * the untiled kernel (one thread per output, reading its samples from global memory) is the one to
 * run: where a phase's taps reach fewer samples than `down` (phaseTaps × up < down, as the one-tap
 * decimation after decimate's IIR filter), staging would read samples no output uses; and where even
 * a tile of `up` outputs needs more samples (and sums) than TILE_SHARED_BYTES holds (very long taps).
 * `target` is the outputs a tile aims at (tests pass small ones to exercise many tile edges).
 */
export function upfirdnTiling(
  ntaps: number,
  up: number,
  down: number,
  start: number,
  outLength: number,
  target = TILE_OUTPUTS,
): UpfirdnTiling | undefined {
  const phaseTaps = Math.ceil(ntaps / up);
  if (phaseTaps * up < down) return undefined;
  const slots = TILE_SHARED_BYTES / 8;
  const fits = (n: number): boolean => tileSpan(n, phaseTaps, up, down) + up * n <= slots;
  // The largest n (at most the target's) that fits: tileSpan(n) + up·n <= n·(down + up) + phaseTaps − 1
  // gives a start at most a step or two short of it.
  const cap = Math.max(1, Math.floor(target / up));
  let perClass = Math.max(0, Math.min(cap, Math.floor((slots - phaseTaps + 1) / (down + up))));
  while (perClass < cap && fits(perClass + 1)) perClass++;
  if (perClass < 1) return undefined;
  const span = tileSpan(perClass, phaseTaps, up, down);
  const first = Math.floor(start / up) * up;
  const tiles = Math.ceil((start + outLength - first) / (up * perClass));
  return { phaseTaps, perClass, span, tiles, sharedMemBytes: 8 * (span + up * perClass) };
}

/** The taps phase by phase: phased[p · phaseTaps + m] = taps[p + m · up], zero past the last tap. */
export function phasedTaps(taps: Float64Array, up: number, phaseTaps: number): Float64Array {
  const phased = new Float64Array(up * phaseTaps);
  for (let p = 0; p < up; p++)
    for (let m = 0; m < phaseTaps && p + m * up < taps.length; m++) phased[p * phaseTaps + m] = taps[p + m * up]!;
  return phased;
}
