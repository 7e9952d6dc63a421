import { describe, expect, it } from 'vitest';
import { LaneStatsRecorder, RecentValues, engineStats, percentileOf } from '../../../src/engine/stats.js';

describe('engine statistics', () => {
  it('RecentValues keeps a bounded window: average and nearest-rank p99 over the last values only', () => {
    const r = new RecentValues(100);
    for (let i = 0; i < 1000; i++) r.push(i < 900 ? 1e6 : i - 899); // the old huge values fall out
    expect(r.size).toBe(100);
    expect(r.average()).toBeCloseTo(50.5, 10);
    expect(r.percentile(99)).toBe(99);
    expect(r.percentile(100)).toBe(100);
    expect(percentileOf(new Float64Array(), 99)).toBe(0);
  });

  it('per lane: jobs, errors, samples/s over the active span, bytes, GPU busy fraction', () => {
    const lane = new LaneStatsRecorder(2, 1);
    lane.record({ ok: true, runMs: 10, gpuMs: 5, samples: 1000, bytesMoved: 8000, startedAt: 100, endedAt: 110 });
    lane.record({ ok: true, runMs: 30, gpuMs: 15, samples: 3000, bytesMoved: 24000, startedAt: 110, endedAt: 140 });
    lane.record({ ok: false, runMs: 1, gpuMs: 0, samples: 500, bytesMoved: 100, startedAt: 140, endedAt: 141 });
    const s = lane.snapshot();
    expect(s).toMatchObject({ lane: 2, device: 1, jobs: 2, errors: 1, avgJobMs: 20, p99JobMs: 30, bytesMoved: 32100 });
    expect(s.samplesPerSecond).toBeCloseTo((4000 * 1000) / 41, 6);
    expect(s.gpuBusyFraction).toBeCloseTo(20 / 41, 10);
  });

  it('whole engine: sums, latencies over all lanes, busy fraction averaged over lanes, queue depth', () => {
    const a = new LaneStatsRecorder(0, 0);
    const b = new LaneStatsRecorder(1, 0);
    a.record({ ok: true, runMs: 10, gpuMs: 10, samples: 100, bytesMoved: 1, startedAt: 0, endedAt: 10 });
    b.record({ ok: true, runMs: 20, gpuMs: 10, samples: 300, bytesMoved: 2, startedAt: 0, endedAt: 20 });
    const s = engineStats([a, b], 3, 1);
    expect(s).toMatchObject({ jobs: 2, errors: 0, queued: 3, running: 1, avgJobMs: 15, p99JobMs: 20, bytesMoved: 3 });
    expect(s.samplesPerSecond).toBeCloseTo(400 / 0.02, 6);
    expect(s.gpuBusyFraction).toBeCloseTo(20 / 40, 10);
    expect(s.lanes).toHaveLength(2);
    expect(engineStats([new LaneStatsRecorder(0, 0)], 0, 0)).toMatchObject({
      jobs: 0,
      samplesPerSecond: 0,
      gpuBusyFraction: 0,
      avgJobMs: 0,
      p99JobMs: 0,
    });
  });

  it('per device: its lanes summed and spanned alone, in the order devices first appear among the lanes', () => {
    // Lanes interleave devices as JobEngine makes them: d0 l0, d1 l0, d0 l1, d1 l1.
    const lanes = [0, 1, 0, 1].map((device, i) => new LaneStatsRecorder(i, device));
    lanes[0]!.record({ ok: true, runMs: 10, gpuMs: 8, samples: 1000, bytesMoved: 10, startedAt: 0, endedAt: 10 });
    lanes[2]!.record({ ok: true, runMs: 30, gpuMs: 12, samples: 3000, bytesMoved: 30, startedAt: 0, endedAt: 20 });
    lanes[1]!.record({ ok: true, runMs: 5, gpuMs: 5, samples: 500, bytesMoved: 5, startedAt: 100, endedAt: 105 });
    lanes[3]!.record({ ok: false, runMs: 1, gpuMs: 1, samples: 7, bytesMoved: 1, startedAt: 105, endedAt: 106 });
    const s = engineStats(lanes, 0, 0);
    expect(s.devices.map((d) => d.device)).toEqual([0, 1]);
    const [d0, d1] = s.devices;
    expect(d0).toMatchObject({ device: 0, lanes: 2, jobs: 2, errors: 0, avgJobMs: 20, p99JobMs: 30, bytesMoved: 40 });
    expect(d0!.samplesPerSecond).toBeCloseTo(4000 / 0.02, 6);
    expect(d0!.gpuBusyFraction).toBeCloseTo(20 / (20 * 2), 10);
    expect(d1).toMatchObject({ device: 1, lanes: 2, jobs: 1, errors: 1, avgJobMs: 5, bytesMoved: 6 });
    expect(d1!.samplesPerSecond).toBeCloseTo(500 / 0.006, 6);
    // The devices add up to the engine.
    expect(d0!.jobs + d1!.jobs).toBe(s.jobs);
    expect(d0!.bytesMoved + d1!.bytesMoved).toBe(s.bytesMoved);
  });
});
