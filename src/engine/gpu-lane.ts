/**
 * A GPU lane (the seed's StreamContext): a compute stream, its slots (the events of each job in
 * flight) and pinned and device buffers reused job after job (a BufferCache). It holds `laneDepth`
 * jobs at once (default 2): the next is enqueued behind the one running, so the GPU never idles
 * while the host learns of a completion. What a job does on it is the whole-series flow
 * (series-flow.ts) or, for a framed stft, the frame-chunk flow (framed-flow.ts).
 */
import type { Context } from '../runtime/context.js';
import { BufferCache } from '../runtime/memory/buffer-cache.js';
import { ComputeGraphs, type ComputeMode } from './compute-graphs.js';
import { isStickyError } from './errors.js';
import { Stream } from '../runtime/stream.js';
import { signalWorkspace } from '../signal/workspace.js';
import { framedBytesPerFrame, runFramedChunk } from './framed-flow.js';
import type { CopyStreams, LaneResources, LaneShared } from './lane-resources.js';
import type { LaneChunk, LaneChunkOutcome, LaneRunner } from './lane-runner.js';
import { LaneSlots, type LaneSlot } from './lane-slots.js';
import { runSeriesChunk, seriesBytesPerRow } from './series-flow.js';
import type { NormalizedJob } from './validate.js';

export type { CopyStreams, LaneShared, LentType } from './lane-resources.js';

/** One lane on one stream. */
export class GpuLane implements LaneRunner {
  readonly index: number;
  readonly device: number;
  readonly context: Context;
  readonly stream: Stream;
  readonly depth: number;
  readonly #slots: LaneSlots;
  readonly #lane: LaneResources;
  /** Made by the lane (disposed with it), or given by the engine (its device's StreamPool owns it). */
  readonly #ownsStream: boolean;

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
    this.index = index;
    this.depth = shared.laneDepth;
    this.context = context;
    this.device = context.device.ordinal;
    const name = `${label} lane ${index}`;
    this.#ownsStream = stream === undefined;
    this.stream = stream ?? new Stream({ context, label: name });
    let slots: LaneSlots | undefined;
    let buffers: BufferCache;
    try {
      slots = new LaneSlots(context, this.depth, index, name);
      buffers = new BufferCache({ stream: this.stream, label: name });
    } catch (e) {
      for (const ev of slots?.events() ?? []) ev.dispose();
      if (this.#ownsStream) this.stream.dispose();
      throw e;
    }
    this.#slots = slots;
    const precision = shared.precision;
    this.#lane = {
      index,
      device: this.device,
      context,
      stream: this.stream,
      copies,
      buffers,
      graphs: shared.computeGraphs ? new ComputeGraphs(this.stream, name) : undefined,
      shared,
      real: precision,
      complex: precision === 'f32' ? 'c64' : 'c128',
      bytes: precision === 'f32' ? 4 : 8,
    };
  }

  /** Whole-series chunks by how their compute ran (undefined when the engine runs without compute graphs). */
  get computeModes(): Readonly<Record<ComputeMode, number>> | undefined {
    return this.#lane.graphs?.counts;
  }

  /** Device bytes one series of `job` needs on the lane (every buffer the flow uses, per row). */
  bytesPerRow(job: NormalizedJob): number {
    return seriesBytesPerRow(job, this.#lane.real);
  }

  /** Device bytes one frame of one series of a framed-stft job needs (input, Zxx, the stft/istft scratch, output, preview). */
  bytesPerFrame(job: NormalizedJob): number {
    return framedBytesPerFrame(job, this.#lane.real);
  }

  maxFrames(job: NormalizedJob): number {
    if (!job.framing) return 0;
    return Math.min(
      job.framing.frames,
      Math.floor(this.#lane.shared.laneMemoryBytes / (job.batch * this.bytesPerFrame(job))),
    );
  }

  maxRows(job: NormalizedJob): number {
    return Math.floor(this.#lane.shared.laneMemoryBytes / this.bytesPerRow(job));
  }

  async run(chunk: LaneChunk): Promise<LaneChunkOutcome> {
    const slot = this.#slots.take(chunk);
    try {
      return await this.#run(chunk, slot);
    } catch (e) {
      // Let whatever was enqueued (on the lane's stream and the copy streams) finish before the
      // slot's buffers are reused by the next job.
      const { copyIn, copyOut } = this.#lane.copies;
      await Promise.all([this.stream, copyIn, copyOut].map((st) => st.done().catch(() => {})));
      // A failure met while the context was breaking (cuFFT's own status after another lane's
      // illegal address, which is no CUDA status and not sticky) is the context's loss: the sticky
      // error its streams report by now is the job's cause, so the job and the engine fail as lost.
      const sticky = this.context.stickyError;
      if (sticky !== undefined && !isStickyError(e)) throw sticky;
      throw e;
    } finally {
      this.#slots.give(slot);
    }
  }

  #run(chunk: LaneChunk, slot: LaneSlot): Promise<LaneChunkOutcome> {
    const sticky = this.context.stickyError;
    if (sticky) throw sticky;
    return chunk.frames
      ? runFramedChunk(this.#lane, chunk, chunk.frames, slot)
      : runSeriesChunk(this.#lane, chunk, slot);
  }

  dispose(): void {
    let first: unknown;
    // The signal layer caches scratch per stream: let it go before the stream does (when it offers to).
    const releaseScratch = (): void =>
      (signalWorkspace as { releaseStream?(stream: Stream): void }).releaseStream?.(this.stream);
    const events = this.#slots.events();
    // Graphs first: they hold addresses of the buffers and scratch freed after them.
    const steps = [
      () => this.#lane.graphs?.dispose(),
      () => this.#lane.buffers.dispose(),
      releaseScratch,
      ...events.map((ev) => () => ev.dispose()),
    ];
    if (this.#ownsStream) steps.push(() => this.stream.dispose());
    for (const fn of steps) {
      try {
        fn();
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined && !this.context.stickyError) throw first;
  }
}
