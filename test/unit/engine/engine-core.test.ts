import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../src/engine/engine-core.js';
import {
  EngineClosedError,
  EngineFullError,
  EngineLostError,
  JobCancelledError,
  JobError,
  JobTimeoutError,
  JobValidationError,
} from '../../../src/engine/errors.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { FakeLane, FakeStickyError, tick } from './fake-lane.js';

const rand = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
const spec = (extra: Partial<JobSpec> = {}): JobSpec => ({ data: rand(64), batch: 2, flags: ['stft'], ...extra });

class StagedCore extends EngineCore {
  protected override stageNames(): ReadonlySet<string> {
    return new Set(['supdem']);
  }
}

function engine(lanes: FakeLane[], maxQueued = 8): EngineCore {
  return new StagedCore({ runners: lanes, maxQueued, label: 'test' });
}

describe('EngineCore: submit, state machine, results', () => {
  it('queued -> running -> ready with results written by the lane, timings and stats', async () => {
    const lane = new FakeLane();
    lane.hold = true;
    const e = engine([lane]);
    const data = rand(64);
    const job = e.submit({
      data,
      batch: 2,
      fs: 10,
      flags: ['stft', 'cycles', 'supdem'],
      bands: [
        [0, 1],
        [1, 2],
      ],
      label: 'first',
    });
    expect(job.id).toBe(1);
    expect(job.label).toBe('first');
    expect(job.status).toBe('running'); // an idle lane takes it at once
    const second = e.submit(spec());
    expect(second.status).toBe('queued');
    expect(e.stats()).toMatchObject({ queued: 1, running: 1 });
    await tick();
    lane.release();
    const r = await job.result;
    expect(job.status).toBe('ready');
    expect(r).toMatchObject({ id: 1, lane: 0, device: 0, batch: 2, length: 32, fs: 10 });
    expect(Array.from(r.filtered!)).toEqual(Array.from(data, (v) => Math.fround(2 * v)));
    expect(r.spectrum).toHaveLength(2 * 17);
    expect(r.bandPowers).toBeInstanceOf(Float64Array);
    expect(r.dominant).toHaveLength(2);
    expect(r.stages).toEqual({ supdem: { rows: 2, rowStart: 0 } });
    expect(r.timings.gpuMs).toBe(1);
    expect(r.timings.runMs).toBeGreaterThanOrEqual(0);
    await tick();
    expect(second.status).toBe('running');
    lane.release();
    await second.result;
    const s = e.stats();
    expect(s).toMatchObject({ jobs: 2, errors: 0, queued: 0, running: 0, bytesMoved: 2 * 64 * 8 });
    expect(s.lanes[0]!.jobs).toBe(2);
    await e.close();
    expect(lane.disposed).toBe(true);
  });

  it('writes into caller-provided arrays (into) and leaves out band waves when asked', async () => {
    const e = engine([new FakeLane()]);
    const filtered = new Float32Array(64);
    const r = await e.submit({
      data: rand(64),
      batch: 2,
      flags: ['stft', 'cycles'],
      bands: [[0, 0.1]],
      bandWaves: false,
      into: { filtered },
    }).result;
    expect(r.filtered).toBe(filtered);
    expect(filtered.some((v) => v !== 0)).toBe(true);
    expect(r.bandWaves).toBeUndefined();
    expect(r.bandPowers).toHaveLength(2);
    expect(() =>
      e.submit({ data: rand(64), batch: 2, flags: ['stft'], into: { filtered: new Float64Array(64) } }),
    ).toThrow(/into.filtered/);
  });

  it('refuses a bad job at submit and queues nothing', () => {
    const lane = new FakeLane();
    const e = engine([lane]);
    expect(() => e.submit(spec({ flags: ['nope'] }))).toThrow(JobValidationError);
    expect(() => e.submit(spec({ batch: 3 }))).toThrow(/batch/);
    expect(e.stats()).toMatchObject({ queued: 0, running: 0 });
    expect(lane.runs).toHaveLength(0);
  });

  it('refuses a series longer than a lane can hold', () => {
    const e = engine([new FakeLane(0, 100)]);
    expect(() => e.submit({ data: rand(128), flags: ['stft'] })).toThrow(/does not fit in a lane/);
  });

  it('a job bigger than the lane capacity runs in row chunks whose stitched results equal the one-shot ones', async () => {
    const data = rand(7 * 50);
    const oneShot = await engine([new FakeLane()]).submit({
      data,
      batch: 7,
      flags: ['stft', 'cycles', 'supdem'],
      bands: [[0, 0.2]],
    }).result;
    const small = new FakeLane(0, 2 * 50 + 10); // 2 rows per chunk
    const chunked = await engine([small]).submit({
      data,
      batch: 7,
      flags: ['stft', 'cycles', 'supdem'],
      bands: [[0, 0.2]],
    }).result;
    expect(small.runs.map(([, start, rows]) => [start, rows])).toEqual([
      [0, 2],
      [2, 2],
      [4, 2],
      [6, 1],
    ]);
    expect(chunked.filtered).toEqual(oneShot.filtered);
    expect(chunked.spectrum).toEqual(oneShot.spectrum);
    expect(chunked.bandPowers).toEqual(oneShot.bandPowers);
    expect(chunked.dominant).toEqual(oneShot.dominant);
    expect(chunked.stages!.supdem).toEqual([
      { rows: 2, rowStart: 0 },
      { rows: 2, rowStart: 2 },
      { rows: 2, rowStart: 4 },
      { rows: 1, rowStart: 6 },
    ]);
  });
});

