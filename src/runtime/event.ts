import { cu } from '../ffi/checked.js';
import { CUevent_flags, type CUevent } from '../ffi/generated/types.js';
import { hot } from './cuda.js';
import type { Context } from './context.js';
import { createRawEvent } from './raw-event-pool.js';
import { resolveContext, type Placement } from './defaults.js';
import { DisposedError, expectResource, isLive, Resource } from './resource.js';
import type { Stream } from './types.js';

/** Options of `new Event()`: where it lives (Placement: `device` or `context`; default device 0), timing, sync behaviour and IPC flags, and a label. */
export interface EventDescriptor extends Placement {
  /** Record timestamps so elapsedMs() works (costs a little on record). Default false. */
  timing?: boolean | undefined;
  /** synchronize() sleeps instead of spinning. */
  blockingSync?: boolean | undefined;
  /** Shareable with other processes (requires timing: false). */
  interprocess?: boolean | undefined;
  label?: string | undefined;
}

/** The descriptor's boolean flags, checked once per event made. */
const BOOLEAN_FLAGS = ['timing', 'blockingSync', 'interprocess'] as const;

export class Event extends Resource {
  readonly context: Context;
  readonly handle: CUevent;
  readonly timing: boolean;
  /** The stream handle of the last record, so done() waits in that stream's lane. */
  #recordedOn: bigint | number | undefined;

  constructor(descriptor: EventDescriptor = {}) {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(
        `new Event() takes a descriptor object, got ${descriptor === null ? 'null' : typeof descriptor}`,
      );
    for (const flag of BOOLEAN_FLAGS)
      if (descriptor[flag] !== undefined && typeof descriptor[flag] !== 'boolean')
        throw new TypeError(`new Event(): ${flag} must be a boolean, got ${typeof descriptor[flag]}`);
    super('Event', descriptor.label);
    this.context = resolveContext(descriptor);
    this.timing = descriptor.timing ?? false;
    if (descriptor.interprocess && this.timing)
      throw new TypeError(`event "${this.label}": interprocess events cannot record timing`);
    let flags = this.timing ? 0 : CUevent_flags.CU_EVENT_DISABLE_TIMING;
    if (descriptor.blockingSync) flags |= CUevent_flags.CU_EVENT_BLOCKING_SYNC;
    if (descriptor.interprocess) flags |= CUevent_flags.CU_EVENT_INTERPROCESS;
    this.handle = createRawEvent(this.context, flags, this.label);
    const h = this.handle;
    this.track(() => cu().cuEventDestroy(h));
  }

  /** Records the event at the current end of `stream` (cuEventRecord): it completes when the work queued before it does. Returns `this` for chaining; throws if `stream` belongs to another context or either is disposed. */
  record(stream: Stream): this {
    this.assertAlive();
    if (!isLive<Stream>(stream, 'Stream'))
      expectResource<Stream>(stream, 'Stream', `event "${this.label}" record(stream)`);
    if (stream.context !== this.context)
      throw new Error(
        `event "${this.label}" belongs to ${this.context.label}; it cannot be recorded on stream "${stream.label}" of ${stream.context.label}`,
      );
    stream.use();
    hot().eventRecord(this.handle, stream.handle, recordDuring, this, stream);
    this.#recordedOn = stream.handle ?? 0;
    return this;
  }

  /** True once all work captured by the last record has completed. */
  query(): boolean {
    this.assertAlive();
    return hot().eventQuery(this.handle, eventDuring, this);
  }

  /** Blocks the thread (and the event loop) until the event completes: as long as the work before it. Prefer `await done()`. */
  synchronize(): void {
    this.assertAlive();
    this.context.checkNotLost(`event "${this.label}" synchronize()`);
    cu().cuEventSynchronize(this.handle, eventDuring, this);
  }

  /** Resolves when the event completes, without blocking the event loop. */
  done(): Promise<void> {
    if (this.disposed)
      return Promise.reject(new DisposedError(`Event "${this.label}" was disposed and cannot be used`));
    return this.context.completion.track(this.#recordedOn ?? this.handle, this.handle);
  }

  /** Milliseconds from `start` to this event; both need `timing: true` and must have completed. */
  elapsedSince(start: Event): number {
    this.assertAlive();
    expectResource(start, Event, `event "${this.label}" elapsedSince(start)`);
    if (!this.timing || !start.timing)
      throw new TypeError(`elapsed time needs events created with timing: true ("${start.label}" -> "${this.label}")`);
    return cu().cuEventElapsedTime(start.handle, this.handle, elapsedDuring, start, this);
  }

  /** Milliseconds between two completed `timing: true` events: the same as `end.elapsedSince(start)`. */
  static elapsedMs(start: Event, end: Event): number {
    return expectResource(end, Event, 'Event.elapsedMs(start, end) end').elapsedSince(start);
  }

  protected releaseNative(): void {
    // A done() still pending on this event settles now (rejected): the poller must never query a destroyed handle.
    this.context.completion.cancel(
      this.handle,
      new DisposedError(`Event "${this.label}" was disposed while done() was pending`),
    );
    cu().cuEventDestroy(this.handle, `event "${this.label}"`);
  }
}

// What a failed call was doing, built only when it fails (src/ffi/checked-call.ts).
const eventDuring = (event: Event): string => `event "${event.label}"`;
const recordDuring = (event: Event, stream: Stream): string => `event "${event.label}" on stream "${stream.label}"`;
const elapsedDuring = (start: Event, end: Event): string => `"${start.label}" -> "${end.label}"`;

/** Reuses events: creating one costs a driver call; a pooled acquire costs an array pop. */
export class EventPool extends Resource {
  readonly context: Context;
  readonly timing: boolean;
  readonly #free: Event[] = [];
  readonly #all = new Set<Event>();

  constructor(
    descriptor: { context?: Context | undefined; timing?: boolean | undefined; label?: string | undefined } = {},
  ) {
    super('EventPool', descriptor.label);
    this.context = resolveContext(descriptor);
    this.timing = descriptor.timing ?? false;
  }

  /** A free event from the pool, or a new one (with the pool's context and `timing`) when none is free. Give it back with release(); the pool disposes all of them on dispose(). */
  acquire(): Event {
    this.assertAlive();
    const e = this.#free.pop();
    if (e) return e;
    const created = new Event({ context: this.context, timing: this.timing, label: `${this.label}/${this.#all.size}` });
    this.#all.add(created);
    return created;
  }

  /** Returns an event taken with acquire() for reuse. Throws if it is not from this pool; does nothing once the pool is disposed. */
  release(event: Event): void {
    if (!(event instanceof Event))
      throw new TypeError(`EventPool "${this.label}" release(event) must be given an Event, got ${typeof event}`);
    if (!this.#all.has(event)) throw new Error(`event "${event.label}" does not belong to pool "${this.label}"`);
    if (this.disposed) return;
    this.#free.push(event);
  }

  get size(): number {
    return this.#all.size;
  }

  get available(): number {
    return this.#free.length;
  }

  protected releaseNative(): void {
    for (const e of this.#all) e.dispose();
    this.#all.clear();
    this.#free.length = 0;
  }
}

/** Raw event handles for the runtime's own completion tracking (no objects, no labels). */
