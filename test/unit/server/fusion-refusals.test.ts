import { afterEach, describe, expect, it } from 'vitest';
import { EngineFullError, JobError, JobValidationError } from '../../../src/engine/errors.js';
import type { Job, JobSpec } from '../../../src/engine/types.js';
import { JobFuser } from '../../../src/server/fusion/job-fuser.js';
import { FakeEngine } from './fake-engine.js';
import { series, stftCycles, payload, alone, fuser, closeFusers } from './fusion-fixture.js';

afterEach(closeFusers);

describe('JobFuser: refusals and failures, per request', () => {
  it('validates each request alone at submit: a bad one throws as the engine would, the others are fused and answered', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const good = [stftCycles(series(1, 16, 1), 1), stftCycles(series(1, 16, 2), 1)];
    const first = f.submit(good[0]!);
    expect(() => f.submit(stftCycles(series(1, 16, 3), 3))).toThrow(JobValidationError);
    expect(() => f.submit(stftCycles(series(1, 16, 3), 1, { bands: [[0.3, 0.9]] }))).toThrow(/bands/);
    const second = f.submit(good[1]!);
    const results = await Promise.all([first.result, second.result]);
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(2);
    results.forEach((r, i) => expect(payload(r)).toEqual(alone(good[i]!)));
  }, 10_000);

  it('a request with a NaN or an infinity is refused alone at submit, naming its sample; the others of its window are fused and answered', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const bad = series(2, 16, 2);
    const at = 1 + Math.floor(Math.random() * 30);
    bad[at] = Number.NaN;
    bad[31] = Number.POSITIVE_INFINITY;
    const specs = [stftCycles(series(1, 16, 1), 1), stftCycles(series(1, 16, 3), 1)];
    const first = f.submit(specs[0]!);
    let refusal: unknown;
    try {
      f.submit(stftCycles(bad, 2));
    } catch (e) {
      refusal = e;
    }
    expect(refusal).toBeInstanceOf(JobValidationError);
    expect((refusal as JobValidationError).field).toBe(`data[${at}]`);
    expect((refusal as Error).message).toMatch(/is NaN: samples must be finite/);
    const last = f.submit(specs[1]!);
    expect(f.waiting).toBe(2);
    const results = await Promise.all([first.result, last.result]);
    // One fused job of the two good requests: the bad one's series never reached the engine.
    expect(engine.submitted.map((s) => s.batch)).toEqual([2]);
    expect(Array.from(engine.submitted[0]!.data)).toEqual([...specs[0]!.data, ...specs[1]!.data]);
    results.forEach((r, i) => expect(payload(r)).toEqual(alone(specs[i]!)));
    // f16 bits too: an exponent of all ones.
    const half = new Uint16Array(16).fill(0x3c00);
    half[0] = 0xfc00;
    expect(() => f.submit({ data: half, dtype: 'f16', flags: ['stft'] })).toThrow(/data\[0\]: is a non-finite f16/);
    // f64 samples beyond the f32 range, for this f32 engine.
    const wide = Float64Array.from(series(1, 16, 4));
    wide[6] = 1e300;
    expect(() => f.submit(stftCycles(wide as unknown as Float32Array, 1))).toThrow(
      /data\[6\]: is 1e\+300, infinite in f32/,
    );
  }, 10_000);

  it('samplesChecked: the caller scanned the samples (the server readJob), the fuser does not scan again', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine, { samplesChecked: true });
    const bad = series(1, 16, 2);
    bad[3] = Number.NaN;
    const job = f.submit(stftCycles(bad, 1));
    await job.result;
    expect(engine.submitted).toHaveLength(1);
  }, 10_000);

  it('an engine that searches samples itself (checksSamples): a request going alone is left to it, one fused is scanned', async () => {
    class SearchingEngine extends FakeEngine {
      readonly checksSamples = true;
    }
    const engine = new SearchingEngine({ perSeries: true });
    const f = fuser(engine, { maxRequestSamples: 32 });
    const big = series(1, 64, 2);
    big[5] = Number.NaN;
    // Too big to share a window: the engine takes it as it is (and would refuse it after its GPU search).
    await f.submit(stftCycles(big, 1)).result;
    expect(engine.submitted.map((s) => s.data.length)).toEqual([64]);
    const small = series(1, 16, 3);
    small[7] = Number.NaN;
    // Small enough to be fused: scanned here, since the engine would refuse the whole fused job.
    expect(() => f.submit(stftCycles(small, 1))).toThrow(/data\[7\]: is NaN: samples must be finite/);
  }, 10_000);

  it('a fused job that fails answers each of its requests with the same error', async () => {
    const boom = new JobError(1, 0, 0, 'fft', new Error('boom'));
    const engine = new FakeEngine({ failJob: (spec) => ((spec.batch ?? 1) > 1 ? boom : undefined) });
    const f = fuser(engine);
    const jobs = [1, 2, 3].map((seed) => f.submit(stftCycles(series(1, 16, seed), 1)));
    const outcomes = await Promise.allSettled(jobs.map((j) => j.result));
    for (const o of outcomes) expect(o).toEqual({ status: 'rejected', reason: boom });
    expect(jobs.map((j) => j.status)).toEqual(['error', 'error', 'error']);
  }, 10_000);

  it('a full engine refuses at submit (EngineFullError, a 429 at the door), as engine.submit() does: no window opens', () => {
    const engine = new FakeEngine({ manual: true, maxQueued: 2 });
    const f = fuser(engine);
    engine.submit({ data: new Float32Array(8), flags: ['stft'] });
    // One open window is one engine job to come: the first request fits, a second shape would not.
    f.submit(stftCycles(series(1, 16, 1), 1));
    expect(f.waiting).toBe(1);
    expect(() => f.submit(stftCycles(series(1, 32, 2), 1))).toThrow(EngineFullError);
    // A request of an open window's shape joins it: it takes no more room in the engine's queue.
    f.submit(stftCycles(series(1, 16, 3), 1));
    expect(f.waiting).toBe(2);
    engine.release();
  });

  it('an engine that fills while a window waits refuses the fused job: each request gets its refusal', async () => {
    const engine = new FakeEngine({ manual: true, maxQueued: 2 });
    const f = fuser(engine);
    engine.submit({ data: new Float32Array(8), flags: ['stft'] });
    const jobs = [1, 2].map((seed) => f.submit(stftCycles(series(1, 16, seed), 1)));
    engine.submit({ data: new Float32Array(8), flags: ['stft'] });
    for (const o of await Promise.allSettled(jobs.map((j) => j.result)))
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(EngineFullError);
    // Nothing of theirs is left with the engine: their memory is free.
    await Promise.all(jobs.map((j) => j.released));
    engine.release();
  }, 10_000);

  it('an engine that refuses the stacked job for its size gets each request alone, each with its own verdict', async () => {
    /** Refuses jobs of more than one series, as a lane that holds fewer frames of more series does. */
    class OneSeriesEngine extends FakeEngine {
      override submit(spec: JobSpec): Job;
      override submit(spec: JobSpec, options: { wait: true; signal?: AbortSignal }): Promise<Job>;
      override submit(spec: JobSpec, options?: { wait: true; signal?: AbortSignal }): Job | Promise<Job> {
        if ((spec.batch ?? 1) > 1) throw new JobValidationError('data', `${spec.batch} series do not fit a lane`);
        return options === undefined ? super.submit(spec) : super.submit(spec, options);
      }
    }
    const engine = new OneSeriesEngine({ perSeries: true });
    const counts: number[] = [];
    const f = fuser(engine, { onSubmitted: (n) => counts.push(n) });
    const specs = [1, 2, 3].map((seed) => stftCycles(series(1, 16, seed), 1));
    const results = await Promise.all(specs.map((s) => f.submit(s).result));
    results.forEach((r, i) => expect(payload(r)).toEqual(alone(specs[i]!)));
    expect(engine.submitted.map((s) => s.batch)).toEqual([1, 1, 1]);
    expect(counts).toEqual([1, 1, 1]);
  }, 10_000);
});
