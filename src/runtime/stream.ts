import { bestEffort, cu } from '../ffi/checked.js';
import { CUstream_flags, type CUevent, type CUstream } from '../ffi/generated/types.js';
import { hot } from './cuda.js';
import { registerDefaultStream, type Context } from './context.js';
import { resolveContext, type Placement } from './defaults.js';
import type { Event } from './event.js';
import type { RawEventPool } from './raw-event-pool.js';
import { expectResource, isLive, Resource } from './resource.js';

/** The event recorded when a stream is disposed goes back to its pool once the Stream object is collected (frees may wait on it until then). */
const retiredEvents = new FinalizationRegistry<{ pool: RawEventPool; event: CUevent }>(({ pool, event }) =>
  pool.recycle(event),
);

/** A stream's priority: 'high' is the context's greatest priority, 'low' (the default) its least, 'normal' halfway; an integer is passed to the driver as is (lower numbers run first). */
export type StreamPriority = 'high' | 'normal' | 'low' | number;

/** Options of `new Stream()`: where it lives (Placement: `device` or `context`; default device 0), priority, blocking behaviour and a label. */
export interface StreamDescriptor extends Placement {
  /** 'high' | 'normal' | 'low' map onto cuCtxGetStreamPriorityRange; a number is passed through (clamped by the driver). */
  priority?: StreamPriority | undefined;
  /** Do not synchronize with the legacy default stream. Default true. */
  nonBlocking?: boolean | undefined;
  label?: string | undefined;
}

/** A checked priority (checkPriority) as the context's number. */
export function resolvePriority(context: Context, priority: StreamPriority | undefined): number {
  const { least, greatest } = context.streamPriorityRange;
  if (priority === undefined || priority === 'low') return least;
  if (priority === 'high') return greatest;
  if (priority === 'normal') return Math.round((least + greatest) / 2);
  return priority;
}

/** A priority's spelling, checked before anything asks the driver for the range (a typo is named on any machine). */
export function checkPriority(priority: unknown): asserts priority is StreamPriority | undefined {
  if (priority === undefined || priority === 'low' || priority === 'high' || priority === 'normal') return;
  if (typeof priority !== 'number' || !Number.isInteger(priority))
    throw new TypeError(
      `stream priority must be 'high', 'normal', 'low' or an integer, got ${JSON.stringify(priority) ?? String(priority)}`,
    );
}

/**
 * What `new Stream()` is given to wrap a context's default stream instead of creating one: only
 * this file can make it (see Context.defaultStream), so a user's descriptor never reaches that path.
 */
class DefaultStreamOf {
  constructor(readonly context: Context) {}
}

/**
 * A CUDA stream of one context: work enqueued on it runs in order. `new Stream()` creates one
 * (non-blocking by default); `context.defaultStream` is the context's default stream, CUDA's legacy
 * NULL stream, where work goes when a call names no stream.
 */
export class Stream extends Resource {
  readonly context: Context;
  /** The CUstream; null for the context's default stream (CUDA's legacy NULL stream). */
  readonly handle: CUstream | null;
  readonly priority: number;
  /** False for the context's default stream: the driver owns it, and dispose() leaves it alone. */
  readonly #owned: boolean;
  /** Recorded on the stream when it was disposed: work still queued on it ends before this event completes. */
  #retired: CUevent | undefined;

