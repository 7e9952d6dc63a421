import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../src/engine/engine-core.js';
import { EngineLostError, JobError } from '../../../src/engine/errors.js';
import { FakeLane, FakeStickyError, tick } from './fake-lane.js';
import { spec, engine } from './engine-core-fixture.js';

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
