/**
 * TripleBuffer: a lane's slots (pipeline/lanes: each with its stage events) handed out by hand. The
 * caller moves each slot through upload, processing and download on streams of its choosing, and
 * the ring (slot-ring.ts) hands the next stage the oldest slot of the previous one, once the
 * slot's event of that stage says so. A Lane runs the same stages on streams of its own and is
 * what the job engine and ManagedContext's steps use; a TripleBuffer is for code that drives each
 * stage itself.
 */
import type { Context } from '../../runtime/context.js';
import { resolveContext, type Placement } from '../../runtime/defaults.js';
import type { DType } from '../../runtime/memory/dtype.js';
import { type Event, EventPool } from '../../runtime/event.js';
import { StagedBuffer } from '../../runtime/memory/staged-buffer.js';
import { describeValue, DisposedError, Resource } from '../../runtime/resource.js';
import type { Stream } from '../../runtime/stream.js';
import { createLaneSlots, slotEvents, type LaneSlot } from '../lanes/lane-slots.js';
import { SlotRing, type SlotState } from './slot-ring.js';
import { checkDType } from '../../runtime/memory/dtype-check.js';
import { knownKeys, positiveInteger, shownValue } from '../../runtime/value-checks.js';

export type { SlotState } from './slot-ring.js';
export { StagedBuffer } from '../../runtime/memory/staged-buffer.js';

/** One slot of a TripleBuffer. */
export interface TripleBufferSlot<D> {
  readonly index: number;
  /** What the slot holds (its device buffers, pinned staging). */
  readonly data: D;
  readonly state: SlotState;
  /** The step this slot was last taken for by uploadSlot() (negative before its first use). */
  readonly step: number;
}

/** How a TripleBuffer is made. `device` / `context`: where its events live (default device 0). */
export interface TripleBufferDescriptor<D> extends Placement {
  /** Makes what slot `index` holds; called once per slot. */
  create: (index: number) => D;
  /** Releases what create() made, on dispose(). */
  destroy?: ((data: D) => void) | undefined;
  /** 3 by default; 2 is double buffering, 1 serializes every step. */
  slots?: number | undefined;
  label?: string | undefined;
}

/** Every key of TripleBufferDescriptor (the Record makes a new one fail to compile until listed). */
const DESCRIPTOR_KEYS = Object.keys({
  device: true,
  context: true,
  create: true,
  destroy: true,
  slots: true,
  label: true,
} satisfies Record<keyof TripleBufferDescriptor<unknown>, true>);

/** @deprecated the name before issue 9; use TripleBufferDescriptor. */
export type TripleBufferOptions<D> = TripleBufferDescriptor<D>;

class Slot<D> implements TripleBufferSlot<D> {
  constructor(
    readonly index: number,
    readonly data: D,
    readonly ring: SlotRing<Event>,
  ) {}

  get state(): SlotState {
    return this.ring.state(this.index);
  }

  get step(): number {
    return this.ring.step(this.index);
  }
}

/**
 * Slots cycling free -> uploading -> processing -> downloading -> free. Each stage ends with
 * commit(slot, stream), which records the slot's event of that stage (its lane slot's `loaded`,
 * `computed`, `finished`) behind the stage's work; the next stage gets the slot only through that
 * event, so no slot is handed out while the GPU still uses it:
 * - uploadSlot() hands out a free slot whose last download has completed;
 * - processSlot(stream) / downloadSlot(stream) hand out the oldest slot of the previous stage
 *   once committed, and make `stream` wait for it on the GPU (no host wait); without a
 *   stream, only once that stage has completed;
 * - advance() frees downloading slots whose download has completed.
 */
