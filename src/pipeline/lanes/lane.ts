/**
 * A lane: tscuda's one way to run GPU work in overlapping stages. It is a compute stream, copy
 * streams (copy-in and copy-out: its own, or shared by the lanes of a device) and `slots` places
 * for work in flight, each with the events that order its stages (lane-slots.ts) and its own
 * buffers in the lane's BufferCache. A piece of work takes a slot, uploads on the copy-in stream,
 * computes on the compute stream once its upload is there (`uploaded`), copies back on the
 * copy-out stream once its compute is (`computed`), and gives the slot back once its last copy has
 * completed (`finished`). While one slot computes, the next one's upload and the previous one's
 * copies back run; the stages wait for each other on the GPU, never on the host.
 *
 * The job engine's lanes are Lanes (engine/gpu-lane.ts: the job's flows are its work), and so are
 * ManagedContext's steps (overlap/step-runner.ts); TripleBuffer hands the same slots out by hand.
 */
import type { Context } from '../../runtime/context.js';
import { resolveContext, type Placement } from '../../runtime/defaults.js';
import type { Event } from '../../runtime/event.js';
import { BufferCache } from '../../runtime/memory/buffer-cache.js';
import { describeValue, DisposedError, expectResource, Resource } from '../../runtime/resource.js';
import { Stream } from '../../runtime/stream.js';
import { integerOption, knownKeys, shownValue } from '../../runtime/value-checks.js';
import { isStickyError } from '../../ffi/sticky.js';
import { signalWorkspace } from '../../signal/workspace.js';
import { ComputeGraphs } from './compute-graphs.js';
import type { CopyStreams } from './device-streams.js';
import { LaneBusyError } from './errors.js';
import { createLaneSlots, slotEvents, type LaneSlot } from './lane-slots.js';
import type { LaneView, PinnedArrays } from './lane-view.js';
import { SlotSet } from './slot-set.js';

/** Slots a lane has unless told: one piece of work computing while the next one's copies run. */
export const DEFAULT_LANE_SLOTS = 2;
/** The most slots a lane takes (each holds its own events and buffers). */
export const MAX_LANE_SLOTS = 64;

/** How a Lane is made. `device` / `context`: where it runs (default: the stream's, else device 0). */
export interface LaneDescriptor extends Placement {
  /** Pieces of work on the GPU at once, 1 to MAX_LANE_SLOTS (default DEFAULT_LANE_SLOTS). */
  slots?: number | undefined;
  /** The compute stream; it stays the caller's. Default: one of the lane's own. */
  stream?: Stream | undefined;
  /** The copy streams (one stream may be both, and the compute stream too); they stay the caller's. Default: two of the lane's own. */
  copies?: CopyStreams | undefined;
  /** Pinned arrays the owner lent out, which copies reach without staging (default none). */
  pinned?: PinnedArrays | undefined;
  /** Whether the lane keeps compute graphs for work that replays its compute (`lane.graphs`; default false). */
  computeGraphs?: boolean | undefined;
  /** The lane's index among its owner's lanes (default 0). */
  index?: number | undefined;
  label?: string | undefined;
}

/** Every key of LaneDescriptor (the Record makes a new one fail to compile until listed). */
const DESCRIPTOR_KEYS = Object.keys({
  device: true,
  context: true,
  slots: true,
  stream: true,
  copies: true,
  pinned: true,
  computeGraphs: true,
  index: true,
  label: true,
} satisfies Record<keyof LaneDescriptor, true>);

/** What runs in a slot: enqueues `work`'s stages and settles once they completed (made once by the caller, not per piece of work). */
export type SlotWork<W, R> = (work: W, slot: LaneSlot) => Promise<R>;

const NO_PINNED: PinnedArrays = new Map();
const ignore = (): void => {};
const idle = (stream: Stream): Promise<void> => stream.done().catch(ignore);

