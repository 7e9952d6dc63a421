/**
 * The state machine under TripleBuffer, free of CUDA so that it is testable anywhere: slots
 * cycle free -> uploading -> processing -> downloading -> free, in step order, and every move
 * out of a stage is tied to the fence (the slot's event of that stage) that marks the end of that
 * stage's GPU work.
 */
import { positiveInteger } from '../../runtime/value-checks.js';

export type SlotState = 'free' | 'uploading' | 'processing' | 'downloading';

/** How the ring asks about, and hands back, the fences it holds; TripleBuffer passes events. */
export interface FenceOps<F> {
  isDone(fence: F): boolean;
  release(fence: F): void;
}

interface SlotRecord<F> {
  state: SlotState;
  /** Given when the slot is taken for upload: slots move on oldest step first. */
  step: number;
  /** The end of the current stage's GPU work, once committed. */
  fence: F | null;
  /** A free slot is not handed out before these complete (work of an abandoned step). */
  busy: F[];
}

const PREVIOUS: Record<'processing' | 'downloading', SlotState> = {
  processing: 'uploading',
  downloading: 'processing',
};

/** The CUDA-free state machine of TripleBuffer's slots (free -> uploading -> processing -> downloading), fenced by F. */
export class SlotRing<F> {
  readonly #slots: SlotRecord<F>[];
  readonly #ops: FenceOps<F>;
  #nextStep = 0;

  /** `what` names the count in a message (its owner's option). */
  constructor(count: number, ops: FenceOps<F>, what = 'slots') {
    positiveInteger(count, what);
    this.#ops = ops;
    // Negative steps make the initial free slots go out in index order.
    this.#slots = Array.from({ length: count }, (_, i) => ({
      state: 'free' as SlotState,
      step: i - count,
      fence: null,
      busy: [],
    }));
  }

  get count(): number {
    return this.#slots.length;
  }

  states(): SlotState[] {
    return this.#slots.map((s) => s.state);
  }

  state(index: number): SlotState {
    return this.#slot(index).state;
  }

  /** The step a slot was last taken for (negative before its first use). */
  step(index: number): number {
    return this.#slot(index).step;
  }

  /** Whether the current stage of a slot has been committed. */
  committed(index: number): boolean {
    return this.#slot(index).fence !== null;
  }

  /** The fence of the slot's current stage, once committed. */
  fence(index: number): F | null {
    return this.#slot(index).fence;
  }

  /**
   * Takes the least recently used free slot that the GPU no longer touches, for the next
   * step's upload; -1 when there is none.
   */
  takeForUpload(): number {
    let best = -1;
    for (let i = 0; i < this.#slots.length; i++) {
      const s = this.#slots[i]!;
      if (s.state !== 'free' || !this.#idle(s)) continue;
      if (best < 0 || s.step < this.#slots[best]!.step) best = i;
    }
    if (best < 0) return -1;
    const s = this.#slots[best]!;
    s.state = 'uploading';
    s.step = this.#nextStep++;
    return best;
  }

  /** The stage slot `index` may commit now; throws when it is free or its stage was committed (before a fence is recorded for it). */
  stageToCommit(index: number): Exclude<SlotState, 'free'> {
    const s = this.#slot(index);
    if (s.state === 'free') throw new Error(`slot ${index} is free: there is no stage to commit`);
    if (s.fence !== null) throw new Error(`slot ${index}: its ${s.state} stage was already committed`);
    return s.state;
  }

  /** The current stage of slot `index` ends at `fence`; the ring holds the fence from now on. */
  commit(index: number, fence: F): void {
    this.stageToCommit(index);
    this.#slot(index).fence = fence;
  }

  /**
   * Moves the oldest slot of the previous stage into `stage`, once that stage was committed.
   * With `waitOn`, the move is ordered on the GPU: `waitOn(fence)` makes the consumer wait for
   * the fence. Without it, the slot moves only once the fence has completed. -1 when the
   * oldest slot cannot move yet (younger slots never overtake it).
   */
  takeNext(stage: 'processing' | 'downloading', waitOn?: (fence: F) => void): number {
    const from = PREVIOUS[stage];
    let oldest = -1;
    for (let i = 0; i < this.#slots.length; i++) {
      const s = this.#slots[i]!;
      if (s.state === from && (oldest < 0 || s.step < this.#slots[oldest]!.step)) oldest = i;
    }
    if (oldest < 0) return -1;
    const s = this.#slots[oldest]!;
    const fence = s.fence;
    if (fence === null) return -1;
    if (waitOn) waitOn(fence);
    else if (!this.#ops.isDone(fence)) return -1;
    // A stream wait captures the fence's state when issued, so the fence can be reused at once.
    this.#ops.release(fence);
    s.fence = null;
    s.state = stage;
    return oldest;
  }

  /** Frees every downloading slot whose committed download has completed; returns how many. */
  advance(): number {
    let freed = 0;
    for (const s of this.#slots) {
      if (s.state === 'downloading' && s.fence !== null && this.#ops.isDone(s.fence)) {
        this.#free(s);
        freed++;
      }
    }
    return freed;
  }

  /** Frees slot `index`, which must be downloading with its download committed and complete. */
  release(index: number): void {
    const s = this.#slot(index);
    if (s.state !== 'downloading' || s.fence === null)
      throw new Error(
        `slot ${index} is ${s.state}${s.fence === null ? ' (uncommitted)' : ''}: only a committed download can be released`,
      );
    if (!this.#ops.isDone(s.fence)) throw new Error(`slot ${index}: its download has not completed yet`);
    this.#free(s);
  }

  /**
   * Returns a slot to free from any stage (its step was given up). It is handed out again only
   * after `fences`, and the fence of any committed stage, complete.
   */
  abandon(index: number, fences: readonly F[]): void {
    const s = this.#slot(index);
    if (s.fence !== null) s.busy.push(s.fence);
    s.fence = null;
    s.busy.push(...fences);
    s.state = 'free';
  }

  /** Hands every fence back (the ring is being torn down). */
  clear(): void {
    for (const s of this.#slots) {
      if (s.fence !== null) this.#ops.release(s.fence);
      for (const f of s.busy) this.#ops.release(f);
      s.fence = null;
      s.busy = [];
      s.state = 'free';
    }
  }

  #free(s: SlotRecord<F>): void {
    this.#ops.release(s.fence!);
    s.fence = null;
    s.state = 'free';
  }

  /** True when no fence of an abandoned step is outstanding; completed ones are handed back. */
  #idle(s: SlotRecord<F>): boolean {
    if (s.busy.length === 0) return true;
    if (!s.busy.every((f) => this.#ops.isDone(f))) return false;
    for (const f of s.busy) this.#ops.release(f);
    s.busy = [];
    return true;
  }

  #slot(index: number): SlotRecord<F> {
    const s = this.#slots[index];
    if (s === undefined) throw new RangeError(`slot ${index} does not exist (${this.#slots.length} slots)`);
    return s;
  }
}
