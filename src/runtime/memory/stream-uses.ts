/** The streams that used a buffer's memory (PyTorch's record_stream, automated), kept bounded. */
import { hot } from '../cuda.js';
import type { Stream } from '../stream.js';

/**
 * Bounded memory for long-lived buffers used by many short-lived streams: a disposed stream whose
 * retired event has completed has nothing left running, so a free need not wait for it.
 */
export function forgetFinishedStreams(used: Set<Stream>): void {
  const query = hot().eventQuery;
  for (const s of used) {
    if (!s.disposed) continue;
    const retired = s.retiredEvent;
    if (retired === undefined || query(retired) === 0) used.delete(s);
  }
}