/** One lane: a compute stream, copy streams, slots and their buffers (see the file's comment). */
export class Lane extends Resource implements LaneView {
  readonly index: number;
  readonly device: number;
  readonly context: Context;
  readonly stream: Stream;
  readonly copies: CopyStreams;
  readonly buffers: BufferCache;
  readonly graphs: ComputeGraphs | undefined;
  readonly pinned: PinnedArrays;
  readonly #slots: SlotSet<LaneSlot>;
  readonly #events: readonly Event[];
  /** Streams the lane made (disposed with it); the caller's stay the caller's. */
  readonly #owned: Stream[] = [];

  constructor(descriptor: LaneDescriptor = {}) {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`new Lane() takes a descriptor object, got ${describeValue(descriptor)}`);
    knownKeys(descriptor, DESCRIPTOR_KEYS, 'Lane descriptor');
    super('Lane', descriptor.label);
    // Everything checked before the driver is asked for anything: a wrong call says what is wrong, with or without a GPU.
    const depth = integerOption(`Lane "${this.label}": slots`, descriptor.slots, DEFAULT_LANE_SLOTS, 1, MAX_LANE_SLOTS);
    this.index = integerOption(`Lane "${this.label}": index`, descriptor.index, 0, 0, Number.MAX_SAFE_INTEGER);
    const given = checkStreams(descriptor, this.label);
    if (descriptor.pinned !== undefined && !(descriptor.pinned instanceof Map))
      throw new TypeError(
        `Lane "${this.label}": pinned must be a Map of ArrayBuffer -> HostBuffer, got ${describeValue(descriptor.pinned)}`,
      );
    const computeGraphs = descriptor.computeGraphs ?? false;
    if (typeof computeGraphs !== 'boolean')
      throw new TypeError(
        `Lane "${this.label}": computeGraphs must be true or false, got ${shownValue(computeGraphs)}`,
      );
    this.context = resolveContext(descriptor, descriptor.stream);
    for (const s of given)
      if (s.context !== this.context)
        throw new Error(
          `Lane "${this.label}": stream "${s.label}" belongs to another context than ${this.context.label}`,
        );
    this.device = this.context.device.ordinal;
    this.pinned = descriptor.pinned ?? NO_PINNED;
    let slots: LaneSlot[] = [];
    let buffers: BufferCache | undefined;
    try {
      this.stream = descriptor.stream ?? this.#own(this.label);
      this.copies = descriptor.copies ?? {
        copyIn: this.#own(`${this.label} copies in`),
        copyOut: this.#own(`${this.label} copies out`),
      };
      slots = createLaneSlots(this.context, depth, this.label);
      buffers = new BufferCache({ stream: this.stream, label: this.label });
      this.graphs = computeGraphs ? new ComputeGraphs(this.stream, this.label) : undefined;
    } catch (e) {
      buffers?.dispose();
      for (const ev of slotEvents(slots)) ev.dispose();
      for (const s of this.#owned) s.dispose();
      throw e;
    }
    this.buffers = buffers;
    this.#events = slotEvents(slots);
    this.#slots = new SlotSet(slots);
  }

  /** Slots in all: the pieces of work the lane holds on the GPU at once. */
  get depth(): number {
    return this.#slots.size;
  }

  /** Slots taken now. */
  get busy(): number {
    return this.#slots.taken;
  }

  /** A free slot now (for `exclusive` work, only while none is taken), or undefined; throws DisposedError once disposed. */
  tryAcquire(exclusive = false): LaneSlot | undefined {
    return this.#slots.tryTake(exclusive);
  }

  /** A slot as soon as one is free (for `exclusive` work: once all are), in the order asked; rejects with DisposedError if the lane is disposed first. */
  acquire(exclusive = false): Promise<LaneSlot> {
    return this.#slots.take(exclusive);
  }

  /** Gives a slot back once its work has completed (after a failure: once drain() has settled). */
  release(slot: LaneSlot): void {
    if (!this.disposed) this.#slots.give(slot);
  }

  /** The slot's upload is all enqueued on the copy-in stream: records its `loaded` event there, and the compute stream waits for it (on the GPU). */
  uploaded(slot: LaneSlot): void {
    slot.loaded.record(this.copies.copyIn);
    this.stream.waitEvent(slot.loaded);
  }

