import { afterEach, describe, expect, it } from 'vitest';
import {
  EngineClosedError,
  EngineFullError,
  JobCancelledError,
  JobError,
  JobTimeoutError,
  JobValidationError,
} from '../../../src/engine/errors.js';
import type { Job, JobResult, JobSpec } from '../../../src/engine/types.js';
import { fusingEngine } from '../../../src/server/fusion/fusing-engine.js';
import { FusedRequest } from '../../../src/server/fusion/fused-request.js';
import { JobFuser } from '../../../src/server/fusion/job-fuser.js';
import { FakeEngine, fakeResult } from './fake-engine.js';

/** `rows` series of `n` samples, different for each seed (so a request's rows are its own). */
function series(rows: number, n: number, seed: number): Float32Array {
  return Float32Array.from({ length: rows * n }, (_, i) => Math.fround(Math.sin(i * 0.37 + seed) + seed));
}

const BANDS = [[0.05, 0.2] as const, [0.2, 0.4] as const];
function stftCycles(data: Float32Array, rows: number, extra: Partial<JobSpec> = {}): JobSpec {
  return { data, batch: rows, flags: ['stft', 'cycles'], bands: BANDS, previewBins: 4, ...extra };
}

/** The result arrays and dominant cycles of a result, for comparing answers (ids, lanes and timings aside). */
function payload(r: JobResult): Record<string, unknown> {
  return {
    batch: r.batch,
    length: r.length,
    filtered: Array.from(r.filtered ?? []),
    spectrum: Array.from(r.spectrum ?? []),
    bandPowers: Array.from(r.bandPowers ?? []),
    dominant: r.dominant,
    waveletPower: Array.from(r.waveletPower ?? []),
  };
}

/** What the engine answers for `spec` alone (unfused). */
const alone = (spec: JobSpec): Record<string, unknown> => payload(fakeResult(spec, 0, 'f32', true));

