/**
 * sosfilt's parallel-in-time kernels (src/kernels/sos.cu) compiled for the CPU (the g++ emulation of
 * test/unit/signal/emulation, every thread of a block a real thread, __syncthreads a barrier) and
 * driven as src/signal/iir.ts drives them, against a float64 sequential reference written here
 * (transposed direct form II with an initial state, returning the final state too). Small tiles
 * (chunks of 4 samples, 8 threads) reach every edge quickly: series shorter than a chunk, one chunk,
 * one tile, a tile and one sample, partial last chunks; the product's shape (64 × 64) runs long
 * series, among them the narrow float64 band-pass that a float32 scan once failed. Skipped, with
 * the reason, where g++ is missing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { butter, cheby1, type Sos } from '../../../src/signal/index.js';
import {
  MAX_SCAN_SECTIONS,
  MIN_SCAN_LENGTH,
  SCAN_CHUNK,
  SCAN_SHARED,
  SCAN_ROW_THREADS,
  SCAN_THREADS,
  scanGeometry,
  scanPowers,
  usesScan,
} from '../../../src/signal/sos-scan.js';
import { sosStateReference } from './emulation/sos-reference.js';
import { emu, launch, launchBlocks, loadEmulatedKernels, typed, type Arr, type P } from './emulation/emulator.js';

/** max |a − b| / max |b|. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return Number.isNaN(num) ? Infinity : num / (den || 1);
}

/** Uniform in [-0.7, 1.3): never zero, with a mean, so the states carry something from the first sample. */
const random = (n: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() * 2 - 0.7);

/** The three launches of iir.ts at a chosen tile shape, over an emulated grid of `grid` blocks. */
function scanFilter(
  p: P,
  sos: Sos,
  x: Arr,
  batch: number,
  zi: Arr | undefined,
  chunk: number,
  threads: number,
  grid = 3,
) {
  const sections = sos.length;
  const flat = Float64Array.from(sos.flat());
  const n = x.length / batch;
  const powers = scanPowers(flat, sections, chunk, threads);
  const tree = new Float64Array(scanGeometry(batch, n, sections, chunk, threads).treeLength).fill(Number.NaN);
  const y = typed(p, new Float64Array(x.length).fill(Number.NaN));
  const zf = typed(p, new Float64Array(sections * batch * 2).fill(Number.NaN));
  const hasZi = zi ? 1 : 0;
  launchBlocks(grid, threads, `sos_scan_up_${p}`, x, flat, powers, tree, batch, n, sections, chunk);
  launchBlocks(
    grid,
    SCAN_ROW_THREADS,
    `sos_scan_tiles_${p}`,
    tree,
    powers,
    zi ?? x,
    batch,
    n,
    sections,
    chunk,
    threads,
    hasZi,
  );
  launchBlocks(grid, threads, `sos_scan_down_${p}`, x, y, flat, powers, tree, zf, batch, n, sections, chunk, 1);
  return { y, zf };
}

/** Tolerances of the parallel path against the float64 reference: f64 as docs/signal.md's 1e-11 (and tighter here), f32 the output's rounding. */
const TOL: Record<P, number> = { f32: 2e-6, f64: 1e-12 };

const skip = emu.so ? '' : emu.reason;

