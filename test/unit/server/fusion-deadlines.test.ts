import { afterEach, describe, expect, it } from 'vitest';
import { JobCancelledError, JobTimeoutError } from '../../../src/engine/errors.js';
import { JobFuser } from '../../../src/server/fusion/job-fuser.js';
import { FakeEngine } from './fake-engine.js';
import { series, stftCycles, payload, alone, until, fuser, closeFusers } from './fusion-fixture.js';

afterEach(closeFusers);

describe('JobFuser: deadlines and cancellation per request', () => {
  it('deadlines stay per request: one times out while the fused job waits, the other is answered; its memory waits for the engine', async () => {
    const engine = new FakeEngine({ manual: true, perSeries: true });
    const f = fuser(engine, { maxBatchDelayMs: 1 });
    const quick = stftCycles(series(1, 16, 1), 1, { timeoutMs: 30 });
    const patient = stftCycles(series(1, 16, 2), 1);
    const [a, b] = [f.submit(quick), f.submit(patient)];
    await until(() => engine.submitted.length === 1, 'the fused job');
    await expect(a.result).rejects.toBeInstanceOf(JobTimeoutError);
    expect(a.status).toBe('error');
    expect(b.status).toBe('queued');
    let released = false;
    void a.released.then(() => (released = true));
    await new Promise((r) => setTimeout(r, 5));
    // The engine still holds the job that carries its samples.
    expect(released).toBe(false);
    engine.release();
    expect(payload(await b.result)).toEqual(alone(patient));
    await a.released;
  }, 10_000);

  it('a request that times out inside its window leaves it: its series never reach the engine', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine, { maxBatchDelayMs: 80 });
    const b = stftCycles(series(2, 16, 2), 2);
    const a = f.submit(stftCycles(series(1, 16, 1), 1, { timeoutMs: 5 }));
    const jb = f.submit(b);
    await expect(a.result).rejects.toThrow(/did not finish within 5 ms \(it was still queued\)/);
    await a.released;
    expect(f.waiting).toBe(1);
    expect(payload(await jb.result)).toEqual(alone(b));
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(2);
  }, 10_000);

  it('a request cancelled in its window is removed from it; the others run without its rows', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine, { maxBatchDelayMs: 20 });
    const kept = stftCycles(series(1, 16, 2), 1);
    const gone = f.submit(stftCycles(series(3, 16, 1), 3));
    const stays = f.submit(kept);
    expect(gone.cancel()).toBe(true);
    expect(gone.cancel()).toBe(false);
    await expect(gone.result).rejects.toBeInstanceOf(JobCancelledError);
    expect(gone.status).toBe('cancelled');
    expect(payload(await stays.result)).toEqual(alone(kept));
    expect(engine.submitted).toHaveLength(1);
    expect(Array.from(engine.submitted[0]!.data)).toEqual(Array.from(kept.data));
  }, 10_000);

  it('cancelled while its fused job is queued: the job runs for the others; with none left, the engine job is cancelled', async () => {
    const engine = new FakeEngine({ manual: true, perSeries: true });
    const f = fuser(engine, { maxBatchDelayMs: 1 });
    const specs = [1, 2].map((seed) => stftCycles(series(1, 16, seed), 1));
    const [a, b] = specs.map((s) => f.submit(s));
    await until(() => engine.submitted.length === 1, 'the fused job');
    expect(a!.cancel()).toBe(true);
    engine.release();
    await expect(a!.result).rejects.toBeInstanceOf(JobCancelledError);
    expect(payload(await b!.result)).toEqual(alone(specs[1]!));

    const [c, d] = specs.map((s) => f.submit(s));
    await until(() => engine.submitted.length === 2, 'the second fused job');
    expect(engine.queued).toBe(1);
    expect(c!.cancel() && d!.cancel()).toBe(true);
    expect(engine.queued).toBe(0);
    for (const j of [c!, d!]) await expect(j.result).rejects.toBeInstanceOf(JobCancelledError);
    await Promise.all([c!.released, d!.released]);
  }, 10_000);

  it('a request whose fused job runs can no longer be cancelled', async () => {
    const engine = new FakeEngine({ manual: true, delayMs: 30 });
    const f = fuser(engine, { maxBatchDelayMs: 1 });
    const job = f.submit(stftCycles(series(1, 16, 1), 1));
    await until(() => engine.submitted.length === 1, 'the job');
    engine.release();
    expect(job.status).toBe('running');
    expect(job.cancel()).toBe(false);
    expect((await job.result).batch).toBe(1);
  }, 10_000);
});