  /** The slot's compute is all enqueued: records its `computed` event on the compute stream, and the copy-out stream waits for it. */
  computed(slot: LaneSlot): void {
    slot.computed.record(this.stream);
    this.copies.copyOut.waitEvent(slot.computed);
  }

  /** The slot's copies back are all enqueued: records its `finished` event on the copy-out stream; resolves once it completes (the completion poller). */
  finished(slot: LaneSlot): Promise<void> {
    slot.finished.record(this.copies.copyOut);
    return slot.finished.done();
  }

  /**
   * Runs `work` in a free slot: `body(work, slot)` enqueues its stages and settles once they have
   * completed; the slot goes back either way. Throws LaneBusyError when no slot is free (or, for
   * `exclusive` work, when any is taken): whoever feeds the lane schedules it, or waits with
   * acquire(). After a failure the lane's streams run out before the slot goes back, so its
   * buffers are not reused under work still enqueued; a failure met while the context was breaking
   * (cuFFT's own status after another lane's illegal address, which is no CUDA status and not
   * sticky) is the context's loss, and rejects with the context's sticky error.
   */
  async runInSlot<W, R>(work: W, body: SlotWork<W, R>, exclusive = false): Promise<R> {
    const slot = this.#slots.tryTake(exclusive);
    if (slot === undefined) throw new LaneBusyError(this.label, this.#slots.taken, this.#slots.size, exclusive);
    try {
      const lost = this.context.stickyError;
      if (lost) throw lost;
      return await body(work, slot);
    } catch (e) {
      await this.drain();
      const sticky = this.context.stickyError;
      if (sticky !== undefined && !isStickyError(e)) throw sticky;
      throw e;
    } finally {
      this.release(slot);
    }
  }

  /** Resolves once the lane's streams have run everything enqueued so far (their failures ignored): after a failed piece of work, before its slot is reused. */
  async drain(): Promise<void> {
    if (this.disposed) return;
    const { copyIn, copyOut } = this.copies;
    await Promise.all([this.stream, copyIn, copyOut].map(idle));
  }

  #own(label: string): Stream {
    const stream = new Stream({ context: this.context, label });
    this.#owned.push(stream);
    return stream;
  }

  /**
   * Refuses the work still waiting for a slot (DisposedError) and frees the lane's graphs,
   * buffers, events and own streams; work in flight must have completed. After a sticky error it
   * is quiet (the driver refuses every call then).
   */
  protected releaseNative(): void {
    this.#slots.close(new DisposedError(`Lane "${this.label}" was disposed before the work got a slot`));
    let first: unknown;
    // The signal layer caches scratch per stream: let it go before the stream does.
    const releaseScratch = (): void => signalWorkspace.releaseStream(this.stream);
    // Graphs first: they hold addresses of the buffers and scratch freed after them.
    const steps = [
      () => this.graphs?.dispose(),
      () => this.buffers.dispose(),
      releaseScratch,
      ...this.#events.map((ev) => () => ev.dispose()),
      ...this.#owned.map((s) => () => s.dispose()),
    ];
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

/** The streams a descriptor gives, checked (Streams, copies an object of two). */
function checkStreams(descriptor: LaneDescriptor, label: string): Stream[] {
  const given: Stream[] = [];
  if (descriptor.stream !== undefined) given.push(expectResource(descriptor.stream, Stream, `Lane "${label}": stream`));
  const copies = descriptor.copies;
  if (copies !== undefined) {
    if (typeof copies !== 'object' || copies === null)
      throw new TypeError(
        `Lane "${label}": copies must be an object { copyIn, copyOut }, got ${describeValue(copies)}`,
      );
    given.push(expectResource(copies.copyIn, Stream, `Lane "${label}": copies.copyIn`));
    given.push(expectResource(copies.copyOut, Stream, `Lane "${label}": copies.copyOut`));
  }
  return given;
}
