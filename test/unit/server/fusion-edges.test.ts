/**
 * The fuser's bounds at their exact edges, its key field by field, and its timer across windows
 * (the survivors of mutation testing, quality/). Each expectation is what the fuser's documented
 * rules give, worked out by hand from the request sizes: never read back from the fuser itself.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { allocatedResultBytes } from '../../../src/engine/capacity.js';
import { EngineFullError } from '../../../src/engine/errors.js';
import type { JobEngineLike, JobSpec } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';
import { FusedRequest } from '../../../src/server/fusion/fused-request.js';
import { JobFuser } from '../../../src/server/fusion/job-fuser.js';
import { MAX_TIMEOUT_MS } from '../../../src/runtime/timeout.js';
import { FakeEngine } from './fake-engine.js';
import { closeAfterTest, closeFusers, fuser as fixtureFuser, series } from './fusion-fixture.js';

const stft = (rows: number, n: number, seed: number, extra: Partial<JobSpec> = {}): JobSpec => ({
  data: series(rows, n, seed),
  batch: rows,
  flags: ['stft'],
  previewBins: 4,
  ...extra,
});

/** A fuser whose window (1 s unless `options` say otherwise) never closes on its own within a test. */
const fuser = (engine: FakeEngine, options: Parameters<typeof fixtureFuser>[1] = {}): JobFuser =>
  fixtureFuser(engine, { maxBatchDelayMs: 1000, ...options });
afterEach(closeFusers);

describe('JobFuser bounds at their edges', () => {
  it('maxBatchDelayMs: 0, NaN and past MAX_TIMEOUT_MS are refused; MAX_TIMEOUT_MS itself and a fraction are taken', () => {
    const engine = new FakeEngine();
    for (const bad of [0, -1, Number.NaN, MAX_TIMEOUT_MS + 1])
      expect(() => new JobFuser(engine, { maxBatchDelayMs: bad })).toThrow(/maxBatchDelayMs/);
    expect(() => new JobFuser(engine, { maxBatchDelayMs: MAX_TIMEOUT_MS }).close()).not.toThrow();
    expect(() => new JobFuser(engine, { maxBatchDelayMs: 0.5 }).close()).not.toThrow();
  });

  it('a request of exactly half of maxSamples or maxSeries joins a window; one more sample or series goes alone', () => {
    const engine = new FakeEngine({ manual: true });
    const bySamples = fuser(engine, { maxSamples: 64 });
    expect(bySamples.submit(stft(2, 16, 1))).toBeInstanceOf(FusedRequest); // 32 = 64 / 2
    expect(bySamples.submit(stft(1, 33, 2))).not.toBeInstanceOf(FusedRequest); // 33 > 32
    const bySeries = fuser(engine, { maxSeries: 4 });
    expect(bySeries.submit(stft(2, 16, 3))).toBeInstanceOf(FusedRequest); // 2 = 4 / 2
    expect(bySeries.submit(stft(3, 16, 4))).not.toBeInstanceOf(FusedRequest); // 3 > 2
    engine.release();
  });

  it('a window that has no room for the next request of its key is submitted first; the request opens the next window', () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine, { maxSamples: 64 });
    for (const seed of [1, 2, 3]) f.submit(stft(1, 16, seed)); // 48 samples
    expect(engine.submitted).toHaveLength(0);
    f.submit(stft(2, 16, 4)); // 32 more would make 80 > 64
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(3);
    expect(f.waiting).toBe(1);
    engine.release();
  });

  it('maxSeries bounds a window: series past it start the next window', () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine, { maxSeries: 4 });
    f.submit(stft(2, 16, 1));
    f.submit(stft(1, 16, 2)); // 3 series
    expect(engine.submitted).toHaveLength(0);
    f.submit(stft(2, 16, 3)); // 5 > 4: the window of 3 goes first
    expect(engine.submitted.map((s) => s.batch)).toEqual([3]);
    expect(f.waiting).toBe(1);
    engine.release();
  });

  it('maxBatchDelayMs must be a number: a numeric string is refused', () => {
    expect(() => new JobFuser(new FakeEngine(), { maxBatchDelayMs: '5' as unknown as number })).toThrow(
      /maxBatchDelayMs must be a number/,
    );
  });

  it('maxResultBytes: a request of exactly half joins, a window fills at it and the next request starts another', () => {
    const engine = new FakeEngine({ manual: true });
    // What the engine allocates for one request's results (engine/capacity.ts), the unit of this bound.
    const unit = allocatedResultBytes(validateJob(stft(1, 16, 0), { stages: new Set() }), 'f32');
    const f = fuser(engine, { maxResultBytes: 2 * unit });
    f.submit(stft(1, 16, 1));
    f.submit(stft(1, 16, 2)); // 2 units: full, submitted at once
    expect(engine.submitted.map((s) => s.batch)).toEqual([2]);
    f.submit(stft(1, 16, 3));
    expect(f.waiting).toBe(1);
    const small = fuser(engine, { maxResultBytes: 2 * unit - 1 });
    expect(small.submit(stft(1, 16, 4))).not.toBeInstanceOf(FusedRequest); // more than half
    engine.release();
  });

  it('an engine that does not tell its queue (no queued/maxQueued) is never refused by the fuser', async () => {
    const engine = new FakeEngine({ manual: true, maxQueued: 1 });
    engine.submit(stft(1, 8, 0)); // its queue is full, but the fuser cannot know
    const quiet: JobEngineLike = {
      label: 'quiet',
      precision: 'f32',
      laneCount: 1,
      devices: [0],
      lost: engine.lost,
      submit: engine.submit.bind(engine) as JobEngineLike['submit'],
      stats: () => engine.stats(),
      close: () => engine.close(),
    };
    const f = new JobFuser(quiet, { maxBatchDelayMs: 1000 });
    closeAfterTest(f);
    const requests = [f.submit(stft(1, 16, 1)), f.submit(stft(1, 32, 2))];
    for (const r of requests) expect(r).toBeInstanceOf(FusedRequest);
    expect(f.waiting).toBe(2);
    // Their windows meet the full queue only when submitted: the engine's own refusal answers them then.
    f.close();
    const outcomes = await Promise.allSettled(requests.map((r) => r.result));
    for (const o of outcomes) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(EngineFullError);
    engine.release();
  });

  it('request ids are positive and increasing, one per request', () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine);
    const ids = [1, 2, 3].map((seed) => f.submit(stft(1, 16, seed)).id);
    expect(ids[0]).toBeGreaterThan(0);
    expect(ids[1]).toBeGreaterThan(ids[0]!);
    expect(ids[2]).toBeGreaterThan(ids[1]!);
    engine.release();
  });

  it('a spec that is not an object goes to the engine, which refuses it with its own error (no TypeError from the fuser)', () => {
    const engine = new FakeEngine();
    const f = fuser(engine);
    const seen: unknown[] = [];
    vi.spyOn(engine, 'submit').mockImplementation(((spec: unknown) => {
      seen.push(spec);
      throw new Error('refused by the engine');
    }) as FakeEngine['submit']);
    expect(() => f.submit(null as unknown as JobSpec)).toThrow('refused by the engine');
    expect(seen).toEqual([null]);
  });
});