describe('EngineCore: framed stft (nperseg) streams one long series in chunks of whole frames', () => {
  it('the stitched result equals the one-shot result for several framings and chunk sizes', async () => {
    for (const [n, nperseg, noverlap] of [
      [1000, 64, 32],
      [777, 50, 37],
      [513, 16, 0],
    ] as const) {
      const data = rand(2 * n);
      const spec = { data, batch: 2, flags: ['stft'], nperseg, noverlap, window: 'boxcar', previewBins: 3 };
      const one = await engine([new FakeLane()]).submit(spec).result;
      expect(one.frames).toBeGreaterThan(1);
      expect(one.filtered!.every((v) => Number.isFinite(v))).toBe(true);
      for (const framesPerChunk of [Math.ceil(nperseg / (nperseg - noverlap)), 7, 20]) {
        const lane = new FakeLane(0, 2 * nperseg * framesPerChunk);
        const chunked = await engine([lane]).submit(spec).result;
        expect(lane.runs.length).toBeGreaterThan(1);
        let worst = 0;
        for (let i = 0; i < one.filtered!.length; i++)
          worst = Math.max(worst, Math.abs(chunked.filtered![i]! - one.filtered![i]!));
        expect(
          worst,
          `N ${n}, nperseg ${nperseg}, noverlap ${noverlap}, ${framesPerChunk} frames per chunk`,
        ).toBeLessThan(1e-5);
        expect(chunked.spectrum).toEqual(one.spectrum);
        expect(chunked.frames).toBe(one.frames);
      }
    }
  });

  it('refuses a framed job when a lane cannot hold the frames covering one sample', () => {
    const e = engine([new FakeLane(0, 2 * 64 * 1)]);
    expect(() => e.submit({ data: rand(2000), batch: 2, flags: ['stft'], nperseg: 64, window: 'boxcar' })).toThrow(
      /need 2 frames per chunk, a lane holds 1/,
    );
  });
});

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

