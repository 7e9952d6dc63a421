/** Why a serve row missed its floor goal, from its own measurements (bench/serve/floor-reasons.ts). */
import { describe, expect, it } from 'vitest';
import { missReasons } from '../../../bench/serve/floor-reasons.js';
import type { FloorRow, SideMeasure } from '../../../bench/serve/floors.js';

function side(rps: number, cpuMsPerRequest: number | null, gpuBusy: number | null = null): SideMeasure {
  return { rps, p50Ms: 1, p99Ms: 2, cpuMsPerRequest, eventLoopLagP99Ms: null, gpuBusy, errors: 0, non2xx: 0 };
}

function row(tscuda: SideMeasure, floor: SideMeasure, workers = 1): FloorRow {
  const ratio = tscuda.rps / floor.rps;
  return {
    name: 'small f32',
    workers,
    defaultWorkers: false,
    concurrency: 64,
    wire: 'f32',
    bytesIn: 65_536,
    bytesOut: 2_000,
    tscuda,
    floor,
    metrics: [],
    gbPerSPerCore: { tscuda: null, floor: null },
    goal: { kind: 'floor-min', value: 0.8 },
    met: ratio >= 0.8,
  };
}

describe('missReasons', () => {
  it('says nothing of rows that met their goal', () => {
    expect(missReasons([row(side(900, 1), side(1000, 0.9))])).toEqual([]);
  });

  it('a CPU-bound server: its CPU per request against the floor, the cores busy and the GPU busy', () => {
    // 6000 req/s at 0.16 ms = 0.96 cores of 1; the floor 24000 req/s at 0.04 ms.
    const [line] = missReasons([row(side(6000, 0.16, 0.03), side(24_000, 0.04))]);
    expect(line).toContain('0.25 of the floor');
    expect(line).toContain("0.160 CPU ms per request against the floor's 0.040 (4.0x");
    expect(line).toContain('CPU-bound (0.96 cores busy)');
    expect(line).toContain('GPU busy 0.03');
  });

  it('a server that is not CPU-bound is not blamed on its CPU', () => {
    const [line] = missReasons([row(side(2000, 0.2), side(24_000, 0.04), 2)]);
    expect(line).toContain('0.40 cores busy of 2');
    expect(line).not.toContain('CPU-bound');
  });

  it('no CPU reading: says so instead of a reason', () => {
    const [line] = missReasons([row(side(100, null), side(1000, 0.1))]);
    expect(line).toContain('not measured');
  });
});
