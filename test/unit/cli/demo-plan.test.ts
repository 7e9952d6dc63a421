import FFT from 'fft.js';
import { describe, expect, it } from 'vitest';
import {
  DEMO_FS,
  dominantIndexOf,
  formatTable,
  jobTimelineRecords,
  matchCycles,
  plantedCycles,
  synthesizeDemo,
  type JobTrace,
} from '../../../src/cli/commands/demo-plan.js';
import type { DominantCycle } from '../../../src/engine/types.js';

/** |X_k|^2 of the linearly detrended, Hann-windowed row (the engine's flow), float64. */
function powerSpectrum(row: ArrayLike<number>): Float64Array {
  const n = row.length;
  const tMean = (n - 1) / 2;
  let mean = 0;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) mean += row[i]!;
  mean /= n;
  for (let i = 0; i < n; i++) {
    num += row[i]! * (i - tMean);
    den += (i - tMean) ** 2;
  }
  const x = Array.from(
    { length: n },
    (_, i) => (row[i]! - mean - (num / den) * (i - tMean)) * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n)),
  );
  const f = new FFT(n);
  const out = f.createComplexArray() as number[];
  f.realTransform(out, x);
  const p = new Float64Array(n / 2 + 1);
  for (let k = 0; k <= n / 2; k++) p[k] = out[2 * k]! ** 2 + out[2 * k + 1]! ** 2;
  return p;
}

describe('demo signal', () => {
  it('plants cycles on exact bins, with bands around them', () => {
    const planted = plantedCycles(65536);
    expect(planted.map((p) => p.bin)).toEqual([164, 786, 2621, 7209]);
    for (const p of planted) {
      expect(p.frequency).toBeCloseTo((p.bin * DEMO_FS) / 65536, 12);
      expect(p.period).toBeCloseTo(1 / p.frequency, 12);
      expect(p.band[0]).toBeLessThan(p.frequency);
      expect(p.band[1]).toBeGreaterThan(p.frequency);
    }
  });

  it('makes the planted cycle of each series its strongest non-DC bin after detrend and window', () => {
    const n = 8192;
    const batch = 8;
    const x = synthesizeDemo(batch, n);
    expect(x).toHaveLength(batch * n);
    expect(x.every(Number.isFinite)).toBe(true);
    const planted = plantedCycles(n);
    for (let s = 0; s < batch; s++) {
      const p = powerSpectrum(x.subarray(s * n, (s + 1) * n));
      let best = 1;
      for (let k = 2; k < p.length; k++) if (p[k]! > p[best]!) best = k;
      expect(best, `series ${s}`).toBe(planted[dominantIndexOf(s, planted.length)]!.bin);
    }
  });

  it('is the same every run, differs between series, and writes into a given array', () => {
    const a = synthesizeDemo(2, 1024);
    const b = synthesizeDemo(2, 1024, { into: new Float32Array(2048) });
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
    expect(a.subarray(0, 1024)).not.toEqual(a.subarray(1024));
    expect(() => synthesizeDemo(2, 1024, { into: new Float32Array(10) })).toThrow(
      /holds 10 samples, expected 2 x 1024/,
    );
  });
});

describe('cycle matching', () => {
  const n = 65536;
  const planted = plantedCycles(n);
  const cycle = (frequency: number, amplitude = 2): DominantCycle => ({
    frequency,
    period: 1 / frequency,
    amplitude,
    phase: 0,
  });

  it('counts the series whose dominant bin is the planted one', () => {
    const dominant = Array.from({ length: 8 }, (_, s) =>
      cycle(planted[dominantIndexOf(s, 4)]!.frequency, 1.9 + s / 100),
    );
    dominant[5] = cycle(planted[1]!.frequency + 3 * (DEMO_FS / n)); // three bins off
    const m = matchCycles(dominant, planted, n);
    expect(m.map((r) => [r.series, r.found])).toEqual([
      [2, 2],
      [2, 1],
      [2, 2],
      [2, 2],
    ]);
    expect(m[1]!.worstFrequencyError).toBeCloseTo(3 * (DEMO_FS / n), 12);
    expect(m[0]!.medianAmplitude).toBeCloseTo((1.9 + 1.94) / 2, 12);
  });
});

describe('job timeline and tables', () => {
  it('keeps the last window of jobs, one row per lane, starting at 0', () => {
    const jobs: JobTrace[] = Array.from({ length: 100 }, (_, i) => ({
      id: i,
      lane: i % 4,
      submittedMs: 1000 + i * 10,
      queuedMs: 1,
      runMs: 20,
      gpuMs: 15,
      samples: 4_194_304,
    }));
    const r = jobTimelineRecords(jobs, 100);
    const last = 1000 + 99 * 10 + 21;
    expect(r.length).toBe(jobs.filter((j) => j.submittedMs + 21 >= last - 100).length);
    expect(Math.min(...r.map((x) => x.startMs))).toBe(0);
    expect(new Set(r.map((x) => x.stream))).toEqual(new Set(['lane 0', 'lane 1', 'lane 2', 'lane 3']));
    expect(r[0]!.name).toMatch(/^job \d+: 4\.19 M samples, GPU 15\.00 ms$/);
    expect(jobTimelineRecords([])).toEqual([]);
  });

  it('aligns a table', () => {
    expect(
      formatTable([
        ['a', 'bb'],
        ['ccc', '1'],
        ['d', '22'],
      ]),
    ).toBe('a    bb\n---  --\nccc   1\nd    22');
  });
});