describe.skipIf(!!skip)(
  `sosfilt's parallel kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 60_000 },
  () => {
    beforeAll(loadEmulatedKernels);
    const band = cheby1(4, 0.5, [0.15, 0.4], { btype: 'bandpass' }); // 4 sections
    const batch = 3;

    for (const p of ['f32', 'f64'] as const) {
      it(`(${p}) small tiles: every length around a chunk and a tile, zi given or not, zf, equal the sequential reference`, () => {
        const [chunk, threads] = [4, 8];
        for (const n of [1, 2, 3, 4, 5, 8, 31, 32, 33, 63, 64, 65, 100, 257]) {
          const x64 = random(batch * n);
          const x = typed(p, x64);
          for (const withZi of [false, true]) {
            const zi = withZi ? typed(p, random(band.length * batch * 2)) : undefined;
            const r = scanFilter(p, band, x, batch, zi, chunk, threads);
            const ref = sosStateReference(band, x, batch, zi);
            expect(relErr(r.y, ref.y), `n ${n} zi ${withZi}`).toBeLessThan(TOL[p]);
            expect(relErr(r.zf, ref.zf), `zf n ${n} zi ${withZi}`).toBeLessThan(TOL[p]);
          }
        }
      });

      it(`(${p}) one section, sixteen sections and one emulated block (every tile in turn) agree with the reference`, () => {
        const lowpass = butter(2, 0.2); // one section
        const sixteen = butter(16, [0.1, 0.3], { btype: 'bandpass' });
        expect([lowpass.length, sixteen.length]).toEqual([1, 16]);
        for (const [sos, grid] of [
          [lowpass, 3],
          [sixteen, 3],
          [band, 1],
        ] as const) {
          const n = 301;
          const x = typed(p, random(batch * n));
          const zi = typed(p, random(sos.length * batch * 2));
          const r = scanFilter(p, sos, x, batch, zi, 4, 8, grid);
          const ref = sosStateReference(sos, x, batch, zi);
          expect(relErr(r.y, ref.y), `${sos.length} sections`).toBeLessThan(TOL[p] * 10);
          expect(relErr(r.zf, ref.zf), `${sos.length} sections zf`).toBeLessThan(TOL[p] * 10);
        }
      });

      it(`(${p}) in place (y = x) at the product's tile shape`, () => {
        const n = 2 * SCAN_CHUNK * SCAN_THREADS + 77;
        const x = typed(p, random(2 * n));
        const ref = sosStateReference(band, x, 2);
        const flat = Float64Array.from(band.flat());
        const powers = scanPowers(flat, band.length);
        const tree = new Float64Array(scanGeometry(2, n, band.length).treeLength);
        launchBlocks(3, SCAN_THREADS, `sos_scan_up_${p}`, x, flat, powers, tree, 2, n, band.length, SCAN_CHUNK);
        launchBlocks(
          2,
          SCAN_ROW_THREADS,
          `sos_scan_tiles_${p}`,
          tree,
          powers,
          x,
          2,
          n,
          band.length,
          SCAN_CHUNK,
          SCAN_THREADS,
          0,
        );
        launchBlocks(
          3,
          SCAN_THREADS,
          `sos_scan_down_${p}`,
          x,
          x,
          flat,
          powers,
          tree,
          x,
          2,
          n,
          band.length,
          SCAN_CHUNK,
          0,
        );
        expect(relErr(x, ref.y)).toBeLessThan(TOL[p]);
      });

      it(`(${p}) 7 pieces carried through zi/zf equal one pass, at the product's tile shape`, () => {
        const cuts = [0, 1, 70, 4096, 4097, 9000, 13_000, 20_011];
        const n = cuts.at(-1)!;
        const x64 = random(batch * n);
        const zi0 = typed(p, random(band.length * batch * 2));
        const whole = scanFilter(p, band, typed(p, x64), batch, zi0, SCAN_CHUNK, SCAN_THREADS);
        let state: Arr = zi0;
        const joined = new Float64Array(batch * n);
        for (let c = 0; c + 1 < cuts.length; c++) {
          const len = cuts[c + 1]! - cuts[c]!;
          const piece = new Float64Array(batch * len);
          for (let b = 0; b < batch; b++) piece.set(x64.subarray(b * n + cuts[c]!, b * n + cuts[c + 1]!), b * len);
          const r = scanFilter(p, band, typed(p, piece), batch, state, SCAN_CHUNK, SCAN_THREADS);
          for (let b = 0; b < batch; b++) joined.set(r.y.subarray(b * len, (b + 1) * len), b * n + cuts[c]!);
          state = r.zf;
        }
        expect(relErr(joined, whole.y)).toBeLessThan(TOL[p] * 5);
        expect(relErr(state, whole.zf)).toBeLessThan(TOL[p] * 5);
        const ref = sosStateReference(band, typed(p, x64), batch, zi0);
        expect(relErr(whole.y, ref.y)).toBeLessThan(TOL[p]);
      });

      it(`(${p}) a narrow band-pass (butter(8, [0.1, 0.102]), poles near the unit circle) over 200,000 samples equals the sequential kernel`, () => {
        const narrow = butter(8, [0.1, 0.102], { btype: 'bandpass' });
        const n = 200_000;
        const x = typed(p, random(2 * n));
        const zi = typed(p, random(narrow.length * 2 * 2));
        const r = scanFilter(p, narrow, x, 2, zi, SCAN_CHUNK, SCAN_THREADS);
        const ref = sosStateReference(narrow, x, 2, zi);
        const sequential = typed(p, new Float64Array(2 * n));
        const zfSequential = typed(p, new Float64Array(zi.length));
        const flat = Float64Array.from(narrow.flat());
        launch(`sosfilt_${p}`, x, sequential, flat, zi, zfSequential, 2, n, narrow.length, 1, 1);
        for (const [what, got, want] of [
          ['y', r.y, ref.y],
          ['zf', r.zf, ref.zf],
          ['sequential kernel', sequential, ref.y],
        ] as const)
          expect(relErr(got, want), what).toBeLessThan(p === 'f64' ? 1e-11 : TOL[p]);
      });
    }

    it('usesScan: long series with at most 16 sections', () => {
      expect(usesScan(MIN_SCAN_LENGTH, 8)).toBe(true);
      expect(usesScan(MIN_SCAN_LENGTH - 1, 8)).toBe(false);
      expect(usesScan(1 << 20, 16)).toBe(true);
      expect(usesScan(1 << 20, 17)).toBe(false);
      // The engine's filter scratch holds a double per sample: the tree never needs more, at the most sections.
      for (let n = MIN_SCAN_LENGTH; n < 5 * SCAN_CHUNK * SCAN_THREADS; n += 61)
        expect(scanGeometry(3, n, 16).treeLength).toBeLessThanOrEqual(3 * n);
    });

    it('scanPowers refuses shapes the kernels cannot run', () => {
      const flat = Float64Array.from(band.flat());
      expect(() => scanPowers(flat, band.length, 48, 8)).toThrow(/powers of two/);
      expect(() => scanPowers(flat, band.length, 128, 64)).toThrow(/shared/);
      expect(scanPowers(flat, band.length).length).toBe((Math.log2(SCAN_THREADS) + 1) * (2 * band.length) ** 2);
    });
  },
);

it("sos-scan.ts's shape constants are sos.cu's (the register budget, the shared array, the instantiated section counts)", () => {
  const source = readFileSync(join(import.meta.dirname, '../../../src/kernels/sos.cu'), 'utf8');
  const define = (name: string): number => Number(new RegExp(`#define ${name} (\\d+)`).exec(source)?.[1]);
  expect(define('SOS_SCAN_THREADS')).toBe(SCAN_THREADS);
  expect(define('SOS_SCAN_SHARED')).toBe(SCAN_SHARED);
  expect(define('SOS_SCAN_MAX_SECTIONS')).toBe(MAX_SCAN_SECTIONS);
  expect(source.match(/^ +CASE\(\d+\)/gm)?.length).toBe(MAX_SCAN_SECTIONS);
});
