import { cu, setCallContextSource } from '../ffi/checked.js';
import type { CudaError } from '../ffi/index.js';
import type { CUcontext } from '../ffi/generated/types.js';
import { CompletionPoller } from './completion.js';
import type { Device, Stream } from './types.js';
import { ContextLostError } from './lost.js';
import { RawEventPool } from './raw-event-pool.js';
import { DisposedError, Resource } from './resource.js';

let current: Context | null = null;

/**
 * Wraps a context's default stream in a Stream: stream.ts registers it as it loads. This file
 * cannot import Stream (stream.ts imports defaults.ts, which imports this file); every Context
 * comes from a Device, and device.ts imports stream.ts, so it is registered before any is made.
 */
let wrapDefaultStream: ((context: Context) => Stream) | undefined;

/** Called once by stream.ts as it loads. */
export function registerDefaultStream(wrap: (context: Context) => Stream): void {
  wrapDefaultStream = wrap;
}

// Every failed driver call names the context current on this thread, and a sticky one fails it.
setCallContextSource(() => current);

/** A CUDA context (the device's primary one). Owns the completion poller of all its streams. */
export class Context extends Resource {
  readonly device: Device;
  readonly handle: CUcontext;
  readonly completion: CompletionPoller;
  /** Events behind `stream.done()` and `onComplete`, reused. */
  readonly completionEvents: RawEventPool;
  #sticky: CudaError | undefined;
  #defaultStream: Stream | undefined;
  #priorityRange: { least: number; greatest: number } | undefined;
  /**
   * Rejects with the sticky error once one breaks this context (it never resolves). Awaiting it
   * is optional: tscuda attaches its own no-op handler, so it is never an unhandled rejection.
   * `context.lost.catch((e) => restartWorker(e))` is how a server learns it must restart.
   */
  readonly lost: Promise<never>;
  #rejectLost: (error: CudaError) => void = () => {};

  private constructor(device: Device, handle: CUcontext) {
    super('Context', `device ${device.ordinal} primary context`);
    this.device = device;
    this.handle = handle;
    this.lost = new Promise<never>((_, reject) => (this.#rejectLost = reject));
    this.lost.catch(() => {});
    this.completion = new CompletionPoller(this);
    this.completionEvents = new RawEventPool(this);
    const ordinal = device.handle;
    this.track(() => cu().cuDevicePrimaryCtxRelease(ordinal));
  }

  /** Retains the device's primary context (one cuDevicePrimaryCtxRetain, released by dispose()) and makes it current. Each call is a new retain and a new wrapper: prefer `device.context`, which caches one. */
  static retainPrimary(device: Device): Context {
    const ctx = new Context(device, cu().cuDevicePrimaryCtxRetain(device.handle, `device ${device.ordinal}`));
    ctx.makeCurrent();
    return ctx;
  }

  /** The context current on this thread as tscuda last set it. */
  static get current(): Context | null {
    return current;
  }

  /**
   * Makes this context current if it is not already: two comparisons on the hot path. Throws
   * ContextLostError once a sticky error broke the context: new work fails fast.
   */
  makeCurrent(): void {
    if (current === this && this.#sticky === undefined) return;
    this.assertAlive();
    if (this.#sticky) throw new ContextLostError(this.#sticky, this.label);
    cu().cuCtxSetCurrent(this.handle, this.label);
    current = this;
  }

  /**
   * The context's default stream: CUDA's legacy NULL stream as a Stream (its `handle` is null,
   * `isDefault` true), where every call that is given no `{ stream }` runs (`resolveStream` of
   * stream.ts says why it is that stream). One object per Context, made on first use; disposing it
   * does nothing, it goes with the context.
   */
  get defaultStream(): Stream {
    if (this.#defaultStream !== undefined) return this.#defaultStream;
    if (wrapDefaultStream === undefined)
      throw new Error('tscuda: src/runtime/stream.ts was never loaded; import tscuda through an entry point');
    return (this.#defaultStream = wrapDefaultStream(this));
  }

  /** A sticky error broke this context: every later operation and every pending completion fails with it. */
  get stickyError(): CudaError | undefined {
    return this.#sticky;
  }

  /** Throws ContextLostError (naming `where`) when a sticky error broke this context. */
  checkNotLost(where: string): void {
    if (this.#sticky) throw new ContextLostError(this.#sticky, where);
  }

  /** Marks the context lost (the first sticky error wins) and rejects every pending completion and `lost`. */
  fail(error: CudaError): void {
    if (!this.#sticky) {
      this.#sticky = error;
      this.#rejectLost(error);
    }
    this.completion.failAll(error);
  }

  /** Blocks the calling thread (and the event loop) until all work in the context has finished: as long as the longest queued work. Prefer `await stream.done()`. */
  synchronize(): void {
    this.makeCurrent();
    cu().cuCtxSynchronize(this.label);
  }

  /** Numerically lower is higher priority: `greatest` is the highest priority (e.g. -5), `least` the lowest (0). */
  get streamPriorityRange(): { least: number; greatest: number } {
    if (this.#priorityRange) return this.#priorityRange;
    this.makeCurrent();
    const range = cu().cuCtxGetStreamPriorityRange();
    this.#priorityRange = { least: range.leastPriority, greatest: range.greatestPriority };
    return this.#priorityRange;
  }

  /** Free and total device memory in bytes right now (cuMemGetInfo), as the whole device sees it: other processes' allocations count against `freeBytes`. */
  memoryInfo(): { freeBytes: number; totalBytes: number } {
    this.makeCurrent();
    const { free, total } = cu().cuMemGetInfo();
    return { freeBytes: Number(free), totalBytes: Number(total) };
  }

  protected releaseNative(): void {
    this.completion.failAll(new DisposedError(`${this.label} was disposed while work was pending`));
    this.#defaultStream?.dispose();
    if (current === this) current = null;
    cu().cuDevicePrimaryCtxRelease(this.device.handle);
  }
}

/** The class's instance type under the name types.ts gives it (see there: why). */
type ContextInstance = Context;
declare module './types.js' {
  interface Context extends ContextInstance {}
}
