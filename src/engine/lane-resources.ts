/**
 * What a GPU lane's job flows (series-flow.ts, framed-flow.ts) see of their lane, and what the
 * lanes of one engine share. Named here, apart from the GpuLane class, so that the lane and its
 * flows never import each other.
 */
import type { Context } from '../runtime/context.js';
import type { BufferCache } from '../runtime/memory/buffer-cache.js';
import type { HostBuffer } from '../runtime/memory/host-buffer.js';
import type { Stream } from '../runtime/stream.js';
import type { SampleDType } from '../signal/samples.js';
import type { WindowSpec } from '../signal/window.js';
import type { ComputeGraphs } from './compute-graphs.js';
import type { StageRegistry } from './stages.js';
import type { NormalizedJob } from './validate.js';
import type { Precision } from '../runtime/fft/precision.js';

/** Element types of the pinned arrays an engine lends (hostBuffer). */
export type LentType = 'f32' | 'f64' | 'i16' | 'f16' | 'bf16';

/** What every lane of an engine shares. */
export interface LaneShared {
  readonly precision: Precision;
  readonly stages: StageRegistry;
  /** Pinned arrays lent by engine.hostBuffer(), by their ArrayBuffer. */
  readonly lent: ReadonlyMap<ArrayBufferLike, HostBuffer<LentType>>;
  /** Device memory one chunk may use on a lane (bytes). */
  readonly laneMemoryBytes: number;
  /** Jobs each lane holds on the GPU at once. */
  readonly laneDepth: number;
  /** Whether lanes replay a repeated job shape's compute from a CUDA graph (JobEngineOptions.computeGraphs). */
  readonly computeGraphs: boolean;
}

/**
 * The copy streams the lanes of one device share: every lane's host-to-device copies queue on
 * one, its device-to-host copies on the other, each in submission order. Joined to the lanes'
 * compute streams by events, the copy engines of both directions stay busy back to back while
 * the lanes compute (a lane alone on one stream copies in, computes and copies out in turn, and
 * the lanes then fall into step: measured 10.8 vs 11.7 Gsamples/s, bench/probe/engine-stages.ts).
 */
export interface CopyStreams {
  readonly copyIn: Stream;
  readonly copyOut: Stream;
}

/** One lane as its job flows use it: made once per lane, so a job allocates none of it. */
export interface LaneResources {
  /** The lane's index in its engine (what a JobError and a stage's context name). */
  readonly index: number;
  /** The device ordinal. */
  readonly device: number;
  readonly context: Context;
  /** The lane's compute stream. */
  readonly stream: Stream;
  /** Its device's copy streams. */
  readonly copies: CopyStreams;
  /** The lane's device and pinned buffers: intermediates on its stream, inputs and results per slot. */
  readonly buffers: BufferCache;
  /** The lane's compute graphs (undefined when the engine runs without them). */
  readonly graphs: ComputeGraphs | undefined;
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