describe('EngineCore: backpressure, cancel, timeout, abort', () => {
  it('throws EngineFullError at maxQueued; submit({ wait: true }) waits for room in order', async () => {
    const lane = new FakeLane();
    lane.hold = true;
    const e = engine([lane], 2);
    const running = e.submit(spec());
    const q1 = e.submit(spec());
    const q2 = e.submit(spec());
    expect(() => e.submit(spec())).toThrow(EngineFullError);
    const w1 = e.submit(spec({ label: 'w1' }), { wait: true });
    const w2 = e.submit(spec({ label: 'w2' }), { wait: true });
    let got1: string | undefined;
    void w1.then((j) => (got1 = j.label));
    await tick();
    expect(got1).toBeUndefined();
    expect(e.stats().queued).toBe(2);
    lane.release(); // running finishes, q1 starts, w1 gets room
    await running.result;
    await tick();
    expect(got1).toBe('w1');
    expect(q1.status).toBe('running');
    expect(e.stats().queued).toBe(2); // q2 and w1
    lane.hold = false;
    lane.release();
    const [j1, j2] = await Promise.all([w1, w2]);
    await Promise.all([q1.result, q2.result, j1.result, j2.result]);
    expect(j2.label).toBe('w2');
    await e.close();
  });

  it('a wait for room ends with the AbortSignal, or with EngineClosedError on close()', async () => {
    const lane = new FakeLane();
    lane.hold = true;
    const e = engine([lane], 1);
    const running = e.submit(spec());
    e.submit(spec());
    const ac = new AbortController();
    const aborted = e.submit(spec(), { wait: true, signal: ac.signal });
    ac.abort(new Error('no longer needed'));
    await expect(aborted).rejects.toThrow('no longer needed');
    const closing = e.submit(spec(), { wait: true });
    const closed = e.close();
    await expect(closing).rejects.toBeInstanceOf(EngineClosedError);
    expect(() => e.submit(spec())).toThrow(EngineClosedError);
    await expect(e.submit(spec(), { wait: true })).rejects.toBeInstanceOf(EngineClosedError);
    lane.hold = false;
    lane.release();
    await running.result;
    await closed;
  });

  it('a wait for room rejects a bad job at once', async () => {
    const e = engine([new FakeLane()]);
    await expect(e.submit(spec({ fs: Number.NaN }), { wait: true })).rejects.toBeInstanceOf(JobValidationError);
  });

  it('cancel() works while queued only; the job never runs', async () => {
    const lane = new FakeLane();
    lane.hold = true;
    const e = engine([lane]);
    const running = e.submit(spec());
    const queued = e.submit(spec());
    expect(running.cancel()).toBe(false);
    expect(queued.cancel()).toBe(true);
    expect(queued.cancel()).toBe(false);
    expect(queued.status).toBe('cancelled');
    await expect(queued.result).rejects.toBeInstanceOf(JobCancelledError);
    lane.hold = false;
    lane.release();
    await running.result;
    await e.close();
    expect(lane.runs.map(([id]) => id)).toEqual([running.id]);
  });

  it('an AbortSignal cancels a queued job; an already aborted one never queues', async () => {
    const lane = new FakeLane();
    lane.hold = true;
    const e = engine([lane]);
    const running = e.submit(spec());
    const ac = new AbortController();
    const job = e.submit(spec({ signal: ac.signal }));
    ac.abort('user');
    expect(job.status).toBe('cancelled');
    await expect(job.result).rejects.toThrow(/cancelled.*user/);
    const pre = e.submit(spec({ signal: AbortSignal.abort() }));
    expect(pre.status).toBe('cancelled');
    expect(e.stats().queued).toBe(0);
    lane.hold = false;
    lane.release();
    await running.result;
  });

  it('timeoutMs rejects a queued job (removed from the queue) and a running one (its lane finishes first)', async () => {
    const lane = new FakeLane();
    lane.hold = true;
    const e = engine([lane]);
    const slow = e.submit(spec({ timeoutMs: 20 }));
    const queued = e.submit(spec({ timeoutMs: 10 }));
    await expect(queued.result).rejects.toBeInstanceOf(JobTimeoutError);
    await expect(queued.result).rejects.toThrow(/still queued/);
    await expect(slow.result).rejects.toThrow(/within 20 ms \(it was running\)/);
    expect(slow.status).toBe('error');
    expect(e.stats().running).toBe(1); // the lane still holds it
    // Its memory is still in use on the lane: `released` waits for the lane, the queued job's does not.
    const state = (p: Promise<void>): Promise<string> =>
      Promise.race([p.then(() => 'released'), tick().then(() => 'pending')]);
    expect(await state(queued.released)).toBe('released');
    expect(await state(slow.released)).toBe('pending');
    lane.hold = false;
    lane.release();
    await e.idle();
    expect(await state(slow.released)).toBe('released');
    expect(e.stats()).toMatchObject({ running: 0, errors: 1, jobs: 0 });
    expect(lane.runs).toHaveLength(1);
  });
});

