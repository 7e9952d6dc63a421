/**
 * The tiled polyphase kernel (filter.cu upfirdn_tiled_{f32,f64}) compiled for the CPU, every thread
 * of a block emulated with its shared memory and barriers (harness.cpp), planned by
 * upfirdn-tiling.ts as upfirdn.ts plans it, against upfirdn's float64 definition: rates up and
 * down, up = down, taps longer than the series, lengths 1 and 2, output windows (resample_poly's and
 * arbitrary ones), batches, and tiles small enough that outputs straddle many tile edges, with
 * fewer blocks than tiles (grid strides) and threads that each take several outputs. Random
 * inputs (never zeros), f32 and f64. Skipped, with the reason, where g++ is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { resamplePolyPlan, upfirdnLength } from '../../../src/signal/index.js';
import { phasedTaps, TILE_SHARED_BYTES, tileSpan, upfirdnTiling } from '../../../src/signal/upfirdn-tiling.js';
import { arr, emu, launchCooperative, loadEmulatedKernels, typed, type Arr, type P } from './emulation/emulator.js';
import { upfirdnReference } from './emulation/references.js';

/** Per unit of the output's scale (Σ|h| · max|x|): f32 stores round to 2^-24, f64 sums to a few ulps. */
const TOL: Record<P, number> = { f32: 2e-7, f64: 1e-14 };
const skip = emu.so ? '' : emu.reason;

/** Random samples in ±[0.1, 1): never zero, both signs. */
const random = (n: number): Float64Array =>
  Float64Array.from({ length: n }, () => (Math.random() < 0.5 ? -1 : 1) * (0.1 + 0.9 * Math.random()));

/** What upfirdn.ts enqueues on the tiled path, with `target` outputs a tile and `grid`/`threads` of the emulated launch. */
function tiledKernel(
  p: P,
  h: Float64Array,
  x: Arr,
  batch: number,
  length: number,
  w: { up: number; down: number; start: number; outLength: number },
  launch: { target: number; grid: number; threads: number },
): Arr {
  const t = upfirdnTiling(h.length, w.up, w.down, w.start, w.outLength, launch.target);
  if (t === undefined) throw new Error('no tiling planned');
  const y = arr(p, batch * w.outLength);
  const phased = phasedTaps(h, w.up, t.phaseTaps);
  const grid = Math.min(launch.grid, batch * t.tiles);
  launchCooperative(`upfirdn_tiled_${p}`, grid, launch.threads, t.sharedMemBytes, x, y, phased, batch, length,
    t.phaseTaps, w.up, w.down, w.outLength, w.start, t.perClass, t.span, t.tiles); // prettier-ignore
  return y;
}

/** upfirdn's definition of each series, computed once per taps and input (every launch shape checks against it). */
const references = new WeakMap<Float64Array, WeakMap<Arr, Float64Array[]>>();
function definition(h: Float64Array, x: Arr, batch: number, length: number, w: Window): Float64Array[] {
  const byInput = references.get(h) ?? new WeakMap<Arr, Float64Array[]>();
  references.set(h, byInput);
  let refs = byInput.get(x);
  if (refs === undefined) {
    refs = Array.from({ length: batch }, (_, b) =>
      upfirdnReference(h, x.subarray(b * length, (b + 1) * length), w.up, w.down),
    );
    byInput.set(x, refs);
  }
  return refs;
}

/** Checks each series of y against the window of upfirdn's definition, relative to the output's scale. */
function expectDefinition(
  p: P,
  y: Arr,
  h: Float64Array,
  x: Arr,
  batch: number,
  length: number,
  w: Window,
  what: string,
): void {
  let peak = 0;
  for (const v of x) peak = Math.max(peak, Math.abs(v));
  const scale = h.reduce((a, v) => a + Math.abs(v), 0) * peak;
  const refs = definition(h, x, batch, length, w);
  for (let b = 0; b < batch; b++) {
    const ref = refs[b]!;
    let e = 0;
    for (let i = 0; i < w.outLength; i++) {
      const want = w.start + i < ref.length ? ref[w.start + i]! : 0;
      e = Math.max(e, Math.abs(y[b * w.outLength + i]! - want));
    }
    expect(Number.isNaN(e) ? Infinity : e, `${what}, series ${b}`).toBeLessThanOrEqual(TOL[p] * scale);
  }
}

type Window = { up: number; down: number; start: number; outLength: number };

/** [length, ntaps, up, down]: downsampling, upsampling, up = down (unreduced too), taps longer than the series, lengths 1 and 2. */
const SHAPES = [
  [37, 11, 3, 7],
  [40, 64, 7, 3],
  [64, 9, 1, 1],
  [33, 8, 4, 4],
  [50, 13, 1, 5],
  [51, 5, 2, 1],
  [1, 5, 4, 1],
  [1, 7, 2, 3],
  [2, 3, 1, 2],
  [2, 9, 3, 2],
  [5, 64, 2, 3],
  [45, 31, 160, 147],
] as const;

