/**
 * The engine core's half of the non-finite rule: submit does not scan samples; a lane reports the
 * first non-finite sample of each chunk it ran (FakeLane searches on the CPU what GpuLane searches
 * on the GPU), and the core rejects that job, and only it, with the doors' JobValidationError,
 * naming the sample's index in the whole job (row chunks and frame chunks mapped back), its
 * result discarded; the engine goes on.
 */
import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../src/engine/engine-core.js';
import { JobValidationError } from '../../../src/engine/errors.js';
import type { JobResult, JobSpec } from '../../../src/engine/types.js';
import { FakeLane } from './fake-lane.js';

const rand = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
const core = (lanes: FakeLane[]): EngineCore => new EngineCore({ runners: lanes, maxQueued: 64, label: 'nan' });

async function refusal(result: Promise<JobResult>): Promise<JobValidationError> {
  const error = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JobValidationError);
  return error as JobValidationError;
}

describe('EngineCore: a job with a NaN or an infinity', { timeout: 20_000 }, () => {
  it('is taken at submit (no scan), runs, and rejects with the JobValidationError naming the sample', async () => {
    const e = core([new FakeLane()]);
    const data = rand(256);
    data[77] = Number.POSITIVE_INFINITY;
    data[200] = Number.NaN;
    const job = e.submit({ data, batch: 4, flags: ['stft'] });
    expect(job.status).not.toBe('error');
    const error = await refusal(job.result);
    expect(error.field).toBe('data[77]');
    expect(error.message).toBe(
      'job.data[77]: is Infinity: samples must be finite (NaN and infinities are refused however the job comes in)',
    );
    expect(job.status).toBe('error');
    // The job failed, as the statistics count it; the engine runs the next one.
    expect(e.stats().errors).toBe(1);
    const good = rand(256);
    const r = await e.submit({ data: good, batch: 4, flags: ['stft'] }).result;
    expect(Array.from(r.filtered!.subarray(0, 8))).toEqual(Array.from(good.subarray(0, 8), (v) => Math.fround(2 * v)));
    await e.close();
  });

  it('among many concurrent jobs on several lanes, only the bad one fails; the others get their own results', async () => {
    const e = core([new FakeLane(0, 1 << 20, 2), new FakeLane(1, 1 << 20, 2)]);
    const specs: JobSpec[] = Array.from({ length: 24 }, () => ({ data: rand(128), batch: 2, flags: ['stft'] }));
    const badIndex = Math.floor(Math.random() * specs.length);
    const at = Math.floor(Math.random() * 128);
    (specs[badIndex]!.data as Float32Array)[at] = Number.NEGATIVE_INFINITY;
    const settled = await Promise.allSettled(specs.map((s) => e.submit(s).result));
    settled.forEach((s, i) => {
      if (i === badIndex) {
        expect(s.status).toBe('rejected');
        expect((s as PromiseRejectedResult).reason).toMatchObject({ field: `data[${at}]` });
      } else {
        expect(s.status, `job ${i}`).toBe('fulfilled');
        const filtered = (s as PromiseFulfilledResult<JobResult>).value.filtered!;
        expect(filtered[5]).toBe(Math.fround(2 * specs[i]!.data[5]!));
      }
    });
    await e.close();
  });

  it('a job run in row chunks names the index in the whole job, the first over all chunks', async () => {
    const lane = new FakeLane(0, 64); // 4 rows of 16 per chunk
    const e = core([lane]);
    const data = rand(16 * 10);
    data[16 * 9 + 3] = Number.NaN; // the last chunk
    data[16 * 5 + 11] = Number.NaN; // the second chunk: the first of the job
    const error = await refusal(e.submit({ data, batch: 10, flags: ['stft'] }).result);
    expect(error.field).toBe(`data[${16 * 5 + 11}]`);
    expect(new Set(lane.runs.map((r) => r[1]))).toEqual(new Set([0, 4, 8]));
    await e.close();
  });

  it('a framed job run in frame chunks names the index in the whole job (frames of each series, overlap and zeros)', async () => {
    for (const at of [0, 1, 999, 1000, 1500, 1999]) {
      const lane = new FakeLane(0, 2 * 64 * 6); // a few frames of both series per chunk
      const e = core([lane]);
      const data = rand(2000);
      data[at] = Number.NaN;
      if (at < 1000) data[1000 + ((at * 7) % 1000)] = Number.POSITIVE_INFINITY; // a later one, in the other series
      const error = await refusal(e.submit({ data, batch: 2, flags: ['stft'], nperseg: 64 }).result);
      expect(error.field, `at ${at}`).toBe(`data[${at}]`);
      expect(lane.runs.length).toBeGreaterThan(2);
      await e.close();
    }
  });

  it('16-bit samples: a non-finite f16 is named by its bits; i16 samples are never searched', async () => {
    const e = core([new FakeLane()]);
    const half = new Uint16Array(64).fill(0x3c00);
    half[9] = 0x7e01;
    const error = await refusal(e.submit({ data: half, dtype: 'f16', flags: ['stft'] }).result);
    expect(error.message).toMatch(/^job\.data\[9\]: is a non-finite f16 \(bits 0x7e01\)/);
    const r = await e.submit({ data: new Int16Array(64).fill(-32768), flags: ['stft'] }).result;
    expect(r.batch).toBe(1);
    await e.close();
  });
});