describe('EngineCore: errors', () => {
  it('a failing job is an error with a JobError (job id, lane, stage, cause); other jobs go on', async () => {
    const lanes = [new FakeLane(), new FakeLane(3)];
    const e = engine(lanes);
    const cause = Object.assign(new Error('cufftExecR2C failed'), { status: 'CUFFT_EXEC_FAILED', sticky: false });
    lanes[1]!.failNext = { error: cause, stage: 'fft' };
    lanes[0]!.hold = true;
    const a = e.submit(spec());
    const b = e.submit(spec());
    const error = await b.result.catch((x: unknown) => x);
    expect(error).toBeInstanceOf(JobError);
    expect(error).toMatchObject({
      jobId: b.id,
      lane: 1,
      device: 3,
      stage: 'fft',
      cause,
      status: 'CUFFT_EXEC_FAILED',
      sticky: false,
    });
    expect(b.status).toBe('error');
    const c = e.submit(spec());
    await c.result;
    lanes[0]!.release();
    await a.result;
    expect(e.stats()).toMatchObject({ jobs: 2, errors: 1 });
    await e.close();
  });

  it('a sticky error rejects every pending job fast, rejects lost, and fails later submits', async () => {
    const lanes = [new FakeLane(), new FakeLane()];
    for (const l of lanes) l.hold = true;
    const e = engine(lanes, 100);
    const jobs = Array.from({ length: 6 }, () => e.submit(spec()));
    const waiting = e.submit(spec(), { wait: true });
    const sticky = new FakeStickyError('illegal address');
    lanes[0]!.failNext = { error: sticky, stage: 'supdem' };
    await tick();
    lanes[0]!.release();
    const outcomes = await Promise.allSettled(jobs.map((j) => j.result));
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      const err = (o as PromiseRejectedResult).reason as JobError;
      expect(err).toBeInstanceOf(JobError);
      expect(err.cause).toBe(sticky);
      expect(err.sticky).toBe(true);
    }
    expect(((outcomes[0] as PromiseRejectedResult).reason as JobError).stage).toBe('supdem');
    await expect(e.lost).rejects.toBe(sticky);
    expect((await waiting).status).toBe('error'); // it had room (queue < maxQueued) and was rejected with the rest
    expect(() => e.submit(spec())).toThrow(EngineLostError);
    lanes[1]!.release();
    await e.close();
    expect(lanes.every((l) => l.disposed)).toBe(true);
  });

  it('close() drains: queued and running jobs settle, then lanes are disposed', async () => {
    const lane = new FakeLane();
    lane.hold = true;
    const e = engine([lane]);
    const jobs = [e.submit(spec()), e.submit(spec()), e.submit(spec())];
    let closed = false;
    const c = e.close().then(() => (closed = true));
    expect(e.close()).toBe(e.close());
    await tick();
    expect(closed).toBe(false);
    lane.hold = false;
    lane.release();
    await c;
    for (const j of jobs) expect(j.status).toBe('ready');
    expect(lane.disposed).toBe(true);
  });

  it('an unobserved failed job does not crash the process (no unhandled rejection)', async () => {
    const lane = new FakeLane();
    lane.failNext = { error: new Error('boom'), stage: 'h2d' };
    const e = engine([lane]);
    e.submit(spec());
    await e.close();
  });
});
