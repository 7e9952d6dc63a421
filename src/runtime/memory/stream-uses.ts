/** The streams that used a buffer's memory (PyTorch's record_stream, automated), kept bounded. */
import { bestEffort } from '../../ffi/checked.js';
import { hot } from '../cuda.js';
import type { Stream } from '../stream.js';

/**
 * Bounded memory for long-lived buffers used by many short-lived streams: a disposed stream whose
 * retired event has completed has nothing left running, so a free need not wait for it.
 */
export function forgetFinishedStreams(used: Set<Stream>): void {
  for (const s of used) {
    if (!s.disposed) continue;
    const retired = s.retiredEvent;
    // An event the driver cannot answer for counts as running: the free then waits on it.
    if (retired === undefined || bestEffort(() => hot().eventQuery(retired), false)) used.delete(s);
  }
}