describe('JobFuser timer across windows', () => {
  it('a second window, opened later with another key, is submitted at its own deadline after the first', async () => {
    const engine = new FakeEngine();
    const f = fuser(engine, { maxBatchDelayMs: 100 });
    const first = f.submit(stft(1, 16, 1));
    await new Promise((r) => setTimeout(r, 50));
    const second = f.submit(stft(1, 32, 2));
    const t0 = performance.now();
    await first.result;
    // The first window's deadline came and only its own: the second's is ~50 ms later and must still come.
    expect(engine.submitted.map((s) => s.data.length)).toEqual([16]);
    await second.result;
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(engine.submitted.map((s) => s.data.length)).toEqual([16, 32]);
  }, 5_000);
});

describe('the fusion key, field by field', () => {
  it('requests that differ only in a window parameter, nperseg, noverlap or a float output type run as separate jobs', async () => {
    const engine = new FakeEngine();
    const f = fuser(engine, { maxBatchDelayMs: 5 });
    const framed = (seed: number, extra: Partial<JobSpec>): JobSpec => stft(1, 64, seed, { nperseg: 16, ...extra });
    const pairs: [Partial<JobSpec>, Partial<JobSpec>][] = [
      [{ window: ['kaiser', 5] }, { window: ['kaiser', 8] }],
      [
        { nperseg: 16, noverlap: 4 },
        { nperseg: 32, noverlap: 4 },
      ],
      [{ noverlap: 4 }, { noverlap: 8 }],
      [{ outputDtype: 'f32' }, {}],
    ];
    for (const [a, b] of pairs) {
      const before = engine.submitted.length;
      await Promise.all([f.submit(framed(1, a)).result, f.submit(framed(2, b)).result]);
      expect(engine.submitted.length - before, JSON.stringify([a, b])).toBe(2);
    }
    // The control: the same spelling twice is one job.
    const before = engine.submitted.length;
    await Promise.all([f.submit(framed(1, { noverlap: 4 })).result, f.submit(framed(2, { noverlap: 4 })).result]);
    expect(engine.submitted.length - before).toBe(1);
  });
});
