import { describeValue } from '../resource.js';
import type { DeviceBuffer, Stream } from '../types.js';
import { positiveInteger } from '../value-checks.js';
import { checkOffset } from './dtype.js';

/** Options of `write`, `read`, `copyFrom` and `copyFromPeer`: the stream to enqueue on (default: the context's default stream, where the copy is synchronous) and the element range; offsets and length count elements, not bytes. */
export interface CopyOptions {
  /**
   * Enqueue on this stream and return at once. Without it the copy runs on the context's default
   * stream (`context.defaultStream`, the legacy NULL stream), where it is synchronous: it blocks
   * the thread (and the event loop) until the bytes are in place, after the work queued on that
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

/** The range copyRange() validated last: read right after it, so that a copy allocates nothing. */
export const copyRangeScratch = { offset: 0, sourceOffset: 0, length: 0, bytes: 0 };
const r = copyRangeScratch;

/**
 * Validates the range of a copy of `buffer` (the side named by `offset`, `elementBytes` per element:
 * the buffer's own cached size, no table look-up per copy) against the other side's `otherLength`
 * elements into the scratch `r`, read right after (copies stay allocation-free).
 */
export function copyRange(
  buffer: DeviceBuffer,
  elementBytes: number,
  options: CopyOptions,
  otherLength: number,
  what: string,
): void {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${what} options must be an object, got ${describeValue(options)}`);
  const offset = options.offset ?? 0;
  const sourceOffset = options.otherOffset ?? 0;
  if (offset !== 0) checkOffset(offset, `${what} offset`);
  if (sourceOffset !== 0) checkOffset(sourceOffset, `${what} otherOffset`);
  const length = options.length ?? Math.min(buffer.length - offset, otherLength - sourceOffset);
  if (!(Number.isSafeInteger(length) && length > 0)) positiveInteger(length, `${what} length`);
  if (offset + length > buffer.length)
    throw new RangeError(
      `${what}: [${offset}, ${offset + length}) is outside "${buffer.label}" (${buffer.length} elements)`,
    );
  if (sourceOffset + length > otherLength)
    throw new RangeError(
      `${what}: [${sourceOffset}, ${sourceOffset + length}) is outside the other side (${otherLength} elements)`,
    );
  r.offset = offset;
  r.sourceOffset = sourceOffset;
  r.length = length;
  r.bytes = length * elementBytes;
}
