/**
 * The one record-and-track of work on a stream in orchestration: a completion event from the
 * context's pool behind the work so far, handed to the context's poller. Used by StreamPool
 * (each piece of submitted work) and by the Coordinator (barriers). See
 * .helpers/runtime-needs.md: once Stream offers the same as a method, this defers to it.
 */
import type { CUevent } from '../ffi/generated/types.js';
import { driverError, hot } from '../runtime/cuda.js';
import type { Stream } from '../runtime/stream.js';

/** Heard by whoever submitted work once it completes (error: the CUDA error it failed with). */
export type SettleListener = (error: Error | undefined) => void;

/**
 * Calls `listener` once the work enqueued on `stream` so far has completed (never blocking).
 * Returns the event recorded behind it while the work is pending, so other streams can wait
 * on it; undefined when it completed inline. The event is recycled right before `listener`
 * runs and must not be used after that. If the record fails, `listener` hears the error and
 * it is thrown.
 */
export function trackStream(stream: Stream, listener: SettleListener): CUevent | undefined {
  const handle = stream.use();
  const context = stream.context;
  const events = context.completionEvents;
  const event = events.acquire();
  const status = hot().eventRecord(event, handle);
  if (status !== 0) {
    events.recycle(event);
    const error = driverError(status, 'cuEventRecord', `completion of work on stream "${stream.label}"`);
    listener(error);
    throw error;
  }
  let pending = true;
  const settle = (error: Error | undefined): void => {
    if (!pending) return;
    pending = false;
    listener(error);
  };
  context.completion.enqueue(handle ?? 0, event, () => settle(undefined), settle, events.recycle);
  return pending ? event : undefined;
}
