/**
 * The engine's half of the non-finite rule (src/engine/finite-samples.ts): JobEngine.submit takes
 * a job without scanning its samples; the lane searches each chunk's input on the GPU
 * (first_non_finite kernels, inside the compute graph where the lane replays one), and a job with
 * a NaN or an infinity rejects once it ran with the doors' JobValidationError naming the first such
 * sample, while the same engine goes on computing other jobs right. Fresh random finite data of each
 * type (f32, f64, f16, bf16) with a NaN, +Inf or -Inf at random places (the first sample, the last,
 * two bad ones); good jobs write into poisoned arrays and are compared with float64 references.
 */
import { describe, expect, it } from 'vitest';
import { bf16Bits, bf16Value, f16Bits, f16Value } from '../../../src/runtime/memory/half.js';
import { getWindow } from '../../../src/signal/window.js';
import {
  JobEngine,
  JobValidationError,
  type JobData,
  type JobEngineOptions,
  type JobResult,
  type JobSpec,
} from '../../../src/engine/index.js';
import { gpu } from '../gpu-available.js';
import { engineFactory } from './engines.js';
import { framedReference, hannPeriodic, referenceRow, relL2, rows, testSeries } from './reference.js';

const skip = gpu.available ? '' : ` (skipped: ${gpu.reason})`;
const engine = engineFactory('test non-finite');

type Float = 'f32' | 'f64' | 'f16' | 'bf16';
const FLOATS: readonly Float[] = ['f32', 'f64', 'f16', 'bf16'];
const FS = 500;
const N = 1024;
const BATCH = 4;
const PREVIEW = 64;
const KINDS = ['NaN', '+Inf', '-Inf'] as const;

/** Fresh random finite series of `dtype` and the float64 values they stand for. */
function series(dtype: Float, batch: number, n: number): { data: JobData; values: Float64Array } {
  const x = testSeries(batch, n, 37, Float64Array);
  switch (dtype) {
    case 'f32': {
      const data = Float32Array.from(x);
      return { data, values: Float64Array.from(data) };
    }
    case 'f64':
      return { data: Float64Array.from(x), values: Float64Array.from(x) };
    case 'f16': {
      const data = Uint16Array.from(x, (v) => f16Bits(v));
      return { data, values: Float64Array.from(data, (b) => f16Value(b)) };
    }
    default: {
      const data = Uint16Array.from(x, (v) => bf16Bits(v));
      return { data, values: Float64Array.from(data, (b) => bf16Value(b)) };
    }
  }
}

/** A NaN, +Infinity or -Infinity as a sample of `dtype` (16-bit: its bits, a NaN with a random payload). */
function poison(dtype: Float, kind: (typeof KINDS)[number]): number {
  if (dtype === 'f32' || dtype === 'f64') return kind === 'NaN' ? Number.NaN : kind === '+Inf' ? Infinity : -Infinity;
  const e = dtype === 'f16' ? 0x7c00 : 0x7f80;
  const mantissa = dtype === 'f16' ? 0x3ff : 0x7f;
  return kind === 'NaN' ? e | (1 + Math.floor(Math.random() * (mantissa - 1))) : kind === '+Inf' ? e : 0x8000 | e;
}

/** The engine a dtype runs on: f64 samples on an f64 engine, the others on f32. */
const precisionOf = (dtype: Float): 'f32' | 'f64' => (dtype === 'f64' ? 'f64' : 'f32');

function stftSpec(dtype: Float, data: JobData, batch: number, extra: Partial<JobSpec> = {}): JobSpec {
  return {
    data,
    ...(dtype === 'f16' || dtype === 'bf16' ? { dtype } : {}),
    batch,
    fs: FS,
    flags: ['stft'],
    previewBins: PREVIEW,
    ...extra,
  };
}

/** A job's JobValidationError, or a failure saying what came instead. */
async function refusal(result: Promise<JobResult>): Promise<JobValidationError> {
  const outcome = await result.then(
    (r) => r,
    (e: unknown) => e,
  );
  expect(outcome, 'the job should have been refused').toBeInstanceOf(JobValidationError);
  return outcome as JobValidationError;
}

