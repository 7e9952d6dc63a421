import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../src/engine/engine-core.js';
import {
  EngineClosedError,
  EngineFullError,
  JobCancelledError,
  JobTimeoutError,
  JobValidationError,
} from '../../../src/engine/errors.js';
import { FakeLane, tick } from './fake-lane.js';
import { spec, engine } from './engine-core-fixture.js';

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
