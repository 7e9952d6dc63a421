import type { Stream } from '../types.js';

/** Options of `write`, `read`, `copyFrom` and `copyFromPeer`: the stream to enqueue on (default: synchronous) and the element range; offsets and length count elements, not bytes. */
export interface CopyOptions {
  /**
   * Enqueue on this stream and return at once. Without it the copy is synchronous: it blocks the
   * thread (and the event loop) until the bytes are in place, after the work queued on the legacy
   * stream (host<->device at ~10–25 GB/s, about 1 ms per 10–25 MB), so work on any stream that
   * follows sees them.
   */
  stream?: Stream | undefined;
  /** First element of this buffer. */
  offset?: number | undefined;
  /** First element of the other side (the host array or buffer read into or written from, or the source buffer). */
  otherOffset?: number | undefined;
  /** Elements to copy; default: all that fit. */
  length?: number | undefined;
}
