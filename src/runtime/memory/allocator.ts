import { bestEffort, cu } from '../../ffi/checked.js';
import { CUevent_flags, type CUevent, type CUstream } from '../../ffi/generated/types.js';
import type { Context } from '../context.js';
import { resolveContext } from '../defaults.js';
import type { Device } from '../device.js';
import { addressCell, cellAddress, hot } from '../cuda.js';
import { adoptDeviceMemory, type DeviceBuffer } from './device-buffer.js';
import { dtypeInfo, type DType } from './dtype.js';
import { createRawEvent } from '../raw-event-pool.js';
import { MemoryPool } from './memory-pool.js';
import { describeValue, expectResource, isLive, Resource } from '../resource.js';
import type { Stream } from '../stream.js';
import { sizeClass } from './size-classes.js';
import { positiveInteger } from '../value-checks.js';

interface Block {
  readonly address: number;
  readonly classBytes: number;
  /** The buffer handed out over this block while it is in use (freeForStream checks it is the one given back). */
  buffer: DeviceBuffer<DType> | undefined;
}

/** What a StreamOrderedAllocator counted. */
export interface AllocatorStats {
  /** Requests served from a cached block. */
  hits: number;
  /** Requests that allocated a new block from the pool. */
  misses: number;
  /** Hits on a block freed on another stream (ordered by an event wait, not a host sync). */
  crossStreamReuses: number;
  /** Bytes in cached (free) blocks. */
  bytesCached: number;
  /** Bytes in blocks handed out and not yet freed. */
  bytesInUse: number;
}

/** How a StreamOrderedAllocator is made. */
export interface StreamOrderedAllocatorDescriptor {
  /** Default: a pool of its own on `device`, kept reserved between synchronizations. */
  pool?: MemoryPool | undefined;
  /** The device of the pool it makes when `pool` is not given (a Device or its ordinal; default device 0). */
  device?: Device | number | undefined;
  label?: string | undefined;
}

/**
 * Stream-ordered allocation with power-of-two size classes on a MemoryPool.
 *
 * A block freed on stream A goes back to A's free list of its class. A request on A takes from
 * A's list with no driver call at all (stream order protects the block). A request on B may
 * take A's block only after B waits (cuStreamWaitEvent) on an event recorded on A at that
 * moment: B's later work cannot touch the block while A's may still use it, and the host never
 * waits. Recording at the reuse rather than at every free (PyTorch's caching allocator also
 * records only for cross-stream use) keeps the common same-stream free+allocate free of driver
 * calls; B may then also wait for A's work queued after the free, never for less.
 */
export class StreamOrderedAllocator extends Resource {
  readonly pool: MemoryPool;
  readonly context: Context;
  readonly stats: AllocatorStats = { hits: 0, misses: 0, crossStreamReuses: 0, bytesCached: 0, bytesInUse: 0 };
  /** Free blocks by size class, then by the stream that freed them. */
  readonly #free = new Map<number, Map<Stream, Block[]>>();
  /** Blocks handed out, by address: a number key hashes for free, a buffer object would need an identity hash made per allocation. */
  readonly #inUse = new Map<number, Block>();
  /** Recorded on the freeing stream when another stream reuses its block; one suffices, since a wait enqueued on it keeps the record it saw. */
  #orderEvent: CUevent | undefined;
  readonly #ownsPool: boolean;

  constructor(descriptor: StreamOrderedAllocatorDescriptor = {}) {
    super('StreamOrderedAllocator', descriptor.label ?? 'stream-ordered allocator');
    this.#ownsPool = descriptor.pool === undefined;
    if (
      descriptor.pool !== undefined &&
      descriptor.device !== undefined &&
      resolveContext({ device: descriptor.device }) !== descriptor.pool.context
    )
      throw new Error(
        `${this.label}: pool "${descriptor.pool.label}" belongs to ${descriptor.pool.context.label}, not to device ${String(descriptor.device)}`,
      );
    this.pool =
      descriptor.pool ??
      new MemoryPool({ device: descriptor.device, releaseThreshold: Infinity, label: `${this.label} pool` });
    this.context = this.pool.context;
  }

  /** `bytes` bytes (as u8 elements), or `length` elements of `dtype`, for use in stream order on `stream`. */
  allocate(bytes: number, stream: Stream): DeviceBuffer<'u8'>;
  allocate<T extends DType>(dtype: T, length: number, stream: Stream): DeviceBuffer<T>;
  allocate<T extends DType>(a: number | T, b: number | Stream, c?: Stream): DeviceBuffer<T> | DeviceBuffer<'u8'> {
    this.assertAlive();
    const dtype = (typeof a === 'number' ? 'u8' : a) as T;
    const length = typeof a === 'number' ? a : (b as number);
    const given: unknown = typeof a === 'number' ? b : c;
    const stream = isLive<Stream>(given, 'Stream')
      ? given
      : expectResource<Stream>(
          given,
          'Stream',
          `${this.label}: allocate needs the stream that will use the memory; its stream`,
        );
    if (stream.context !== this.context)
      throw new Error(`${this.label}: stream "${stream.label}" belongs to another context`);
    if (!Number.isSafeInteger(length) || length <= 0) positiveInteger(length, `${this.label}: allocate length`);
    const block = this.#take(sizeClass(length * dtypeInfo(dtype).bytes), stream);
    const buffer = adoptDeviceMemory(dtype, length, block.address, this.context);
    block.buffer = buffer;
    this.#inUse.set(block.address, block);
    this.stats.bytesInUse += block.classBytes;
    return buffer;
  }