  /** Creates a stream (cuStreamCreateWithPriority: microseconds, does not block on the device). */
  constructor(descriptor: StreamDescriptor = {}) {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(
        `new Stream() takes a descriptor object, got ${descriptor === null ? 'null' : typeof descriptor}`,
      );
    if (descriptor instanceof DefaultStreamOf) {
      super('Stream', `default stream of ${descriptor.context.label}`);
      this.context = descriptor.context;
      this.handle = null;
      // The NULL stream runs at CUDA's default priority, 0.
      this.priority = 0;
      this.#owned = false;
      return;
    }
    super('Stream', descriptor.label);
    if (descriptor.nonBlocking !== undefined && typeof descriptor.nonBlocking !== 'boolean')
      throw new TypeError(`stream nonBlocking must be a boolean, got ${String(descriptor.nonBlocking)}`);
    checkPriority(descriptor.priority);
    this.context = resolveContext(descriptor);
    this.context.makeCurrent();
    this.priority = resolvePriority(this.context, descriptor.priority);
    const flags =
      descriptor.nonBlocking === false ? CUstream_flags.CU_STREAM_DEFAULT : CUstream_flags.CU_STREAM_NON_BLOCKING;
    this.handle = cu().cuStreamCreateWithPriority(flags, this.priority, `stream "${this.label}"`);
    this.#owned = true;
    const handle = this.handle;
    this.track(() => cu().cuStreamDestroy(handle));
  }

  /**
   * True for the context's default stream (`context.defaultStream`, CUDA's legacy NULL stream):
   * the stream of every call that names none. A copy or memset on it is synchronous, and an
   * operation's output on it is allocated with cuMemAlloc rather than stream-ordered.
   */
  get isDefault(): boolean {
    return !this.#owned;
  }

  /** Makes the stream the context is about to use current and not disposed: the per-operation check. */
  use(): CUstream | null {
    this.assertAlive();
    this.context.makeCurrent();
    return this.handle;
  }

  /** True when all work submitted to the stream has completed. */
  query(): boolean {
    return hot().streamQuery(this.use(), streamDuring, this);
  }

  /** Blocks the thread (and the event loop) until the stream is idle: as long as the work queued on it. Prefer `await done()` in servers. */
  synchronize(): void {
    // The message is built only on failure (this call sits in every synchronous round trip).
    cu().cuStreamSynchronize(this.use(), streamDuring, this);
  }

  /**
   * The one way to wait for a stream (docs/design.md): records a completion event from the
   * context's pool behind the work so far and hands it to the context's poller, which calls
   * `onSettled` (with the CUDA error, if the work failed) once it completes, never blocking.
   * Returns the event while the work is pending, so other streams can `cuStreamWaitEvent` on it
   * right away; undefined when it completed inline. The event is recycled right before
   * `onSettled` runs and must not be used after that. If the record fails, `onSettled` hears the
   * error and it is thrown.
   */
  trackCompletion(onSettled: (error: Error | undefined) => void): CUevent | undefined {
    const handle = this.use();
    let event: CUevent;
    try {
      event = this.#recordCompletion(handle);
    } catch (e) {
      onSettled(e as Error);
      throw e;
    }
    let pending = true;
    const resolved = (): void => {
      pending = false;
      onSettled(undefined);
    };
    const rejected = (error: Error): void => {
      pending = false;
      onSettled(error);
    };
    this.context.completion.enqueue(handle ?? 0, event, resolved, rejected, this.context.completionEvents.recycle);
    return pending ? event : undefined;
  }

  /** Resolves when all work submitted so far has completed; never blocks the event loop. */
  done(): Promise<void> {
    let handle: CUstream | null;
    let event: CUevent;
    try {
      handle = this.use();
      event = this.#recordCompletion(handle);
    } catch (e) {
      // A disposed stream, a lost context or a failed record: a rejected promise, never a hang.
      return Promise.reject(e as Error);
    }
    return this.context.completion.track(handle ?? 0, event, this.context.completionEvents.recycle);
  }