/** Runs a good job of `values` into poisoned arrays and compares it with the float64 reference. */
async function expectComputed(e: JobEngine, dtype: Float, what: string, batch = BATCH, n = N): Promise<void> {
  const { data, values } = series(dtype, batch, n);
  const p = precisionOf(dtype);
  const Arr = p === 'f32' ? Float32Array : Float64Array;
  const filtered = new Arr(batch * n).fill(Number.NaN);
  const spectrum = new Arr(batch * PREVIEW).fill(Number.NaN);
  const r = await e.submit(stftSpec(dtype, data, batch, { into: { filtered, spectrum } })).result;
  const tol = p === 'f64' ? 1e-10 : 5e-5;
  for (let b = 0; b < batch; b++) {
    const ref = referenceRow(values.subarray(b * n, (b + 1) * n), {
      fs: FS,
      detrend: 'linear',
      window: hannPeriodic(n),
      passBand: [0, FS / 2],
      previewBins: PREVIEW,
      bands: [],
    });
    expect(relL2(rows(r.filtered!, n, b, 1), ref.filtered), `${what}: filtered row ${b}`).toBeLessThan(tol);
    expect(relL2(rows(r.spectrum!, PREVIEW, b, 1), ref.spectrum), `${what}: spectrum row ${b}`).toBeLessThan(tol);
  }
}

