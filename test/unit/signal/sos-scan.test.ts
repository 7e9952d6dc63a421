/**
 * The host side of sosfilt's parallel-in-time kernels (src/signal/sos-scan.ts), against the recurrence
 * itself stepped sample by sample (test/unit/signal/emulation/filter-references.ts): each section
 * table's scan transitions and zero-input responses, the cascade's transitions over a tile and a group
 * of tiles, the cut of a series into tiles and groups, the scratch, and the constants filter.cu is
 * compiled with.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { butter, cheby1, type Sos } from '../../../src/signal/index.js';
import {
  GROUP_SECTIONS,
  groupTransitions,
  LANE_SAMPLES,
  LANES,
  matrixPower,
  SCAN_STEPS,
  scanGeometry,
  scanScratch,
  scanScratchPerSeries,
  SECTION_STRIDE,
  sectionTable,
  TILE,
  TILE_THREADS,
} from '../../../src/signal/sos-scan.js';
import { sosfiltSequential } from './emulation/filter-references.js';

/** The zero-input run of `sos` for `steps` samples from `state` (sections × 2): its outputs and final state. */
function unforced(sos: Sos, state: ArrayLike<number>, steps: number): { y: Float64Array; zf: Float64Array } {
  return sosfiltSequential(sos, new Float64Array(steps), state);
}

