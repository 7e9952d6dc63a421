import type { DuringInContext } from '../ffi/checked-call.js';
import { CudaError } from '../ffi/errors.js';
import type { CUevent } from '../ffi/generated/types.js';
import { hot } from './cuda.js';
import type { Context } from './types.js';

/** How long the poller spins on setImmediate without seeing progress before it backs off to timers. */
const SPIN_MS = 2;
/**
 * When nothing else is pending, enqueue() queries in place for this long first: short work
 * (an empty kernel, a small copy) then resolves without an event-loop hop, as fast as a
 * blocking cuStreamSynchronize; the loop is held for at most this long.
 */
const INLINE_SPIN_MS = 0.03;

interface Waiter {
  event: CUevent;
  resolve: () => void;
  reject: (error: Error) => void;
  /** Returned to the context's event pool once settled. */
  recycle: ((event: CUevent) => void) | undefined;
}

/** Waiters on one stream, oldest first: events on a stream complete in order, so only the head is queried. */
class Lane {
  items: Waiter[] = [];
  head = 0;
}

/**
 * One poller per context (docs/design.md): no host thread blocks, no CUDA thread calls into JS.
 * It queries only the oldest pending event of each stream, on setImmediate while work
 * completes quickly and on 1 ms timers once it has waited longer than SPIN_MS.
 */
export class CompletionPoller {
  readonly context: Context;
  readonly #lanes = new Map<bigint | number, Lane>();
  /** Drained lanes kept for reuse (bounded): a stream waited on again and again allocates no lane each time. */
  readonly #spare: Lane[] = [];
  #pending = 0;
  #scheduled = false;
  #lastProgress = 0;
  readonly #tick = (): void => this.#poll();
  /** A failed query names this poller's context and a sticky one fails it, whichever context is current. */
  readonly #queryDuring: DuringInContext;

  constructor(context: Context) {
    this.context = context;
    this.#queryDuring = { during: 'completion of work', context };
  }

  get pending(): number {
    return this.#pending;
  }

  /** Settles when `event`, recorded on `stream` (its handle), has completed. */
  track(stream: bigint | number, event: CUevent, recycle?: (event: CUevent) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => this.enqueue(stream, event, resolve, reject, recycle));
  }

  /** track() without the Promise: calls `resolve` once `event` (recorded on `stream`) completes, or `reject` with the error that broke the context (at once if it is already lost), and hands the event to `recycle` either way. May settle synchronously when nothing else is pending. */
  enqueue(
    stream: bigint | number,
    event: CUevent,
    resolve: () => void,
    reject: (error: Error) => void,
    recycle?: (event: CUevent) => void,
  ): void {
    const sticky = this.context.stickyError;
    if (sticky) {
      recycle?.(event);
      reject(sticky);
      return;
    }
    if (this.#pending === 0 && this.#settledInline(event, resolve, reject, recycle)) return;
    let lane = this.#lanes.get(stream);
    if (!lane) {
      lane = this.#spare.pop() ?? new Lane();
      this.#lanes.set(stream, lane);
    }
    lane.items.push({ event, resolve, reject, recycle });
    this.#pending++;
    if (!this.#scheduled) {
      this.#lastProgress = performance.now();
      this.#schedule(true);
    }
  }

  #settledInline(
    event: CUevent,
    resolve: () => void,
    reject: (error: Error) => void,
    recycle: ((event: CUevent) => void) | undefined,
  ): boolean {
    const query = hot().eventQuery;
    const during = this.#queryDuring;
    const deadline = performance.now() + INLINE_SPIN_MS;
    for (;;) {
      let done: boolean;
      try {
        done = query(event, during);
      } catch (e) {
        reject(e as Error);
        if (e instanceof CudaError && e.sticky) this.failAll(e);
        return true;
      }
      if (done) {
        recycle?.(event);
        resolve();
        return true;
      }
      if (performance.now() > deadline) return false;
    }
  }

  #schedule(spin: boolean): void {
    this.#scheduled = true;
    if (spin) setImmediate(this.#tick);
    else setTimeout(this.#tick, 1);
  }

  #poll(): void {
    this.#scheduled = false;
    if (this.#pending === 0) return;
    const query = hot().eventQuery;
    const during = this.#queryDuring;
    let progressed = false;
    for (const [key, lane] of this.#lanes) {
      const items = lane.items;
      while (lane.head < items.length) {
        const w = items[lane.head]!;
        // Taken off before the query: a sticky error fails the context inside it, and with it every
        // waiter still queued; this one hears its error below, once.
        lane.head++;
        this.#pending--;
        let error: unknown;
        try {
          if (!query(w.event, during)) {
            lane.head--;
            this.#pending++;
            break;
          }
        } catch (e) {
          error = e;
        }
        progressed = true;
        if (error === undefined) {
          w.recycle?.(w.event);
          w.resolve();
        } else {
          w.reject(error as Error);
          if (error instanceof CudaError && error.sticky) {
            this.failAll(error);
            return;
          }
        }
      }
      // A drained lane is removed (bounded memory: one lane per stream with work pending, not per stream ever seen).
      if (lane.head === items.length) this.#retire(key, lane);
      else if (lane.head > 1024 && lane.head * 2 > items.length) {
        // A lane that never drains (a stream kept busy) drops its settled prefix now and then.
        items.splice(0, lane.head);
        lane.head = 0;
      }
    }
    if (this.#pending === 0) return;
    const now = performance.now();
    if (progressed) this.#lastProgress = now;
    this.#schedule(now - this.#lastProgress < SPIN_MS);
  }

  /** Removes a drained lane from the map and keeps it (emptied) for the next stream that needs one. */
  #retire(key: bigint | number, lane: Lane): void {
    this.#lanes.delete(key);
    lane.items.length = 0;
    lane.head = 0;
    if (this.#spare.length < 64) this.#spare.push(lane);
  }

  /** Streams with completions pending (lanes are removed once drained). */
  get lanes(): number {
    return this.#lanes.size;
  }

  /**
   * Rejects and forgets every waiter on `event`, before its handle is destroyed (an Event disposed
   * while its done() is awaited): the poller never queries a destroyed handle.
   */
  cancel(event: CUevent, error: Error): void {
    for (const [key, lane] of this.#lanes) {
      const items = lane.items;
      let kept = lane.head;
      for (let i = lane.head; i < items.length; i++) {
        const w = items[i]!;
        if (w.event === event) {
          this.#pending--;
          w.reject(error);
        } else items[kept++] = w;
      }
      items.length = kept;
      if (lane.head === items.length) this.#retire(key, lane);
    }
  }

  /** Rejects every pending waiter (a sticky error, or the context going away). */
  failAll(error: Error): void {
    const lanes = [...this.#lanes.values()];
    this.#lanes.clear();
    this.#pending = 0;
    for (const lane of lanes) for (let i = lane.head; i < lane.items.length; i++) lane.items[i]!.reject(error);
  }
}
