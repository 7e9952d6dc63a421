/**
 * Copies between host arrays (a plain array and pinned staging) off the event loop: large copies
 * are split into pieces that run at once on libuv's thread pool (src/ffi/libc.ts); small ones are
 * copied in place, where a thread hop would cost more than the copy.
 */
import { memcpyAsync } from '../../ffi/libc.js';

/** Below this many bytes a copy runs in place. */
const IN_PLACE_BYTES = 1 << 20;
/** Pieces of at least this many bytes, at most PIECES of them: libuv's pool has 4 threads by default. */
const PIECE_BYTES = 4 << 20;
const PIECES = 4;

type HostArray = Float32Array | Float64Array | Int16Array | Uint16Array;

function bytesOf(a: HostArray, offset: number, length: number): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset + offset * a.BYTES_PER_ELEMENT, length * a.BYTES_PER_ELEMENT);
}

/**
 * target[targetOffset + i] = source[i] for i < source.length. Resolves when done; keep both arrays
 * alive and unchanged until then. Arrays of different element types are converted in place (as
 * TypedArray.set does): only a byte copy can run on another thread.
 */
export function copyHostArray(target: HostArray, source: HostArray, targetOffset = 0): Promise<void> {
  if (!Number.isSafeInteger(targetOffset) || targetOffset < 0 || targetOffset + source.length > target.length)
    return Promise.reject(
      new RangeError(
        `copyHostArray: ${source.length} elements at ${targetOffset} overrun a target of ${target.length}`,
      ),
    );
  const bytes = source.byteLength;
  if (bytes < IN_PLACE_BYTES || target.constructor !== source.constructor) {
    target.set(source, targetOffset);
    return Promise.resolve();
  }
  const pieces = Math.min(PIECES, Math.ceil(bytes / PIECE_BYTES));
  const per = Math.ceil(source.length / pieces);
  const copies: Promise<void>[] = [];
  for (let start = 0; start < source.length; start += per) {
    const n = Math.min(per, source.length - start);
    copies.push(memcpyAsync(bytesOf(target, targetOffset + start, n), bytesOf(source, start, n)));
  }
  return Promise.all(copies).then(() => undefined);
}
