/**
 * A GPU lane of the job engine (the seed's StreamContext): the pipeline's Lane (a compute stream,
 * its device's copy streams, its slots with their events, pinned and device buffers reused job
 * after job, compute graphs) holding `laneDepth` jobs at once (default 2): the next is enqueued
 * behind the one running, so the GPU never idles while the host learns of a completion. What a job
 * does in a slot is the whole-series flow (series-flow.ts) or, for a framed stft, the frame-chunk
 * flow (framed-flow.ts); what the lane adds to the pipeline's is the engine's: its precision, its
 * stage registry and lent arrays, and how much of a job one chunk holds.
 */
import type { Context } from '../runtime/context.js';
import type { Precision } from '../runtime/fft/precision.js';
import type { Stream } from '../runtime/stream.js';
import type { ComputeMode } from '../pipeline/lanes/compute-graphs.js';
import type { CopyStreams } from '../pipeline/lanes/device-streams.js';
import { Lane } from '../pipeline/lanes/lane.js';
import type { LaneSlot } from '../pipeline/lanes/lane-slots.js';
import { framedBytesPerFrame, runFramedChunk } from './framed-flow.js';
import type { LaneResources, LaneShared } from './lane-resources.js';
import { runsAlone, type LaneChunk, type LaneChunkOutcome, type LaneRunner } from './lane-runner.js';
import { runSeriesChunk, seriesBytesPerRow } from './series-flow.js';
import type { NormalizedJob } from './validate.js';

/** One lane on one stream. */
export class GpuLane extends Lane implements LaneRunner, LaneResources {
  readonly shared: LaneShared;
  readonly real: Precision;
  readonly complex: 'c64' | 'c128';
  readonly bytes: 4 | 8;

  /**
   * A lane of `shared.laneDepth` places on `context`, copying through `copies`. `stream`: the
   * lane's compute stream, which stays the caller's (JobEngine takes it from its device's
   * StreamPool); without it the lane makes its own.
   */
  constructor(
    context: Context,
    index: number,
    shared: LaneShared,
    label: string,
    copies: CopyStreams,
    stream?: Stream,
  ) {
    super({
      context,
      index,
      slots: shared.laneDepth,
      label: `${label} lane ${index}`,
      copies,
      stream,
      pinned: shared.lent,
      computeGraphs: shared.computeGraphs,
    });
    this.shared = shared;
    const precision = shared.precision;
    this.real = precision;
    this.complex = precision === 'f32' ? 'c64' : 'c128';
    this.bytes = precision === 'f32' ? 4 : 8;
  }

  /** Whole-series chunks by how their compute ran (undefined when the engine runs without compute graphs). */
  get computeModes(): Readonly<Record<ComputeMode, number>> | undefined {
    return this.graphs?.counts;
  }

  /** Device bytes one series of `job` needs on the lane (every buffer the flow uses, per row). */
  bytesPerRow(job: NormalizedJob): number {
    return seriesBytesPerRow(job, this.real);
  }

  /** Device bytes one frame of one series of a framed-stft job needs (input, Zxx, the stft/istft scratch, output, preview). */
  bytesPerFrame(job: NormalizedJob): number {
    return framedBytesPerFrame(job, this.real);
  }

  maxFrames(job: NormalizedJob): number {
    if (!job.framing) return 0;
    return Math.min(
      job.framing.frames,
      Math.floor(this.shared.laneMemoryBytes / (job.batch * this.bytesPerFrame(job))),
    );
  }

  maxRows(job: NormalizedJob): number {
    return Math.floor(this.shared.laneMemoryBytes / this.bytesPerRow(job));
  }

  /** Runs a chunk in a free slot; a job that runs alone (runsAlone) takes the lane alone. The engine core schedules lanes, so a chunk without a place is refused (LaneBusyError). */
  run(chunk: LaneChunk): Promise<LaneChunkOutcome> {
    return this.runInSlot(chunk, this.#runChunk, runsAlone(chunk.job));
  }

  /** The chunk's flow in `slot`: made once per lane, so a chunk adds no closure. */
  readonly #runChunk = (chunk: LaneChunk, slot: LaneSlot): Promise<LaneChunkOutcome> =>
    chunk.frames ? runFramedChunk(this, chunk, chunk.frames, slot) : runSeriesChunk(this, chunk, slot);
}