  /** A completion event from the context's pool recorded behind the work so far; throws (the event given back) when the record fails. */
  #recordCompletion(handle: CUstream | null): CUevent {
    const events = this.context.completionEvents;
    const event = events.acquire();
    try {
      hot().eventRecord(event, handle, completionDuring, this);
    } catch (e) {
      events.recycle(event);
      throw e;
    }
    return event;
  }

  /**
   * Calls `callback` (with the error, if the work failed) once the work submitted so far
   * completes. Throws DisposedError on a disposed stream (the callback would never run) and
   * TypeError when `callback` is not a function.
   */
  onComplete(callback: (error?: Error) => void): void {
    this.assertAlive();
    if (typeof callback !== 'function')
      throw new TypeError(
        `stream "${this.label}" onComplete(callback): callback must be a function, got ${callback === null ? 'null' : typeof callback}`,
      );
    this.done().then(
      () => callback(),
      (e: Error) => callback(e),
    );
  }

  /** Later work on this stream waits for `event` (recorded on any stream), without blocking the host. */
  waitEvent(event: Event): void {
    if (!isLive<Event>(event, 'Event'))
      expectResource<Event>(event, 'Event', `stream "${this.label}" waitEvent(event)`);
    hot().streamWaitEvent(this.use(), event.handle, 0, waitDuring, this, event);
  }

  /** Records `event` here and returns it. */
  record(event: Event): Event {
    return (
      isLive<Event>(event, 'Event')
        ? event
        : expectResource<Event>(event, 'Event', `stream "${this.label}" record(event)`)
    ).record(this);
  }

  /**
   * An event recorded on this stream when it was disposed (undefined while it is alive): a
   * stream-ordered free of memory this stream used waits on it, since destroying a stream does
   * not wait for its work.
   */
  get retiredEvent(): CUevent | undefined {
    return this.#retired;
  }

  /**
   * Destroys the stream (work queued on it still runs to its end). The context's default stream
   * belongs to its context: disposing it does nothing while the context lives (a `using` block
   * over `context.defaultStream` leaves it usable), and it is disposed with its context.
   */
  override dispose(): void {
    if (!this.#owned && !this.context.disposed) return;
    super.dispose();
  }

  protected releaseNative(): void {
    if (!this.#owned) return;
    this.context.makeCurrent();
    const pool = this.context.completionEvents;
    const event = pool.acquire();
    const handle = this.handle;
    const recorded = bestEffort(() => {
      hot().eventRecord(event, handle);
      return true;
    }, false);
    if (recorded) {
      this.#retired = event;
      retiredEvents.register(this, { pool, event });
    } else pool.recycle(event);
    cu().cuStreamDestroy(this.handle, `stream "${this.label}"`);
  }
}

registerDefaultStream((context) => new Stream(new DefaultStreamOf(context)));

/**
 * The stream a call that takes `{ stream? }` runs on: `stream` when given, else the context's
 * default stream (`context.defaultStream`), as cuda.core's `default_stream()`. Each public
 * operation calls it once, at its entry, and hands only the resolved Stream inward.
 *
 * The default is CUDA's legacy NULL stream of the context the work runs in, not a stream
 * tscuda creates: CUDA's own stream-less calls (cuMemcpy, cuMemset, cuLaunchKernel given no
 * stream) are ordered on it, as is other code in the process that names no stream, so a call
 * without one is ordered the way CUDA users expect. Work on it runs after the work enqueued on
 * it before, and waits for (and is waited for by) blocking streams; tscuda's own streams are
 * non-blocking, so they are not ordered against it implicitly. Copies and memsets on it are
 * synchronous (the bytes are in place when the call returns), and DeviceBuffer.alloc() on it
 * (an operation's output made there too) uses cuMemAlloc rather than the stream-ordered allocator.
 */
export function resolveStream(context: Context, stream: Stream | undefined): Stream {
  return stream ?? context.defaultStream;
}

// What a failed call was doing, built only when it fails (src/ffi/checked-call.ts).
const streamDuring = (stream: Stream): string => `stream "${stream.label}"`;
const completionDuring = (stream: Stream): string => `completion of work on stream "${stream.label}"`;
const waitDuring = (stream: Stream, event: Event): string => `stream "${stream.label}" waiting on "${event.label}"`;

/** The class's instance type under the name types.ts gives it (see there: why). */
type StreamInstance = Stream;
declare module './types.js' {
  interface Stream extends StreamInstance {}
}
