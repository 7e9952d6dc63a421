/**
 * JobEngine's compute graphs (its lanes': src/pipeline/lanes/compute-graphs.ts): a lane's place
 * captures a job shape's kernels and FFTs the second time it meets it and replays them after. Every job here has
 * fresh random data and poisoned result arrays, and is checked against the float64 reference, so
 * a replay that read a stale input, wrote a stale buffer or skipped a kernel fails; the counts in
 * engine.stats().computeGraphs show that replays happened.
 */
import { describe, expect, it } from 'vitest';
import { f16Value } from '../../../src/runtime/memory/half.js';
import { JobEngine, type JobResult, type JobSpec } from '../../../src/engine/index.js';
import { DEFAULT_MAX_FFT_PLANS } from '../../../src/runtime/fft/plan-cache.js';
import { signalWorkspace } from '../../../src/signal/workspace.js';
import { gpu } from '../gpu-available.js';
import { BANDS, engineFactory } from './engines.js';
import { hannPeriodic, referenceRow, relL2, rows, testSeries, type ReferenceRow } from './reference.js';

const skip = gpu.available ? '' : ` (skipped: ${gpu.reason})`;
const engine = engineFactory('test compute graphs');

interface Shape {
  batch: number;
  n: number;
  passBand: readonly [number, number];
  bandWaves: boolean;
}

function reference(x: ArrayLike<number>, s: Shape, previewBins: number): ReferenceRow[] {
  return Array.from({ length: s.batch }, (_, b) =>
    referenceRow(
      Array.from({ length: s.n }, (_, t) => x[b * s.n + t]!),
      {
        fs: 500,
        detrend: 'linear',
        window: hannPeriodic(s.n),
        passBand: s.passBand,
        previewBins,
        bands: BANDS,
      },
    ),
  );
}

/** A job of `s` with fresh data and NaN-poisoned result arrays, and its float64 reference. */
function job(s: Shape): { spec: JobSpec; ref: ReferenceRow[] } {
  const data = testSeries(s.batch, s.n, 17 + Math.floor(Math.random() * 40)) as Float32Array;
  const previewBins = 64;
  const into = {
    filtered: new Float32Array(s.batch * s.n).fill(Number.NaN),
    spectrum: new Float32Array(s.batch * previewBins).fill(Number.NaN),
    bandPowers: new Float64Array(s.batch * BANDS.length).fill(Number.NaN),
    ...(s.bandWaves ? { bandWaves: new Float32Array(s.batch * BANDS.length * s.n).fill(Number.NaN) } : {}),
  };
  return {
    spec: {
      data,
      batch: s.batch,
      fs: 500,
      flags: ['stft', 'cycles'],
      passBand: s.passBand,
      bands: BANDS,
      bandWaves: s.bandWaves,
      previewBins,
      into,
    },
    ref: reference(data, s, previewBins),
  };
}

function expectReference(
  r: JobResult,
  ref: ReferenceRow[],
  what: string,
  wave: (a: ArrayLike<number>) => ArrayLike<number> = (a) => a,
  waveTol = 5e-5,
): void {
  const n = r.length;
  for (let b = 0; b < ref.length; b++) {
    const e = ref[b]!;
    expect(relL2(rows(wave(r.filtered!), n, b, 1), e.filtered), `${what} filtered row ${b}`).toBeLessThan(waveTol);
    expect(relL2(rows(r.spectrum!, e.spectrum.length, b, 1), e.spectrum), `${what} spectrum row ${b}`).toBeLessThan(
      5e-5,
    );
    expect(relL2(rows(r.bandPowers!, BANDS.length, b, 1), e.bandPowers), `${what} band powers row ${b}`).toBeLessThan(
      5e-5,
    );
    if (r.bandWaves)
      expect(
        relL2(rows(wave(r.bandWaves), BANDS.length * n, b, 1), e.bandWaves),
        `${what} band waves row ${b}`,
      ).toBeLessThan(waveTol);
    expect(r.dominant![b]!.bin, `${what} dominant bin row ${b}`).toBe(e.dominant.bin);
  }
}