  #take(classBytes: number, stream: Stream): Block {
    const byStream = this.#free.get(classBytes);
    if (byStream) {
      const own = byStream.get(stream);
      if (own?.length) {
        this.stats.hits++;
        this.stats.bytesCached -= classBytes;
        return own.pop()!;
      }
      for (const [owner, list] of byStream) {
        if (owner === stream || list.length === 0) continue;
        // A stream disposed since has its retired event; one that has none cannot be ordered after (trim() frees its blocks).
        const after = owner.disposed ? owner.retiredEvent : this.#recordOn(owner);
        if (after === undefined) continue;
        // The only ordering the reuse needs: B's later work after A's work up to (at least) the free.
        hot().streamWaitEvent(stream.use(), after, 0, reuseDuring, this, owner, stream);
        this.stats.hits++;
        this.stats.crossStreamReuses++;
        this.stats.bytesCached -= classBytes;
        return list.pop()!;
      }
    }
    this.stats.misses++;
    hot().memAllocFromPoolAsync(
      addressCell,
      classBytes,
      this.pool.handle,
      stream.use(),
      allocDuring,
      this,
      classBytes,
      stream,
    );
    return { address: cellAddress(), classBytes, buffer: undefined };
  }

  /** The order event recorded now at the end of `stream`. */
  #recordOn(stream: Stream): CUevent {
    const event = (this.#orderEvent ??= createRawEvent(
      this.context,
      CUevent_flags.CU_EVENT_DISABLE_TIMING,
      `${this.label} order event`,
    ));
    hot().eventRecord(event, stream.use(), orderDuring, this, stream);
    return event;
  }

  /**
   * Returns `buffer` to its size class. `stream` must be the last stream whose work uses it (or
   * one ordered after all of them): the next user on another stream waits for this point.
   */
  freeForStream(buffer: DeviceBuffer<DType>, stream: Stream): void {
    this.assertAlive();
    const block = typeof buffer === 'object' && buffer !== null ? this.#inUse.get(buffer.address) : undefined;
    if (block?.buffer !== buffer)
      throw new Error(`${this.label}: ${describeValue(buffer)} was not allocated here, or was freed already`);
    if (!isLive<Stream>(stream, 'Stream'))
      expectResource<Stream>(stream, 'Stream', `${this.label}: freeForStream stream`);
    if (stream.context !== this.context)
      throw new Error(`${this.label}: stream "${stream.label}" belongs to another context`);
    this.#inUse.delete(block.address);
    block.buffer = undefined;
    buffer.dispose();
    let byStream = this.#free.get(block.classBytes);
    if (!byStream) this.#free.set(block.classBytes, (byStream = new Map()));
    let list = byStream.get(stream);
    if (!list) byStream.set(stream, (list = []));
    list.push(block);
    this.stats.bytesInUse -= block.classBytes;
    this.stats.bytesCached += block.classBytes;
  }

  /**
   * Gives cached blocks back to the pool, each freed (cuMemFreeAsync) on the stream it was last
   * freed on, so in order after its last use with no host wait; then trims the pool to `keepBytes`
   * (the pool keeps what its pending frees still hold until they complete).
   */
  trim(keepBytes = 0): void {
    this.assertAlive();
    this.#trim(keepBytes);
  }

  #trim(keepBytes: number): void {
    let orphans = false;
    for (const byStream of this.#free.values()) {
      for (const [stream, list] of byStream) {
        // A disposed stream's work may still be draining: those blocks wait for the context.
        if (stream.disposed) {
          orphans = true;
          continue;
        }
        this.#release(list, stream.use());
      }
    }
    if (orphans) {
      this.context.synchronize();
      for (const byStream of this.#free.values())
        for (const [stream, list] of byStream) if (stream.disposed) this.#release(list, null);
    }
    this.#free.clear();
    this.pool.trim(keepBytes);
  }

  #release(list: readonly Block[], stream: CUstream | null): void {
    for (const block of list) {
      cu().cuMemFreeAsync(block.address, stream, `${this.label}: trim`);
      this.stats.bytesCached -= block.classBytes;
    }
  }

  /**
   * Frees everything. Buffers still in use are disposed too, after the context's work has
   * finished: the one host synchronization here.
   */
  protected releaseNative(): void {
    this.#trim(0);
    if (this.#inUse.size) {
      // Their last streams are unknown: only a context-wide wait orders the frees after their use.
      this.context.synchronize();
      for (const block of this.#inUse.values()) {
        block.buffer?.dispose();
        cu().cuMemFreeAsync(block.address, null, `${this.label}: dispose`);
      }
      this.#inUse.clear();
      this.context.synchronize();
    }
    // Its failure must not keep the pool below from being released.
    const orderEvent = this.#orderEvent;
    if (orderEvent !== undefined) bestEffort(() => cu().cuEventDestroy(orderEvent), undefined);
    this.#orderEvent = undefined;
    if (this.#ownsPool) this.pool.dispose();
  }
}

// What a failed call was doing, built only when it fails (src/ffi/checked-call.ts).
const reuseDuring = (allocator: StreamOrderedAllocator, owner: Stream, stream: Stream): string =>
  `${allocator.label}: reusing a block from "${owner.label}" on "${stream.label}"`;
const allocDuring = (allocator: StreamOrderedAllocator, bytes: number, stream: Stream): string =>
  `${allocator.label}: ${bytes} bytes on "${stream.label}"`;
const orderDuring = (allocator: StreamOrderedAllocator, stream: Stream): string =>
  `${allocator.label}: ordering a reuse after "${stream.label}"`;
