import { afterEach, describe, expect, it } from 'vitest';
import { EngineClosedError } from '../../../src/engine/errors.js';
import type { Job } from '../../../src/engine/types.js';
import { fusingEngine } from '../../../src/server/fusion/fusing-engine.js';
import { FusedRequest } from '../../../src/server/fusion/fused-request.js';
import { JobFuser } from '../../../src/server/fusion/job-fuser.js';
import { FakeEngine } from './fake-engine.js';
import { series, stftCycles, until, fuser, closeFusers } from './fusion-fixture.js';

afterEach(closeFusers);

describe('JobFuser: close, a lost context, options, fusingEngine', () => {
  it('after close() it refuses new requests and has submitted the open windows', async () => {
    const engine = new FakeEngine();
    const f = fuser(engine, { maxBatchDelayMs: 1000 });
    const job = f.submit(stftCycles(series(1, 16, 1), 1));
    f.close();
    expect(engine.submitted).toHaveLength(1);
    expect(() => f.submit(stftCycles(series(1, 16, 1), 1))).toThrow(EngineClosedError);
    expect((await job.result).batch).toBe(1);
  }, 10_000);

  it('a lost context submits the open windows at once, and later requests go straight to the engine', async () => {
    const engine = new FakeEngine();
    const f = fuser(engine, { maxBatchDelayMs: 1000 });
    const waiting = f.submit(stftCycles(series(1, 16, 1), 1));
    engine.loseContext();
    await until(() => engine.submitted.length === 1, 'the window submitted on the loss');
    expect(f.waiting).toBe(0);
    const later = f.submit(stftCycles(series(1, 16, 2), 1));
    expect(later).not.toBeInstanceOf(FusedRequest);
    expect(engine.submitted).toHaveLength(2);
    await Promise.allSettled([waiting.result, later.result]);
  }, 10_000);

  it('refuses a window that is not a positive number of ms, and bounds that are not positive integers', () => {
    const engine = new FakeEngine();
    for (const bad of [-1, Number.NaN, Infinity, 2 ** 31])
      expect(() => new JobFuser(engine, { maxBatchDelayMs: bad })).toThrow(/maxBatchDelayMs must be/);
    expect(() => new JobFuser(engine, { maxBatchDelayMs: 1, maxSamples: 0 })).toThrow(/maxSamples/);
    expect(() => new JobFuser(engine, { maxBatchDelayMs: 1, maxRequestSamples: 1.5 })).toThrow(/maxRequestSamples/);
    expect(() => new JobFuser(engine, { maxBatchDelayMs: 1, maxSeries: 1.5 })).toThrow(/maxSeries/);
  });

  it('fusingEngine: off at 0 (the engine itself), otherwise the engine with a fuser in front of submit', async () => {
    const engine = new FakeEngine({ perSeries: true });
    expect(fusingEngine(engine, { maxBatchDelayMs: 0 })).toBe(engine);
    expect(fusingEngine(null, { maxBatchDelayMs: 1 })).toBeNull();
    const fused = fusingEngine(engine, { maxBatchDelayMs: 2 });
    expect([fused.label, fused.precision, fused.laneCount, fused.devices, fused.lost]).toEqual([
      engine.label,
      engine.precision,
      engine.laneCount,
      engine.devices,
      engine.lost,
    ]);
    expect((fused as { hostBuffer?: unknown }).hostBuffer).toBeUndefined();
    expect(fused.stats()).toEqual(engine.stats());
    const jobs: Job[] = [1, 2].map((seed) => fused.submit(stftCycles(series(1, 16, seed), 1)));
    await Promise.all(jobs.map((j) => j.result));
    expect(engine.submitted).toHaveLength(1);
    // Waiting for room in the engine's queue is the engine's own submit.
    await (
      await fused.submit(stftCycles(series(1, 16, 3), 1), { wait: true })
    ).result;
    expect(engine.submitted).toHaveLength(2);
    await fused.close();
    expect(() => fused.submit(stftCycles(series(1, 16, 3), 1))).toThrow(EngineClosedError);
  }, 10_000);
});
