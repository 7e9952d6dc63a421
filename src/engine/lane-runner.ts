/**
 * The seam between the engine's CUDA-free core (queue, jobs, statistics) and the lanes that run
 * jobs: the GPU lane (one stream, its buffers and plans) implements LaneRunner, and unit tests use
 * a fake one. CUDA-free.
 */
import type { FrameChunk } from './chunks.js';
import type { NormalizedJob } from './validate.js';
import type { DominantCycle, JobData, JobResult } from './types.js';
import type { Precision } from '../runtime/fft/precision.js';
import { resultArrayClass, resultArrays } from './result-arrays.js';

/** Result arrays of a whole job (the array fields of JobResult), allocated by the core; a lane writes the rows of its chunk. */
export type JobOutputs = Pick<
  JobResult,
  'filtered' | 'spectrum' | 'bandPowers' | 'bandWaves' | 'dominant' | 'waveletPower'
>;

/** Where a lane is in a job, so a failure names its stage. */
export interface JobProgress {
  stage: string;
}

/** One chunk of a job (a run of whole series) for a lane to run. */
export interface LaneChunk {
  jobId: number;
  job: NormalizedJob;
  /** Rows [rowStart, rowStart + rows) of the job. */
  rowStart: number;
  rows: number;
  /** Those rows' samples: `job.data.subarray(rowStart * N, (rowStart + rows) * N)`. */
  data: JobData;
  /** The whole job's result arrays: write rows [rowStart, rowStart + rows). */
  outputs: JobOutputs;
  /** Set `stage` as the work proceeds. */
  progress: JobProgress;
  /** A framed-stft job: the frames of this chunk (every row, `rows` = the whole batch); undefined otherwise. */
  frames?: FrameChunk | undefined;
}

/** What a lane reports for one chunk once its work has completed on the device. */
export interface LaneChunkOutcome {
  /** GPU time from the lane's events, ms. */
  gpuMs: number;
  /** Bytes copied host<->device for it. */
  bytesMoved: number;
  /** What registered stages returned, by name. */
  stages: Record<string, unknown>;
  /**
   * Index into `chunk.data` of the first NaN or infinite sample the lane found (its GPU search of
   * the chunk's input), undefined when all are finite: the engine then rejects the job with the
   * JobValidationError of finite-samples.ts and discards its result.
   */
  nonFinite?: number | undefined;
}

/** A lane: runs one chunk at a time. */
export interface LaneRunner {
  /** The device ordinal the lane runs on. */
  readonly device: number;
  /**
   * Chunks the lane accepts at once (default 1). A lane of depth 2 enqueues the next chunk on its
   * stream while the previous one still runs, so its stream never idles while the host learns of
   * a completion and prepares the next job.
   */
  readonly depth?: number;
  /** Rows of `job` one chunk may hold (at least 1, or 0 when even one series does not fit). */
  maxRows(job: NormalizedJob): number;
  /** Frames per series one chunk of a framed-stft job may hold (required for those jobs). */
  maxFrames?(job: NormalizedJob): number;
  /** Runs a chunk; resolves once its results are in `chunk.outputs` (the completion poller, never a blocking sync). */
  run(chunk: LaneChunk): Promise<LaneChunkOutcome>;
  /** Frees the lane's resources; called once, after its last chunk settled. */
  dispose(): void;
}

/**
 * Whether a job runs alone on its lane, whatever the lane's depth: user stages may enqueue work
 * after an await (nothing else may be enqueued between), and a framed stft assembles each chunk's
 * input in the lane's one pinned buffer.
 */
export function runsAlone(job: NormalizedJob): boolean {
  return job.stages.length > 0 || job.framing !== undefined;
}

/** The result arrays `job` asks for: its `into` arrays, fresh ones for the rest (result-arrays.ts says which). */
export function allocateOutputs(job: NormalizedJob, precision: Precision): JobOutputs {
  const out: Record<string, unknown> = {};
  for (const r of resultArrays(job, precision))
    out[r.field] = job.into[r.field] ?? new (resultArrayClass(r.element))(r.length);
  if (job.cycles) out.dominant = new Array<DominantCycle>(job.batch);
  // Each field holds the element type resultArrays names for it: JobOutputs' types.
  return out as JobOutputs;
}
