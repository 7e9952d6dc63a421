/** The Batcher's one timer: it fires at the earliest deadline asked for, on setImmediate when that is under a millisecond away. */

/**
 * Node's timers have millisecond resolution, so a timer may fire up to this much before
 * its deadline; flushing then is better than sleeping another whole millisecond.
 */
export const TIMER_GRANULARITY_MS = 1;

/** One pending wake-up at a time, for the earliest deadline armed. */
export class DeadlineTimer {
  #timeout: NodeJS.Timeout | null = null;
  #immediate: NodeJS.Immediate | null = null;
  #deadline = 0;
  readonly #fire: () => void;

  constructor(onFire: () => void) {
    this.#fire = () => {
      this.#timeout = null;
      this.#immediate = null;
      onFire();
    };
  }

  /** Wakes at `deadline` (performance.now() ms) unless an earlier or equal wake-up is already pending. */
  arm(deadline: number, now: number): void {
    if ((this.#timeout !== null || this.#immediate !== null) && this.#deadline <= deadline) return;
    this.clear();
    this.#deadline = deadline;
    const delay = deadline - now;
    if (delay < TIMER_GRANULARITY_MS) this.#immediate = setImmediate(this.#fire);
    else this.#timeout = setTimeout(this.#fire, delay);
  }

  clear(): void {
    if (this.#timeout !== null) clearTimeout(this.#timeout);
    if (this.#immediate !== null) clearImmediate(this.#immediate);
    this.#timeout = null;
    this.#immediate = null;
  }
}
