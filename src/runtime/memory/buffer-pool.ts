/**
 * Reused host memory for multi-megabyte payloads (request bodies, a queue worker's samples and
 * results): a fresh Buffer each time costs the page faults of new memory and, worse, garbage
 * collections of external memory that stall the event loop. Buffers are kept by power-of-two size
 * class, up to a byte budget, and handed out again. The memory may come from an allocator (an
 * engine's pinned arrays: jobs then copy it to and from the GPU directly). CUDA-free.
 */
import { sizeClass } from './size-classes.js';

/** Smallest pooled allocation; smaller requests are pooled at this size. */
const MIN_CLASS_BYTES = 1 << 16;

/** Where a pool's memory comes from, when not from Buffer.allocUnsafeSlow (e.g. an engine's pinned arrays). */
export interface BufferAllocator {
  /** A Buffer of exactly `bytes` (a power of two of at least 64 KiB), 8-byte aligned. */
  allocate(bytes: number): Buffer;
  /** Frees a Buffer from allocate() that the pool no longer keeps. */
  free(buffer: Buffer): void;
}

/** Buffers kept for reuse, by size class, up to a byte budget. */
export class BufferPool {
  readonly #free = new Map<number, Buffer[]>();
  /** The whole pooled allocation behind each buffer handed out. */
  readonly #backing = new WeakMap<Buffer, Buffer>();
  readonly #maxCachedBytes: number;
  readonly #allocator: BufferAllocator | undefined;
  #cachedBytes = 0;

  /**
   * @param maxCachedBytes bytes of free buffers kept for reuse; more are freed (left to the garbage collector, or the allocator's free()).
   * @param allocator where the memory comes from; default Buffer.allocUnsafeSlow.
   */
  constructor(maxCachedBytes: number, allocator?: BufferAllocator) {
    if (!Number.isSafeInteger(maxCachedBytes) || maxCachedBytes < 0)
      throw new RangeError(`maxCachedBytes must be a non-negative integer, got ${String(maxCachedBytes)}`);
    this.#maxCachedBytes = maxCachedBytes;
    this.#allocator = allocator;
  }

  /** Bytes of free buffers kept now. */
  get cachedBytes(): number {
    return this.#cachedBytes;
  }

  /** A Buffer of exactly `bytes` (its own memory, 8-byte aligned, contents unspecified). */
  take(bytes: number): Buffer {
    if (!Number.isSafeInteger(bytes) || bytes < 0)
      throw new RangeError(`buffer size must be a non-negative integer, got ${String(bytes)}`);
    const size = Math.max(MIN_CLASS_BYTES, sizeClass(Math.max(1, bytes)));
    let backing = this.#free.get(size)?.pop();
    if (backing) this.#cachedBytes -= size;
    // allocUnsafeSlow: an ArrayBuffer of its own (offset 0, so any typed view is aligned), never the shared pool.
    else backing = this.#allocator ? this.#allocator.allocate(size) : Buffer.allocUnsafeSlow(size);
    const buffer = backing.subarray(0, bytes);
    this.#backing.set(buffer, backing);
    return buffer;
  }

  /**
   * Frees kept buffers, largest first, until at most `keepBytes` are kept (a server trims its pool
   * once a burst is over, so memory taken for the burst goes back); returns the bytes freed.
   */
  trim(keepBytes: number): number {
    if (!Number.isSafeInteger(keepBytes) || keepBytes < 0)
      throw new RangeError(`keepBytes must be a non-negative integer, got ${String(keepBytes)}`);
    let freed = 0;
    for (const size of [...this.#free.keys()].sort((a, b) => b - a)) {
      const list = this.#free.get(size)!;
      while (this.#cachedBytes > keepBytes && list.length > 0) {
        const backing = list.pop()!;
        this.#allocator?.free(backing);
        this.#cachedBytes -= size;
        freed += size;
      }
      if (list.length === 0) this.#free.delete(size);
    }
    return freed;
  }

  /** Hands back a Buffer from take() (others are ignored); nothing may read or write it afterwards. */
  release(buffer: Buffer): void {
    const backing = this.#backing.get(buffer);
    if (!backing) return;
    this.#backing.delete(buffer);
    if (this.#cachedBytes + backing.byteLength > this.#maxCachedBytes) {
      this.#allocator?.free(backing);
      return;
    }
    const list = this.#free.get(backing.byteLength) ?? [];
    list.push(backing);
    this.#free.set(backing.byteLength, list);
    this.#cachedBytes += backing.byteLength;
  }
}
