import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../src/engine/engine-core.js';
import { FakeLane, tick } from './fake-lane.js';
import { rand, spec, engine } from './engine-core-fixture.js';

describe('EngineCore: lanes', () => {
  it('spreads jobs over idle lanes round robin, one job per lane at a time, across devices', async () => {
    const lanes = [new FakeLane(0), new FakeLane(0), new FakeLane(1), new FakeLane(1)];
    for (const l of lanes) l.hold = true;
    const e = engine(lanes, 100);
    expect(e.laneCount).toBe(4);
    expect(e.devices).toEqual([0, 1]);
    const jobs = Array.from({ length: 10 }, () => e.submit(spec()));
    await tick();
    expect(lanes.map((l) => l.runs.length)).toEqual([1, 1, 1, 1]);
    expect(e.stats()).toMatchObject({ running: 4, queued: 6 });
    // Release in a scrambled order: each freed lane takes the next job.
    while (jobs.some((j) => j.status !== 'ready')) {
      for (const i of [2, 0, 3, 1]) lanes[i]!.release();
      await tick();
      await tick();
    }
    for (const l of lanes) expect(l.maxInFlight).toBe(1);
    expect(lanes.reduce((s, l) => s + l.runs.length, 0)).toBe(10);
    const results = await Promise.all(jobs.map((j) => j.result));
    expect(new Set(results.map((r) => r.lane))).toEqual(new Set([0, 1, 2, 3]));
    expect(results.filter((r) => r.device === 1).length).toBeGreaterThan(0);
    await e.close();
  });

  it('a lane of depth 2 takes a second job while its first runs; idle lanes are still preferred', async () => {
    const lanes = [new FakeLane(0, 1 << 20, 2), new FakeLane(0, 1 << 20, 2)];
    for (const l of lanes) l.hold = true;
    const e = engine(lanes, 100);
    const jobs = Array.from({ length: 6 }, () => e.submit(spec()));
    await tick();
    // The first two go one per lane (least load), the next two fill each lane's second place.
    expect(lanes.map((l) => l.runs.length)).toEqual([2, 2]);
    expect(e.stats()).toMatchObject({ running: 4, queued: 2 });
    while (jobs.some((j) => j.status !== 'ready')) {
      for (const l of lanes) l.release();
      await tick();
      await tick();
    }
    for (const l of lanes) expect(l.maxInFlight).toBe(2);
    expect((await Promise.all(jobs.map((j) => j.result))).length).toBe(6);
    await e.close();
  });

  it('across devices each job goes to the least-loaded lane by samples in flight, not in turn; stats().devices splits the work', async () => {
    const lanes = [new FakeLane(0, 1 << 22, 2), new FakeLane(1, 1 << 22, 2)];
    for (const l of lanes) l.hold = true;
    const e = engine(lanes, 100);
    const big = e.submit(spec({ data: rand(64 * 1024), batch: 1024 })); // lane 0 (device 0): 65536 samples
    const small1 = e.submit(spec()); // lane 1 (device 1) is idle
    const small2 = e.submit(spec()); // lane 1 holds 128 samples, lane 0 65536: lane 1 again (its second place)
    await tick();
    expect(lanes.map((l) => l.runs.map(([id]) => id))).toEqual([[big.id], [small1.id, small2.id]]);
    while ([big, small1, small2].some((j) => j.status !== 'ready')) {
      for (const l of lanes) l.release();
      await tick();
      await tick();
    }
    const s = e.stats();
    expect(s.devices.map((d) => [d.device, d.lanes, d.jobs])).toEqual([
      [0, 1, 1],
      [1, 1, 2],
    ]);
    expect((await big.result).device).toBe(0);
    expect((await small2.result).device).toBe(1);
    await e.close();
  });

  it('a job with user stages runs alone on a deep lane: it waits for an empty lane and takes the lane whole', async () => {
    const lane = new FakeLane(0, 1 << 20, 2);
    lane.hold = true;
    const e = engine([lane], 100);
    const first = e.submit(spec());
    const staged = e.submit(spec({ flags: ['stft', 'supdem'] }));
    const after = e.submit(spec());
    await tick();
    expect([first.status, staged.status, after.status]).toEqual(['running', 'queued', 'queued']);
    lane.release();
    await first.result;
    await tick();
    expect([staged.status, after.status]).toEqual(['running', 'queued']);
    expect(after.cancel()).toBe(true);
    lane.release();
    await staged.result;
    expect(lane.maxInFlight).toBe(1);
    await e.close();
  });

  it('round robin on ties: sequential jobs on an idle engine rotate over the lanes', async () => {
    const lanes = [new FakeLane(), new FakeLane(), new FakeLane()];
    const e = engine(lanes);
    const used: number[] = [];
    for (let i = 0; i < 6; i++) used.push((await e.submit(spec()).result).lane);
    expect(used).toEqual([0, 1, 2, 0, 1, 2]);
  });
});
