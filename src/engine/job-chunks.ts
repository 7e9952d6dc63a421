/**
 * One job's run on its lane: its chunks (capacity.ts plans them) one after the other, each written
 * into its place in the job's result arrays, the registered stages' values gathered per chunk, and
 * the first non-finite sample any chunk's GPU search found, as an index into the job's samples.
 * CUDA-free (the lane is a LaneRunner).
 */
import { planJobChunks } from './capacity.js';
import type { JobRecord } from './job.js';
import { allocateOutputs, type JobOutputs, type JobProgress, type LaneRunner } from './lane-runner.js';
import type { Precision } from '../runtime/fft/precision.js';

/** GPU time and bytes moved so far: kept by the caller, so a job that fails midway still counts what ran. */
export interface ChunkTotals {
  gpuMs: number;
  bytesMoved: number;
}

/** What a job's chunks produced. */
export interface JobRun {
  outputs: JobOutputs;
  /** What each registered stage returned, one value per chunk. */
  stages: Record<string, unknown[]>;
  chunks: number;
  /** Index into the job's samples of the first NaN or infinity a lane found; undefined when all are finite. */
  nonFinite: number | undefined;
}

/**
 * Runs `job`'s chunks on `runner`, adding each one's GPU time and bytes to `totals`; stops before
 * the next chunk once the job has settled (timed out, the engine lost).
 */
export async function runJobChunks(
  job: JobRecord,
  runner: LaneRunner,
  precision: Precision,
  progress: JobProgress,
  totals: ChunkTotals,
): Promise<JobRun> {
  const spec = job.spec;
  const n = spec.length;
  const outputs = allocateOutputs(spec, precision);
  const chunks = planJobChunks(spec, runner);
  const stages: Record<string, unknown[]> = {};
  let nonFinite: number | undefined;
  for (const c of chunks) {
    if (job.settled) break;
    // Row chunks see their own rows' samples; a framed chunk sees every sample (it reads frames of each series).
    const whole = chunks.length === 1 || c.frames !== undefined;
    const offset = whole ? 0 : c.start * n;
    const data = whole ? spec.data : spec.data.subarray(offset, offset + c.rows * n);
    const outcome = await runner.run({
      jobId: job.id,
      job: spec,
      rowStart: c.start,
      rows: c.rows,
      data,
      outputs,
      progress,
      ...(c.frames ? { frames: c.frames } : {}),
    });
    totals.gpuMs += outcome.gpuMs;
    totals.bytesMoved += outcome.bytesMoved;
    for (const [name, value] of Object.entries(outcome.stages)) (stages[name] ??= []).push(value);
    if (outcome.nonFinite !== undefined) {
      const at = offset + outcome.nonFinite;
      if (nonFinite === undefined || at < nonFinite) nonFinite = at;
    }
  }
  return { outputs, stages, chunks: chunks.length, nonFinite };
}
