import { CUresult, CUstream_flags, type CUstream } from '../ffi/generated/types.js';
import { check, driverApi, driverError, outValue, hot } from './cuda.js';
import type { Context } from './context.js';
import { resolveContext, type Placement } from './defaults.js';
import type { Event } from './event.js';
import { Resource } from './resource.js';

export type StreamPriority = 'high' | 'normal' | 'low' | number;

export interface StreamDescriptor extends Placement {
  /** 'high' | 'normal' | 'low' map onto cuCtxGetStreamPriorityRange; a number is passed through (clamped by the driver). */
  priority?: StreamPriority;
  /** Do not synchronize with the legacy default stream. Default true. */
  nonBlocking?: boolean;
  label?: string;
}

export function resolvePriority(context: Context, priority: StreamPriority | undefined): number {
  const { least, greatest } = context.streamPriorityRange;
  if (priority === undefined || priority === 'low') return least;
  if (priority === 'high') return greatest;
  if (priority === 'normal') return Math.round((least + greatest) / 2);
  if (!Number.isInteger(priority)) throw new TypeError(`stream priority must be 'high', 'normal', 'low' or an integer, got ${String(priority)}`);
  return priority;
}

export class Stream extends Resource {
  readonly context: Context;
  /** The CUstream; null for the legacy default stream. */
  readonly handle: CUstream | null;
  readonly priority: number;
  readonly #owned: boolean;

  constructor(descriptor: StreamDescriptor = {}) {
    super('Stream', descriptor.label);
    this.context = resolveContext(descriptor);
    this.context.makeCurrent();
    this.priority = resolvePriority(this.context, descriptor.priority);
    const flags = descriptor.nonBlocking === false ? CUstream_flags.CU_STREAM_DEFAULT : CUstream_flags.CU_STREAM_NON_BLOCKING;
    const h: [CUstream | null] = [null];
    check(driverApi().cuStreamCreateWithPriority(h, flags, this.priority), 'cuStreamCreateWithPriority', `stream "${this.label}"`);
    this.handle = outValue(h, 'cuStreamCreateWithPriority');
    this.#owned = true;
    const handle = this.handle;
    this.track(() => driverApi().cuStreamDestroy(handle));
  }

  /** Makes the stream the context is about to use current and not disposed: the per-operation check. */
  use(): CUstream | null {
    this.assertAlive();
    this.context.makeCurrent();
    return this.handle;
  }

  /** True when all work submitted to the stream has completed. */
  query(): boolean {
    const status = hot().streamQuery(this.use());
    if (status === 0) return true;
    if (status === CUresult.CUDA_ERROR_NOT_READY) return false;
    throw driverError(status, 'cuStreamQuery', `stream "${this.label}"`);
  }

  /** Blocks the thread until the stream is idle. Prefer `await done()` in servers. */
  synchronize(): void {
    check(driverApi().cuStreamSynchronize(this.use()), 'cuStreamSynchronize', `stream "${this.label}"`);
  }

  /** Resolves when all work submitted so far has completed; never blocks the event loop. */
  done(): Promise<void> {
    const handle = this.use();
    const sticky = this.context.stickyError;
    if (sticky) return Promise.reject(sticky);
    const pool = this.context.completionEvents;
    const event = pool.acquire();
    const status = hot().eventRecord(event, handle);
    if (status !== 0) {
      pool.recycle(event);
      return Promise.reject(driverError(status, 'cuEventRecord', `done() on stream "${this.label}"`));
    }
    return this.context.completion.track(handle ?? 0, event, pool.recycle);
  }

  /** Calls `callback` (with the error, if the work failed) once the work submitted so far completes. */
  onComplete(callback: (error?: Error) => void): void {
    this.done().then(
      () => callback(),
      (e: Error) => callback(e),
    );
  }

  /** Later work on this stream waits for `event` (recorded on any stream), without blocking the host. */
  waitEvent(event: Event): void {
    const status = hot().streamWaitEvent(this.use(), event.handle, 0);
    if (status !== 0) throw driverError(status, 'cuStreamWaitEvent', `stream "${this.label}" waiting on "${event.label}"`);
  }

  /** Records `event` here and returns it. */
  record(event: Event): Event {
    return event.record(this);
  }

  protected releaseNative(): void {
    if (!this.#owned) return;
    this.context.makeCurrent();
    check(driverApi().cuStreamDestroy(this.handle), 'cuStreamDestroy', `stream "${this.label}"`);
  }
}
