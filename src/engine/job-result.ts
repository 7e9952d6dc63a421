/**
 * A finished job's JobResult from its record, the lane that ran it, its outputs and its stages'
 * values: the one place the result's fields are laid out (the engine core resolves jobs with
 * it). CUDA-free.
 */
import type { JobRecord } from './job.js';
import type { JobOutputs } from './lane-runner.js';
import type { JobResult } from './types.js';

/** Where a job ran: its lane's index and device ordinal. */
export interface JobPlace {
  lane: number;
  device: JobResult['device'];
}

/** The JobResult of `job`, run on `place` in `chunkCount` chunks; `stages` holds each registered stage's value per chunk. */
export function jobResult(
  job: JobRecord,
  place: JobPlace,
  outputs: JobOutputs,
  stages: Record<string, unknown[]>,
  chunkCount: number,
  time: { gpuMs: number; endedAt: number },
): JobResult {
  const spec = job.spec;
  const result: JobResult = {
    id: job.id,
    lane: place.lane,
    device: place.device,
    batch: spec.batch,
    length: spec.length,
    fs: spec.fs,
    ...outputs,
    ...(spec.framing ? { frames: spec.framing.frames } : {}),
    timings: { queuedMs: job.startedAt - job.submittedAt, runMs: time.endedAt - job.startedAt, gpuMs: time.gpuMs },
  };
  if (spec.stages.length > 0) {
    const out: Record<string, unknown> = {};
    // One chunk: what the stage returned; several: one value per chunk, in row order.
    for (const name of spec.stages) out[name] = chunkCount === 1 ? stages[name]?.[0] : (stages[name] ?? []);
    result.stages = out;
  }
  return result;
}
