/**
 * What a GPU lane's job flows (series-flow.ts, framed-flow.ts) see of their lane, and what the
 * lanes of one engine share. A lane is the pipeline's Lane (its streams, slots, buffers and graphs:
 * pipeline/lanes) with the engine's own parts beside it. Named here, apart from the GpuLane class,
 * so that the lane and its flows never import each other.
 */
import type { HostBuffer } from '../runtime/memory/host-buffer.js';
import type { SampleDType } from '../signal/samples.js';
import type { WindowSpec } from '../signal/window.js';
import type { LaneView } from '../pipeline/lanes/lane-view.js';
import type { StageRegistry } from './stages.js';
import type { NormalizedJob } from './validate.js';
import type { Precision } from '../runtime/fft/precision.js';

/** Element types of the pinned arrays an engine lends (hostBuffer). */
export type LentType = 'f32' | 'f64' | 'i16' | 'f16' | 'bf16';

/** What every lane of an engine shares. */
export interface LaneShared {
  readonly precision: Precision;
  readonly stages: StageRegistry;
  /** Pinned arrays lent by engine.hostBuffer(), by their ArrayBuffer: the lanes' `pinned`. */
  readonly lent: ReadonlyMap<ArrayBufferLike, HostBuffer<LentType>>;
  /** Device memory one chunk may use on a lane (bytes). */
  readonly laneMemoryBytes: number;
  /** Jobs each lane holds on the GPU at once: its slots. */
  readonly laneDepth: number;
  /** Whether lanes replay a repeated job shape's compute from a CUDA graph (JobEngineOptions.computeGraphs). */
  readonly computeGraphs: boolean;
}

/** One lane as its job flows use it: the pipeline's lane (its index is what a JobError and a stage's context name) and the engine's parts. */
export interface LaneResources extends LaneView {
  readonly shared: LaneShared;
  /** The engine's precision as a real and a complex element type, and its real element size. */
  readonly real: Precision;
  readonly complex: 'c64' | 'c128';
  readonly bytes: 4 | 8;
}

/** Whether a job's samples are 16-bit (converted on the GPU by the first kernel that reads them). */
export function sixteenBit(job: NormalizedJob): job is NormalizedJob & { dtype: SampleDType } {
  return job.dtype === 'i16' || job.dtype === 'f16' || job.dtype === 'bf16';
}

/** A job's window as the signal layer takes it: a name, or [name, parameter]. */
export function windowSpec(job: NormalizedJob): WindowSpec {
  return job.window.parameter === undefined ? job.window.name : [job.window.name, job.window.parameter];
}