/** Launch shapes: tiles of a handful of outputs over few blocks and threads (many edges, grid strides), and the default. */
const LAUNCHES = [
  { target: 1, grid: 2, threads: 3 },
  { target: 7, grid: 3, threads: 4 },
  { target: 16, grid: 5, threads: 32 },
  { target: 1024, grid: 3, threads: 64 },
];

describe.skipIf(!!skip)(
  `tiled upfirdn kernel emulated on the CPU, every thread of a block${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 60_000 },
  () => {
    beforeAll(loadEmulatedKernels);

    for (const p of ['f32', 'f64'] as const) {
      it(`equals upfirdn's definition over rates, taps longer than the series, lengths 1 and 2 and tile edges (${p})`, () => {
        const batch = 3;
        for (const [length, ntaps, up, down] of SHAPES) {
          const h = random(ntaps);
          const x = typed(p, random(batch * length));
          const w = { up, down, start: 0, outLength: upfirdnLength(ntaps, length, up, down) };
          for (const launch of LAUNCHES) {
            const y = tiledKernel(p, h, x, batch, length, w, launch);
            expectDefinition(
              p,
              y,
              h,
              x,
              batch,
              length,
              w,
              `${length}x${ntaps} ${up}/${down} ${JSON.stringify(launch)}`,
            );
          }
        }
      });

      it(`gives the output windows resample_poly and decimate ask for, and arbitrary ones (${p})`, () => {
        const batch = 2;
        for (const [length, up, down] of [
          [50, 3, 7],
          [41, 7, 3],
          [2, 5, 2],
          [1, 2, 3],
          [30, 1, 3],
        ] as const) {
          const plan = resamplePolyPlan(length, up, down);
          const x = typed(p, random(batch * length));
          const full = upfirdnLength(plan.taps.length, length, plan.up, plan.down);
          for (const w of [
            plan,
            { ...plan, start: 3, outLength: full - 5 },
            { ...plan, start: full - 1, outLength: 1 },
          ]) {
            if (w.outLength < 1) continue;
            for (const launch of LAUNCHES) {
              const y = tiledKernel(p, plan.taps, x, batch, length, w, launch);
              expectDefinition(
                p,
                y,
                plan.taps,
                x,
                batch,
                length,
                w,
                `${length} ${up}/${down} [${w.start}, +${w.outLength})`,
              );
            }
          }
        }
      });
    }

    it('plans a tile wherever every sample reaches an output and the tile fits shared memory, else the untiled kernel', () => {
      // resample_poly(x, 3, 7)'s default taps: 48 per phase, a tile of 1023 outputs.
      const plan = resamplePolyPlan(1 << 20, 3, 7);
      const t = upfirdnTiling(plan.taps.length, 3, 7, plan.start, plan.outLength)!;
      expect(t.phaseTaps).toBe(Math.ceil(plan.taps.length / 3));
      expect(t.perClass * 3).toBeLessThanOrEqual(1024);
      expect(t.span).toBe(tileSpan(t.perClass, t.phaseTaps, 3, 7));
      expect(t.sharedMemBytes).toBeLessThanOrEqual(TILE_SHARED_BYTES);
      expect(t.tiles * t.perClass * 3).toBeGreaterThanOrEqual(plan.start + plan.outLength - (plan.start % 3));
      // decimate's one-tap keeping of every q-th sample: staging would read q − 1 unused samples of q.
      expect(upfirdnTiling(1, 1, 4, 0, 100)).toBeUndefined();
      // Taps whose phase needs more samples than a tile's shared memory holds.
      expect(upfirdnTiling(TILE_SHARED_BYTES / 8 + 1, 1, 1, 0, 100)).toBeUndefined();
      // The largest tile that fits, for long taps: its samples and sums just within the shared memory.
      const long = upfirdnTiling(TILE_SHARED_BYTES / 8 - 10, 1, 2, 0, 100)!;
      expect(long.sharedMemBytes).toBe(8 * (long.span + long.perClass));
      expect(long.sharedMemBytes).toBeLessThanOrEqual(TILE_SHARED_BYTES);
      expect(8 * (tileSpan(long.perClass + 1, long.phaseTaps, 1, 2) + long.perClass + 1)).toBeGreaterThan(
        TILE_SHARED_BYTES,
      );
    });

    it('the phased taps: phase p holds taps p, p + up, ..., zeros past the last', () => {
      expect(Array.from(phasedTaps(Float64Array.of(1, 2, 3, 4, 5), 3, 2))).toEqual([1, 4, 2, 5, 3, 0]);
      expect(Array.from(phasedTaps(Float64Array.of(1, 2, 3), 1, 3))).toEqual([1, 2, 3]);
    });
  },
);
