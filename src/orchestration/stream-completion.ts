/**
 * The one record-and-track of work on a stream in orchestration: a completion event from the
 * context's pool behind the work so far, handed to the context's poller. Used by StreamPool
 * (each piece of submitted work) and by the Coordinator (barriers). See
 * Stream.trackCompletion(), the runtime's one record-and-track, does the work.
 */
import type { CUevent } from '../ffi/generated/types.js';
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
  return stream.trackCompletion(listener);
}