describe.skipIf(!gpu.available)(`JobEngine compute graphs${skip}`, () => {
  it('one place, one shape, eight jobs of fresh data: run, captured, then replayed, each equal to its reference', async () => {
    const e = engine({ lanes: 1, laneDepth: 1 });
    const shape: Shape = { batch: 3, n: 2048, passBand: [20, 120], bandWaves: true };
    for (let i = 0; i < 8; i++) {
      const { spec, ref } = job(shape);
      expectReference(await e.submit(spec).result, ref, `job ${i}`);
    }
    expect(e.stats().computeGraphs).toEqual({ eager: 1, captured: 1, replayed: 6 });
  }, 60_000);

  it('jobs in flight on two places of two lanes replay concurrently and stay apart', async () => {
    const e = engine({ lanes: 2, laneDepth: 2 });
    const shape: Shape = { batch: 4, n: 4096, passBand: [30, 200], bandWaves: false };
    for (let round = 0; round < 4; round++) {
      const jobs = Array.from({ length: 8 }, () => job(shape));
      const results = await Promise.all(jobs.map((j) => e.submit(j.spec).result));
      results.forEach((r, i) => expectReference(r, jobs[i]!.ref, `round ${round} job ${i}`));
    }
    const c = e.stats().computeGraphs!;
    expect(c.eager + c.captured + c.replayed).toBe(32);
    expect(c.replayed).toBeGreaterThan(16);
  }, 60_000);

  it('shapes and parameters change between jobs: each key gets its own graph, a bigger job retires them, results stay right', async () => {
    const e = engine({ lanes: 1, laneDepth: 1 });
    const shapes: Shape[] = [
      { batch: 2, n: 1024, passBand: [20, 120], bandWaves: true },
      { batch: 2, n: 1024, passBand: [60, 180], bandWaves: true },
      { batch: 2, n: 1024, passBand: [20, 120], bandWaves: false },
      { batch: 5, n: 3000, passBand: [20, 120], bandWaves: true }, // bigger: the lane's buffers grow
    ];
    for (let round = 0; round < 4; round++)
      for (const [k, s] of shapes.entries()) {
        const { spec, ref } = job(s);
        expectReference(await e.submit(spec).result, ref, `round ${round} shape ${k}`);
      }
    expect(e.stats().computeGraphs!.replayed).toBeGreaterThan(0);
  }, 60_000);

  it('i16 samples in, f16 waves out: replays equal the reference and the engine without graphs', async () => {
    const withGraphs = engine({ lanes: 1, laneDepth: 1 });
    const without = engine({ lanes: 1, laneDepth: 1, computeGraphs: false });
    const batch = 2;
    const n = 4096;
    const scale = 1 / 4096;
    for (let i = 0; i < 5; i++) {
      const x = testSeries(batch, n, 50 + i, Float64Array);
      const data = Int16Array.from(x, (v) => Math.max(-32768, Math.min(32767, Math.round(v / scale))));
      const values = Float64Array.from(data, (q) => q * scale);
      const spec: JobSpec = {
        data,
        batch,
        scale,
        fs: 500,
        flags: ['stft', 'cycles'],
        passBand: [20, 120],
        bands: BANDS,
        bandWaves: true,
        previewBins: 64,
        outputDtype: 'f16',
      };
      const [a, b] = await Promise.all([withGraphs.submit(spec).result, without.submit(spec).result]);
      const ref = reference(values, { batch, n, passBand: [20, 120], bandWaves: true }, 64);
      const decode = (bits: ArrayLike<number>): Float64Array => Float64Array.from(Array.from(bits, f16Value));
      expectReference(a, ref, `i16 job ${i} with graphs`, decode, 1e-3);
      expectReference(b, ref, `i16 job ${i} without graphs`, decode, 1e-3);
      let differ = 0;
      for (let t = 0; t < a.filtered!.length; t++)
        if (Math.abs((a.filtered![t] as number) - (b.filtered![t] as number)) > 1) differ++;
      expect(differ, `job ${i}: f16 filtered values more than one unit apart with and without graphs`).toBe(0);
    }
    expect(withGraphs.stats().computeGraphs!.replayed).toBe(3);
    expect(without.stats().computeGraphs).toBeUndefined();
  }, 60_000);

  it('more shapes than the plan cache keeps: plans are freed, graphs made with them are captured again, results stay right', async () => {
    const e = engine({ lanes: 1, laneDepth: 1 });
    const first: Shape = { batch: 2, n: 1024, passBand: [20, 120], bandWaves: false };
    for (let i = 0; i < 3; i++) {
      const { spec, ref } = job(first);
      expectReference(await e.submit(spec).result, ref, `first shape, job ${i}`);
    }
    const before = e.stats().computeGraphs!;
    expect(before.replayed).toBe(1);
    const plans = signalWorkspace.plans;
    const evictions = plans.evictions;
    // Each length needs a forward and an inverse plan: past DEFAULT_MAX_FFT_PLANS / 2 lengths the cache frees plans.
    const lengths = Array.from({ length: DEFAULT_MAX_FFT_PLANS / 2 + 4 }, (_, i) => 1040 + 16 * i);
    for (const n of lengths) {
      const { spec, ref } = job({ ...first, n });
      expectReference(await e.submit(spec).result, ref, `length ${n}`);
    }
    expect(plans.size).toBeLessThanOrEqual(DEFAULT_MAX_FFT_PLANS);
    expect(plans.evictions).toBeGreaterThan(evictions);
    // The first shape's graph refers to freed plans: it must be captured again, never replayed stale.
    for (let i = 0; i < 3; i++) {
      const { spec, ref } = job(first);
      expectReference(await e.submit(spec).result, ref, `first shape again, job ${i}`);
    }
    expect(e.stats().computeGraphs!.captured).toBeGreaterThan(before.captured);
  }, 120_000);

  it('computeGraphs must be a boolean', () => {
    expect(() => new JobEngine({ computeGraphs: 'yes' as unknown as boolean })).toThrow(
      /computeGraphs must be true or false/,
    );
  });
});
