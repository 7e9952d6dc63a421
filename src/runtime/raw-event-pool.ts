import { cu } from '../ffi/checked.js';
import { CUevent_flags, type CUevent } from '../ffi/generated/types.js';
import type { Context } from './types.js';

/** Creates one event handle in `context` (no object around it): the runtime's own bookkeeping uses these. */
export function createRawEvent(context: Context, flags: number, label: string): CUevent {
  context.makeCurrent();
  return cu().cuEventCreate(flags, label);
}

/** Raw event handles for the runtime's own completion tracking (no objects, no labels), reused. */
export class RawEventPool {
  readonly #free: CUevent[] = [];
  readonly #context: Context;
  #created = 0;
  readonly recycle = (e: CUevent): void => {
    this.#free.push(e);
  };

  constructor(context: Context) {
    this.#context = context;
  }

  acquire(): CUevent {
    const free = this.#free.pop();
    if (free !== undefined) return free;
    this.#created++;
    return createRawEvent(this.#context, CUevent_flags.CU_EVENT_DISABLE_TIMING, 'completion event');
  }

  get available(): number {
    return this.#free.length;
  }

  /** Events this pool has created (a disposed stream's retired event comes back to it when the stream is collected, so `available` alone can grow at any time). */
  get created(): number {
    return this.#created;
  }
}