export class TripleBuffer<D> extends Resource {
  readonly context: Context;
  readonly slots: readonly TripleBufferSlot<D>[];
  readonly #ring: SlotRing<Event>;
  /** Each slot's stage events, by slot index. */
  readonly #lanes: readonly LaneSlot[];
  /** Events of abandoned steps, one per stream they touched (abandon() is the one use), and which events are the pool's. */
  readonly #events: EventPool;
  readonly #pooled = new Set<Event>();
  readonly #destroy: ((data: D) => void) | undefined;
  /** completion() promises not yet settled: dispose() rejects them. */
  readonly #waiters = new Set<(error: Error) => void>();

  constructor(options: TripleBufferDescriptor<D>) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(
        `new TripleBuffer() takes a descriptor object { create, destroy?, slots?, ... }, got ${describeValue(options)}`,
      );
    // A misspelt option (`slot: 2`) silently meant its default.
    knownKeys(options, DESCRIPTOR_KEYS, 'TripleBuffer descriptor');
    super('TripleBuffer', options.label);
    // The ring (it checks the slot count) and `create` before the driver is asked for anything: a
    // wrong call says what is wrong, with or without a GPU. A slot's stage events stay the slot's;
    // only the events of abandoned steps go back to their pool (made below, before any is used).
    this.#ring = new SlotRing<Event>(
      options.slots ?? 3,
      {
        isDone: (e) => e.query(),
        release: (e) => {
          if (this.#pooled.has(e)) this.#events.release(e);
        },
      },
      `TripleBuffer "${this.label}": slots`,
    );
    if (typeof options.create !== 'function')
      throw new TypeError(
        `TripleBuffer "${this.label}": create must be a function (slot index -> its data), got ${shownValue(options.create)}`,
      );
    // A destroy that is not a function threw only at dispose(), after the slots' data was made.
    if (options.destroy !== undefined && typeof options.destroy !== 'function')
      throw new TypeError(
        `TripleBuffer "${this.label}": destroy must be a function (its data -> void), got ${shownValue(options.destroy)}`,
      );
    this.context = resolveContext(options);
    this.#events = new EventPool({ context: this.context, label: `${this.label} events` });
    this.#destroy = options.destroy;
    let lanes: LaneSlot[] = [];
    const slots: Slot<D>[] = [];
    try {
      lanes = createLaneSlots(this.context, this.#ring.count, this.label);
      for (let i = 0; i < this.#ring.count; i++) slots.push(new Slot(i, options.create(i), this.#ring));
    } catch (e) {
      for (const s of slots) this.#destroy?.(s.data);
      for (const event of slotEvents(lanes)) event.dispose();
      this.#events.dispose();
      throw e;
    }
    this.#lanes = lanes;
    this.slots = slots;
  }

  /** Slots of `length` elements: a StagedBuffer (device buffer and its pinned staging) each. */
  static alloc<T extends DType>(
    dtype: T,
    length: number,
    options: Placement & { label?: string | undefined; slots?: number | undefined } = {},
  ): TripleBuffer<StagedBuffer<T>> {
    checkDType(dtype, 'TripleBuffer.alloc dtype');
    positiveInteger(length, 'TripleBuffer.alloc length');
    const label = options.label ?? `TripleBuffer(${dtype}[${length}])`;
    const context = resolveContext(options);
    return new TripleBuffer<StagedBuffer<T>>({
      context,
      label,
      ...(options.slots === undefined ? {} : { slots: options.slots }),
      create: (i) => StagedBuffer.alloc(dtype, length, { context, label: `${label}/${i}` }),
      destroy: (d) => d.dispose(),
    });
  }

  get size(): number {
    return this.slots.length;
  }

  /** Each slot's state ('free', 'uploading', 'processing', 'downloading'), by slot index: a fresh copy, for logging and tests. */
  states(): SlotState[] {
    this.assertAlive();
    return this.#ring.states();
  }

  /** A free slot for the next step's upload (free -> uploading), or null. */
  uploadSlot(): TripleBufferSlot<D> | null {
    this.assertAlive();
    return this.#slotAt(this.#ring.takeForUpload());
  }

  /** The oldest committed upload (uploading -> processing), or null; see the class comment for `stream`. */
  processSlot(stream?: Stream): TripleBufferSlot<D> | null {
    return this.#takeNext('processing', stream);
  }

  /** The oldest committed processing (processing -> downloading), or null. */
  downloadSlot(stream?: Stream): TripleBufferSlot<D> | null {
    return this.#takeNext('downloading', stream);
  }

  /** The slot's current stage ends with what is enqueued on `stream` so far. */
  commit(slot: TripleBufferSlot<D>, stream: Stream): void {
    this.assertAlive();
    const index = this.#own(slot);
    // Checked first: recording the event of a stage already committed would move its fence.
    const event = stageEvent(this.#lanes[index]!, this.#ring.stageToCommit(index));
    event.record(stream);
    this.#ring.commit(index, event);
  }

  /**
   * Resolves when the slot's committed stage has completed on the GPU; rejects with
   * DisposedError if the TripleBuffer is disposed first (nothing waits forever).
   */
  completion(slot: TripleBufferSlot<D>): Promise<void> {
    this.assertAlive();
    const index = this.#own(slot);
    const fence = this.#ring.fence(index);
    if (fence === null)
      return Promise.reject(
        new Error(`${this.label}: slot ${index} (${slot.state}) has no committed stage to wait for`),
      );
    return new Promise<void>((resolve, reject) => {
      const waiters = this.#waiters;
      const settle = (error: Error | undefined): void => {
        if (!waiters.delete(abort)) return;
        if (error) reject(error);
        else resolve();
      };
      const abort = (error: Error): void => settle(error);
      waiters.add(abort);
      fence.done().then(
        () => settle(undefined),
        (e: unknown) => settle(e instanceof Error ? e : new Error(String(e))),
      );
    });
  }

  /** Frees every downloading slot whose download has completed; returns how many. */
  advance(): number {
    this.assertAlive();
    return this.#ring.advance();
  }

  /** Frees this downloading slot, whose download must have completed (the host has read its results). */
  release(slot: TripleBufferSlot<D>): void {
    this.assertAlive();
    this.#ring.release(this.#own(slot));
  }

  /**
   * Gives up the slot's step from any stage: it becomes free, but is handed out again only
   * once the work enqueued so far on `streams` (and any committed stage) has completed.
   */
  abandon(slot: TripleBufferSlot<D>, streams: readonly Stream[]): void {
    this.assertAlive();
    const index = this.#own(slot);
    const fences = streams.map((s) => {
      const event = this.#events.acquire();
      this.#pooled.add(event);
      return event.record(s);
    });
    this.#ring.abandon(index, fences);
  }

  #takeNext(stage: 'processing' | 'downloading', stream: Stream | undefined): TripleBufferSlot<D> | null {
    this.assertAlive();
    return this.#slotAt(this.#ring.takeNext(stage, stream ? (e) => stream.waitEvent(e) : undefined));
  }

  #slotAt(index: number): TripleBufferSlot<D> | null {
    return index < 0 ? null : this.slots[index]!;
  }

  #own(slot: TripleBufferSlot<D>): number {
    if (this.slots[slot.index] !== slot) throw new Error(`slot ${slot.index} does not belong to "${this.label}"`);
    return slot.index;
  }

  protected releaseNative(): void {
    const disposed = new DisposedError(
      `TripleBuffer "${this.label}" was disposed while a slot's completion was awaited`,
    );
    for (const abort of [...this.#waiters]) abort(disposed);
    this.#ring.clear();
    for (const s of this.slots) this.#destroy?.(s.data);
    for (const event of slotEvents(this.#lanes)) event.dispose();
    this.#events.dispose();
  }
}

/** The event of `slot` that ends `stage`: the upload's `loaded`, the processing's `computed`, the download's `finished`. */
function stageEvent(slot: LaneSlot, stage: Exclude<SlotState, 'free'>): Event {
  return stage === 'uploading' ? slot.loaded : stage === 'processing' ? slot.computed : slot.finished;
}
