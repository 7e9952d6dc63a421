/**
 * Which slots of a lane are free and who gets the next one, free of CUDA so that the rotation and
 * the order of waiters are testable anywhere. A slot is taken for one piece of work and given back
 * once the GPU is done with it; work that must have the lane alone (`exclusive`) gets a slot only
 * while none is taken, and nothing else gets one until it gives its slot back.
 *
 * The slot given back last goes out first: a lane that runs one piece of work at a time keeps
 * using one slot, whose buffers (and compute graphs, keyed by slot) are already made. Waiters are
 * served in arrival order, and nobody overtakes them: tryTake() finds no slot while anyone waits.
 */

interface Waiter<S> {
  readonly exclusive: boolean;
  readonly resolve: (slot: S) => void;
  readonly reject: (error: Error) => void;
}

/** The free slots of a lane, and the work waiting for one. */
export class SlotSet<S> {
  readonly #size: number;
  /** Free slots; the last one pushed goes out first. */
  readonly #free: S[];
  readonly #waiters: Waiter<S>[] = [];
  /** Exclusive work holds the one slot taken. */
  #alone = false;
  #closed: Error | undefined;

  /** Every slot starts free; the first one of `slots` goes out first. */
  constructor(slots: readonly S[]) {
    this.#size = slots.length;
    this.#free = [...slots].reverse();
  }

  /** Slots in all. */
  get size(): number {
    return this.#size;
  }

  /** Slots taken now. */
  get taken(): number {
    return this.#size - this.#free.length;
  }

  /** Takers waiting for a slot. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** A free slot now, or undefined (none free, the lane busy for `exclusive` work, or others waiting first); throws once closed. */
  tryTake(exclusive = false): S | undefined {
    if (this.#closed !== undefined) throw this.#closed;
    if (this.#waiters.length > 0 || !this.#room(exclusive)) return undefined;
    this.#alone = exclusive;
    return this.#free.pop();
  }

  /** A slot as soon as one is free (for `exclusive` work: once every slot is), after those already waiting; rejects once closed. */
  take(exclusive = false): Promise<S> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    const slot = this.tryTake(exclusive);
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise<S>((resolve, reject) => this.#waiters.push({ exclusive, resolve, reject }));
  }

  /** Gives back a slot taken from this set (once per take), handing it on to the first waiter that may have it. */
  give(slot: S): void {
    this.#free.push(slot);
    // Exclusive work held the only slot taken: this one.
    this.#alone = false;
    while (this.#waiters.length > 0 && this.#room(this.#waiters[0]!.exclusive)) {
      const waiter = this.#waiters.shift()!;
      this.#alone = waiter.exclusive;
      waiter.resolve(this.#free.pop()!);
    }
  }

  /** Refuses every waiter and every later take with `error` (the lane is going away). */
  close(error: Error): void {
    this.#closed ??= error;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(this.#closed);
  }

  /** Whether a slot may go out now: none while exclusive work runs; else any free one, or for exclusive work only when none is taken. */
  #room(exclusive: boolean): boolean {
    return !this.#alone && (exclusive ? this.#free.length === this.#size : this.#free.length > 0);
  }
}