/** max |a − b| / max |b|. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return num / (den || 1);
}

const matVec = (m: ArrayLike<number>, v: ArrayLike<number>, d: number): Float64Array =>
  Float64Array.from({ length: d }, (_, i) => Array.from(v).reduce((acc, vj, j) => acc + m[i * d + j]! * vj, 0));

const narrow = butter(8, [0.1, 0.12], { btype: 'bandpass' });

describe('sosfilt scan tables', () => {
  it('a section row holds its coefficients, A^(L·2^k) and h_t as the recurrence steps them', () => {
    for (const sos of [narrow, cheby1(3, 1, 0.3)]) {
      const table = sectionTable(Float64Array.from(sos.flat()), sos.length);
      expect(table.length).toBe(sos.length * SECTION_STRIDE);
      sos.forEach((section, s) => {
        const row = table.subarray(s * SECTION_STRIDE, (s + 1) * SECTION_STRIDE);
        const [b0, b1, b2, , a1, a2] = section;
        expect(Array.from(row.subarray(0, 5))).toEqual([b0, b1, b2, a1, a2]);
        const state = [Math.random() - 0.5, Math.random() - 0.5];
        // h_t · s is the output t samples after the state s with no input.
        const run = unforced([section], state, LANE_SAMPLES + 1);
        for (let t = 0; t <= LANE_SAMPLES; t++) {
          const h = row.subarray(5 + 4 * SCAN_STEPS + 2 * t);
          expect(h[0]! * state[0]! + h[1]! * state[1]!).toBeCloseTo(run.y[t]!, 12);
        }
        // A^(L·2^k) s is the state L·2^k samples later.
        for (let k = 0; k < SCAN_STEPS; k++) {
          const later = unforced([section], state, LANE_SAMPLES * 2 ** k).zf;
          expect(relErr(matVec(row.subarray(5 + 4 * k, 9 + 4 * k), state, 2), later)).toBeLessThan(1e-12);
        }
      });
    }
  });

  it("the cascade's transitions over a tile and a group of tiles move its whole state as the recurrence does", () => {
    for (const [sos, group] of [
      [narrow, 3],
      [butter(5, 0.2), 1],
    ] as const) {
      const d = 2 * sos.length;
      const t = groupTransitions(Float64Array.from(sos.flat()), sos.length, group);
      expect(t.length).toBe(2 * d * d);
      const state = Float64Array.from({ length: d }, () => Math.random() - 0.5);
      const tile = unforced(sos, state, TILE).zf;
      expect(relErr(matVec(t.subarray(0, d * d), state, d), tile)).toBeLessThan(1e-10);
      const groupEnd = unforced(sos, state, TILE * group).zf;
      expect(relErr(matVec(t.subarray(d * d), state, d), groupEnd)).toBeLessThan(1e-10);
    }
  });

  it('matrixPower: A^0 is the identity, powers compose', () => {
    const a = Float64Array.of(0.5, 1, -0.25, 0);
    expect(Array.from(matrixPower(a, 2, 0))).toEqual([1, 0, 0, 1]);
    expect(Array.from(matrixPower(a, 2, 1))).toEqual(Array.from(a));
    const a5 = matrixPower(a, 2, 5);
    const a2a3 = matVec(matrixPower(a, 2, 2), matVec(matrixPower(a, 2, 3), [1, 0], 2), 2);
    expect(relErr([a5[0]!, a5[2]!], a2a3)).toBeLessThan(1e-15);
  });
});

describe('sosfilt scan geometry', () => {
  it('cuts a series into tiles, the tiles with an end state into about √tiles groups', () => {
    expect(scanGeometry(1)).toEqual({ tiles: 1, group: 1, groups: 0 });
    expect(scanGeometry(TILE)).toEqual({ tiles: 1, group: 1, groups: 0 });
    expect(scanGeometry(TILE + 1)).toEqual({ tiles: 2, group: 1, groups: 1 });
    expect(scanGeometry(2 * TILE)).toEqual({ tiles: 2, group: 1, groups: 1 });
    expect(scanGeometry(10 * TILE)).toEqual({ tiles: 10, group: 3, groups: 3 });
    expect(scanGeometry(19 * TILE + 1)).toEqual({ tiles: 20, group: 5, groups: 4 });
    for (const length of [3 * TILE, 1 << 20, 16 << 20, 1e9]) {
      const { tiles, group, groups } = scanGeometry(length);
      expect(tiles).toBe(Math.ceil(length / TILE));
      expect(groups * group).toBeGreaterThanOrEqual(tiles - 1); // every tile with an end state is in a group
      expect((groups - 1) * group).toBeLessThan(tiles - 1); // and the last group is not empty
      expect(group).toBeLessThanOrEqual(Math.sqrt(tiles) + 1);
    }
  });

  it('scratch: start states of every section, end states of one launch of sections, a float32 copy past one launch', () => {
    expect(scanScratch(100, 4, 'f32')).toEqual({ init: 8, ends: 0, carries: 0, wide: 0 });
    expect(scanScratch(19 * TILE + 1, 8, 'f64')).toEqual({ init: 16, ends: 20 * 16, carries: 4 * 16, wide: 0 });
    expect(scanScratch(5000, 20, 'f64')).toEqual({ init: 40, ends: 5 * 32, carries: 2 * 32, wide: 0 });
    expect(scanScratch(5000, 20, 'f32')).toEqual({ init: 40, ends: 5 * 32, carries: 2 * 32, wide: 5000 });
    expect(scanScratch(5000, GROUP_SECTIONS, 'f32').wide).toBe(0);
    expect(scanScratchPerSeries(5000, 20, 'f32')).toBe(40 + 160 + 64 + 5000);
  });

  it('the constants are the ones src/kernels/filter.cu is compiled with', () => {
    const cu = readFileSync(join(import.meta.dirname, '../../../src/kernels/filter.cu'), 'utf8');
    const define = (name: string): number => Number(new RegExp(`#define ${name} (\\d+)`).exec(cu)?.[1]);
    expect(define('SOS_LANES')).toBe(LANES);
    expect(define('SOS_LANE_SAMPLES')).toBe(LANE_SAMPLES);
    expect(2 ** define('SOS_SCAN_STEPS')).toBe(LANES);
    expect(define('SOS_GROUP_SECTIONS')).toBe(GROUP_SECTIONS);
    expect(define('SOS_TILE_WARPS') * LANES).toBe(TILE_THREADS);
    expect(cu).toContain('#define SOS_SECTION_STRIDE (SOS_RESPONSE + 2 * (SOS_LANE_SAMPLES + 1))');
    expect(cu).toContain('#define SOS_RESPONSE (SOS_POWERS + 4 * SOS_SCAN_STEPS)');
    expect(define('SOS_POWERS')).toBe(5);
    expect(SECTION_STRIDE).toBe(5 + 4 * SCAN_STEPS + 2 * (LANE_SAMPLES + 1));
  });
});