describe.skipIf(!gpu.available)(`JobEngine finds non-finite samples on the GPU${skip}`, () => {
  it('each float type: the first NaN or infinity at random places (first, last, two bad) rejects naming it; the engine then computes right', async () => {
    const engines = new Map<'f32' | 'f64', JobEngine>();
    const on = (p: 'f32' | 'f64'): JobEngine => {
      let e = engines.get(p);
      if (!e) engines.set(p, (e = engine({ lanes: 2, precision: p })));
      return e;
    };
    for (const dtype of FLOATS) {
      const e = on(precisionOf(dtype));
      const total = BATCH * N;
      const middle = 1 + Math.floor(Math.random() * (total - 2));
      const cases: { at: number[]; kind: (typeof KINDS)[number] }[] = [
        { at: [0], kind: KINDS[Math.floor(Math.random() * 3)]! },
        { at: [total - 1], kind: KINDS[Math.floor(Math.random() * 3)]! },
        { at: [middle], kind: 'NaN' },
        { at: [middle], kind: '+Inf' },
        { at: [middle], kind: '-Inf' },
        // Two bad samples, in different series: the first is named.
        { at: [Math.floor(Math.random() * N) + N, Math.floor(Math.random() * N) + 3 * N], kind: 'NaN' },
      ];
      for (const c of cases) {
        const { data } = series(dtype, BATCH, N);
        for (const at of c.at) data[at] = poison(dtype, c.kind);
        // Taken at submit (no CPU scan), refused once it ran.
        const job = e.submit(stftSpec(dtype, data, BATCH));
        const error = await refusal(job.result);
        const first = Math.min(...c.at);
        expect(error.field, `${dtype} ${c.kind} at ${c.at.join(',')}`).toBe(`data[${first}]`);
        expect(error.detail).toMatch(
          dtype === 'f16' || dtype === 'bf16'
            ? new RegExp(`^is a non-finite ${dtype} \\(bits 0x[0-9a-f]+\\): samples must be finite`)
            : /^is (NaN|Infinity|-Infinity): samples must be finite/,
        );
        expect(job.status).toBe('error');
        await expectComputed(e, dtype, `${dtype} after ${c.kind} at ${c.at.join(',')}`);
      }
    }
  }, 180_000);

  it('many concurrent jobs on two lanes of depth 2 with one bad one: only it fails, the others equal their references', async () => {
    const e = engine({ lanes: 2, laneDepth: 2 });
    const count = 16;
    const bad = Math.floor(Math.random() * count);
    const at = Math.floor(Math.random() * BATCH * N);
    const jobs = Array.from({ length: count }, (_, i) => {
      const s = series('f32', BATCH, N);
      if (i === bad) s.data[at] = Number.NaN;
      return s;
    });
    const settled = await Promise.allSettled(jobs.map((j) => e.submit(stftSpec('f32', j.data, BATCH)).result));
    for (const [i, s] of settled.entries()) {
      if (i === bad) {
        expect(s.status).toBe('rejected');
        expect((s as PromiseRejectedResult).reason).toBeInstanceOf(JobValidationError);
        expect((s as PromiseRejectedResult).reason.field).toBe(`data[${at}]`);
        continue;
      }
      expect(s.status, `job ${i}`).toBe('fulfilled');
      const r = (s as PromiseFulfilledResult<JobResult>).value;
      for (let b = 0; b < BATCH; b++) {
        const ref = referenceRow(jobs[i]!.values.subarray(b * N, (b + 1) * N), {
          fs: FS,
          detrend: 'linear',
          window: hannPeriodic(N),
          passBand: [0, FS / 2],
          previewBins: PREVIEW,
          bands: [],
        });
        expect(relL2(rows(r.filtered!, N, b, 1), ref.filtered), `job ${i} row ${b}`).toBeLessThan(5e-5);
      }
    }
    expect(e.stats().errors).toBe(1);
  }, 120_000);

  it('inside a replayed compute graph: the search and its reset replay too (bad, then good, then bad again)', async () => {
    const e = engine({ lanes: 1, laneDepth: 1 });
    for (let i = 0; i < 3; i++) await expectComputed(e, 'f32', `warm-up ${i}`);
    const { data } = series('f32', BATCH, N);
    const at = Math.floor(Math.random() * BATCH * N);
    data[at] = Infinity;
    expect((await refusal(e.submit(stftSpec('f32', data, BATCH)).result)).field).toBe(`data[${at}]`);
    // The cell is reset inside the graph: a good job after a bad one is not refused.
    await expectComputed(e, 'f32', 'good after bad');
    data[at] = 0.5;
    data[7] = Number.NaN;
    expect((await refusal(e.submit(stftSpec('f32', data, BATCH)).result)).field).toBe('data[7]');
    expect(e.stats().computeGraphs).toEqual({ eager: 1, captured: 1, replayed: 4 });
  }, 60_000);

  it('jobs run in several chunks name the index in the whole job: row chunks and framed-stft frame chunks', async () => {
    const small: JobEngineOptions = { lanes: 1, laneMemoryBytes: 1 << 16 };
    const e = engine(small);
    // Row chunks: a few series per chunk; the bad samples in two later chunks, the first named.
    const rowsSpec = (data: JobData): JobSpec => stftSpec('f32', data, 8);
    const { data } = series('f32', 8, N);
    expect(e.chunkRows(rowsSpec(data))).toBeLessThan(8);
    data[6 * N + 100] = Number.NaN;
    data[4 * N + 1000] = -Infinity;
    expect((await refusal(e.submit(rowsSpec(data)).result)).field).toBe(`data[${4 * N + 1000}]`);
    // Framed stft: overlapping frame chunks of both series, zeros around each; bf16 samples.
    const n = 3000;
    const framed = {
      batch: 2,
      fs: 1000,
      flags: ['stft' as const],
      nperseg: 256,
      noverlap: 192,
      passBand: [100, 300] as const,
      previewBins: 40,
      detrend: false as const,
    };
    expect(e.chunkFrames({ ...framed, data: new Float32Array(2 * n) })).toBeLessThan(40);
    for (const at of [0, 1, 1499, n - 1, n, n + 2048, 2 * n - 1]) {
      const { data: bits } = series('bf16', 2, n);
      bits[at] = poison('bf16', 'NaN');
      if (at < n) bits[n + 5] = poison('bf16', '+Inf'); // a later one, in the second series
      const error = await refusal(e.submit({ ...framed, data: bits, dtype: 'bf16' }).result);
      expect(error.field, `framed at ${at}`).toBe(`data[${at}]`);
    }
    // A good framed job on the same lane equals scipy's reference.
    const good = series('bf16', 2, n);
    const poisoned = new Float32Array(2 * n).fill(Number.NaN);
    const r = await e.submit({ ...framed, data: good.data, dtype: 'bf16', into: { filtered: poisoned } }).result;
    const w = getWindow('hann', 256);
    for (let b = 0; b < 2; b++) {
      const ref = framedReference(good.values.subarray(b * n, (b + 1) * n), { ...framed, window: w });
      expect(relL2(rows(r.filtered!, n, b, 1), ref.filtered), `framed row ${b}`).toBeLessThan(5e-5);
    }
  }, 120_000);

  it('f64 samples beyond the f32 range on an f32 engine are refused (infinite once converted); i16 jobs are never searched', async () => {
    const e = engine({ lanes: 1 });
    const { data } = series('f64', 2, N);
    data[N + 3] = 1e300;
    const error = await refusal(e.submit(stftSpec('f64', data, 2)).result);
    expect(error.field).toBe(`data[${N + 3}]`);
    expect(error.detail).toMatch(/^is 1e\+300, infinite in f32 \(this engine's precision\)/);
    const i16 = Int16Array.from({ length: 2 * N }, () => Math.round((Math.random() * 2 - 1) * 32767));
    const r = await e.submit({ data: i16, batch: 2, fs: FS, flags: ['stft'] }).result;
    expect(r.filtered!.every((v) => Number.isFinite(v))).toBe(true);
  }, 60_000);
});