async function until(what: () => boolean, label: string): Promise<void> {
  const t0 = performance.now();
  while (!what()) {
    if (performance.now() - t0 > 5000) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

const fusers: JobFuser[] = [];
function fuser(engine: FakeEngine, options: Partial<ConstructorParameters<typeof JobFuser>[1]> = {}): JobFuser {
  const f = new JobFuser(engine, { maxBatchDelayMs: 5, ...options });
  fusers.push(f);
  return f;
}
afterEach(() => fusers.splice(0).forEach((f) => f.close()));

describe('JobFuser: requests of one shape as one engine job', () => {
  it('fuses concurrent requests into one job of their summed batch; each gets exactly its own rows, as unfused', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const specs = [stftCycles(series(1, 16, 1), 1), stftCycles(series(2, 16, 2), 2), stftCycles(series(3, 16, 3), 3)];
    const jobs = specs.map((s) => f.submit(s));
    expect(f.waiting).toBe(3);
    expect(engine.submitted).toHaveLength(0);
    const results = await Promise.all(jobs.map((j) => j.result));
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(6);
    expect(Array.from(engine.submitted[0]!.data)).toEqual([...specs[0]!.data, ...specs[1]!.data, ...specs[2]!.data]);
    results.forEach((r, i) => {
      expect(payload(r)).toEqual(alone(specs[i]!));
      expect(r.id).toBe(jobs[i]!.id);
      // Its own memory, not a view that would keep the whole fused result alive while this answer is kept.
      for (const array of [r.filtered!, r.spectrum!, r.bandPowers!])
        expect(array.buffer.byteLength).toBe(array.byteLength);
    });
    expect(jobs.map((j) => j.status)).toEqual(['ready', 'ready', 'ready']);
  }, 10_000);

  it('writes each request its share into its own `into` arrays', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const a = stftCycles(series(2, 8, 4), 2, {
      into: { filtered: new Float32Array(16), bandPowers: new Float64Array(4) },
    });
    const b = stftCycles(series(1, 8, 5), 1, { into: { filtered: new Float32Array(8) } });
    const [ra, rb] = await Promise.all([f.submit(a).result, f.submit(b).result]);
    expect(ra.filtered).toBe(a.into!.filtered);
    expect(ra.bandPowers).toBe(a.into!.bandPowers);
    expect(rb.filtered).toBe(b.into!.filtered);
    expect(payload(ra)).toEqual(alone({ ...a, into: undefined }));
    expect(payload(rb)).toEqual(alone({ ...b, into: undefined }));
    // Every request gave a filtered array: the fused job writes one stacked array; not all gave bandPowers: the engine allocates it.
    expect(engine.submitted[0]!.into?.filtered).toHaveLength(24);
    expect(engine.submitted[0]!.into?.bandPowers).toBeUndefined();
  }, 10_000);

  it('splits every kind of result by series: wavelet power, f16 waves of i16 samples, framed spectra', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const i16 = (rows: number, seed: number): Int16Array =>
      Int16Array.from(series(rows, 16, seed), (v) => Math.round(v * 5000));
    const groups: JobSpec[][] = [
      [1, 2].map((rows) => ({ data: series(rows, 16, rows), batch: rows, flags: ['wavelet'], freqs: [0.1, 0.2, 0.3] })),
      [2, 1].map((rows) => ({
        data: i16(rows, rows),
        batch: rows,
        flags: ['stft', 'cycles'],
        bands: BANDS,
        outputDtype: 'f16' as const,
      })),
      [1, 3].map((rows) => ({
        data: series(rows, 16, rows + 9),
        batch: rows,
        flags: ['stft'],
        nperseg: 8,
        previewBins: 3,
      })),
    ];
    for (const specs of groups) {
      const before = engine.submitted.length;
      const results = await Promise.all(specs.map((s) => f.submit(s).result));
      expect(engine.submitted.length - before).toBe(1);
      results.forEach((r, i) => {
        const own = fakeResult(specs[i]!, 0, 'f32', true);
        expect(payload(r)).toEqual(payload(own));
        expect(r.filtered?.constructor).toBe(own.filtered?.constructor);
      });
    }
  }, 10_000);

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

  it('never fuses different shapes: series length, fs, flags, parameters or sample type', async () => {
    const engine = new FakeEngine();
    const f = fuser(engine);
    const base = stftCycles(series(1, 16, 1), 1);
    const specs: JobSpec[] = [
      base,
      stftCycles(series(1, 32, 1), 1),
      { ...base, fs: 2 },
      { ...base, flags: ['stft'] },
      { ...base, previewBins: 3 },
      { ...base, bands: [[0.05, 0.3]] },
      { ...base, window: 'hamming' },
      { ...base, data: Int16Array.from(base.data, (v) => Math.round(v * 1000)) },
      { ...base, outputDtype: 'f16' },
    ];
    await Promise.all(specs.map((s) => f.submit(s).result));
    expect(engine.submitted).toHaveLength(specs.length);
    // The same parameters spelled out (the defaults) are the same shape.
    await Promise.all([f.submit(base).result, f.submit({ ...base, fs: 1, window: 'hann', detrend: 'linear' }).result]);
    expect(engine.submitted).toHaveLength(specs.length + 1);
  }, 10_000);

  it('bounds a fused job: a full window goes at once, a request of more than half a bound goes alone', async () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine, { maxBatchDelayMs: 1000, maxSamples: 64 });
    const jobs = [1, 2, 3, 4].map((seed) => f.submit(stftCycles(series(1, 16, seed), 1)));
    // Four requests of 16 samples fill 64: submitted with no wait.
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(4);
    const fifth = f.submit(stftCycles(series(1, 16, 5), 1));
    expect(f.waiting).toBe(1);
    const big = f.submit(stftCycles(series(3, 16, 6), 3));
    expect(big).not.toBeInstanceOf(FusedRequest);
    expect(engine.submitted).toHaveLength(2);
    expect(engine.submitted[1]!.batch).toBe(3);
    const wide = new JobFuser(engine, { maxBatchDelayMs: 1000, maxRequests: 2 });
    fusers.push(wide);
    wide.submit(stftCycles(series(1, 16, 7), 1));
    wide.submit(stftCycles(series(1, 16, 8), 1));
    expect(engine.submitted).toHaveLength(3);
    engine.release();
    f.close();
    engine.release();
    await Promise.all([...jobs, fifth, big].map((j) => j.result));
  }, 10_000);

  it('a request of more than maxRequestSamples goes alone (stacking it would only add copies); one at the bound joins', async () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine, { maxBatchDelayMs: 1000, maxRequestSamples: 32 });
    const atBound = f.submit(stftCycles(series(2, 16, 1), 2));
    expect(atBound).toBeInstanceOf(FusedRequest);
    const over = f.submit(stftCycles(series(3, 16, 2), 3));
    expect(over).not.toBeInstanceOf(FusedRequest);
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(3);
    // The default lets 4 x 4096 samples join and sends 16 x 65536 alone.
    const byDefault = fuser(engine, { maxBatchDelayMs: 1000 });
    expect(byDefault.submit(stftCycles(series(4, 4096, 3), 4))).toBeInstanceOf(FusedRequest);
    expect(byDefault.submit(stftCycles(series(16, 65536, 4), 16))).not.toBeInstanceOf(FusedRequest);
    f.close();
    byDefault.close();
    engine.release();
    await Promise.all([atBound, over].map((j) => j.result));
  }, 10_000);

  it('registered stages and AbortSignals go to the engine as they are', () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine);
    const staged = f.submit({ data: series(1, 16, 1), flags: ['stft', 'my-stage'] });
    const signalled = f.submit({ ...stftCycles(series(1, 16, 1), 1), signal: new AbortController().signal });
    expect(engine.submitted).toHaveLength(2);
    expect([staged, signalled].some((j) => j instanceof FusedRequest)).toBe(false);
    engine.release();
  });

  it('stacks samples and results in the given memory and gives all of it back once the engine is done', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const taken = new Set<Buffer>();
    let released = 0;
    const memory = {
      take: (bytes: number): Buffer => {
        const b = Buffer.alloc(bytes);
        taken.add(b);
        return b;
      },
      release: (b: Buffer): void => {
        expect(taken.delete(b)).toBe(true);
        released++;
      },
    };
    const f = fuser(engine, { memory });
    const specs = [1, 2].map((seed) =>
      stftCycles(series(1, 16, seed), 1, { into: { filtered: new Float32Array(16) } }),
    );
    const jobs = specs.map((s) => f.submit(s));
    const results = await Promise.all(jobs.map((j) => j.result));
    results.forEach((r, i) => expect(payload(r)).toEqual(alone({ ...specs[i]!, into: undefined })));
    await Promise.all(jobs.map((j) => j.released));
    await until(() => released === 2, 'the samples and the filtered waves given back');
    expect(taken.size).toBe(0);
  }, 10_000);

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
