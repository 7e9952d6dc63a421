/**
 * What the work running on a lane sees of it (its streams, buffers, graphs and stage ordering),
 * named apart from the Lane class so that work functions (the job engine's flows, the copy back)
 * and the lane never import each other.
 */
import type { Context } from '../../runtime/context.js';
import type { BufferCache } from '../../runtime/memory/buffer-cache.js';
import type { DType } from '../../runtime/memory/dtype.js';
import type { HostBuffer } from '../../runtime/memory/host-buffer.js';
import type { Stream } from '../../runtime/stream.js';
import type { ComputeGraphs } from './compute-graphs.js';
import type { CopyStreams } from './device-streams.js';
import type { LaneSlot } from './lane-slots.js';

/**
 * Pinned arrays the lane's owner lent out, by their ArrayBuffer (the job engine's `hostBuffer()`):
 * copies between the device and such an array go straight through the DMA engine, without the
 * slot's staging (copy-back.ts).
 */
export type PinnedArrays = ReadonlyMap<ArrayBufferLike, HostBuffer<DType>>;

/** One lane as the work on it uses it: made once per lane, so a piece of work allocates none of it. */
export interface LaneView {
  /** The lane's index among its owner's lanes (what errors name). */
  readonly index: number;
  /** The device ordinal. */
  readonly device: number;
  readonly context: Context;
  /** The lane's compute stream. */
  readonly stream: Stream;
  /** Its copy streams (shared with the other lanes of its device, or its own). */
  readonly copies: CopyStreams;
  /** The lane's device and pinned buffers: intermediates on its stream, inputs and results per slot. */
  readonly buffers: BufferCache;
  /** The lane's compute graphs (undefined when the lane runs without them). */
  readonly graphs: ComputeGraphs | undefined;
  /** Pinned arrays copies reach without staging. */
  readonly pinned: PinnedArrays;
  /** The slot's upload is all enqueued on the copy-in stream: the compute stream waits for it, on the GPU. */
  uploaded(slot: LaneSlot): void;
  /** The slot's compute is all enqueued: the copy-out stream waits for it, on the GPU. */
  computed(slot: LaneSlot): void;
  /** The slot's copies back are all enqueued: resolves once everything of the slot has completed (the completion poller; the host never blocks). */
  finished(slot: LaneSlot): Promise<void>;
}
