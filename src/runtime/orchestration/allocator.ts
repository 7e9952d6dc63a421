import { CUevent_flags, type CUevent } from '../../ffi/generated/types.js';
import { check, cu } from '../cuda.js';
import type { Context } from '../context.js';
import { DeviceBuffer } from '../device-buffer.js';
import { dtypeInfo, type DType } from '../dtype.js';
import { createRawEvent } from '../event.js';
import { MemoryPool } from '../memory-pool.js';
import type { Stream } from '../stream.js';
import { sizeClass } from './size-classes.js';

interface Block {
  memory: DeviceBuffer<'u8'>;
  classBytes: number;
  /** The stream that last freed it, and an event recorded there at the free. */
  freedOn: Stream | undefined;
  freedAt: CUevent | undefined;
}

export interface AllocatorStats {
  hits: number;
  misses: number;
  /** Reuses of a block freed on another stream (ordered by an event wait, not a host sync). */
  crossStreamReuses: number;
  bytesCached: number;
  bytesInUse: number;
}

/**
 * Stream-ordered allocation with size classes on a MemoryPool. A block freed on stream A is
 * reused at once on A (stream order protects it); reused on stream B only after B waits for
 * an event recorded on A at the free, so B's work cannot touch it while A's may still use it.
 */
export class StreamOrderedAllocator {
  readonly pool: MemoryPool;
  readonly context: Context;
  readonly label: string;
  readonly #free = new Map<number, Block[]>();
  readonly #inUse = new Map<DeviceBuffer<DType>, Block>();
  readonly #events: CUevent[] = [];
  readonly stats: AllocatorStats = { hits: 0, misses: 0, crossStreamReuses: 0, bytesCached: 0, bytesInUse: 0 };
  readonly #ownsPool: boolean;

  constructor(descriptor: { pool?: MemoryPool; label?: string } = {}) {
    this.#ownsPool = !descriptor.pool;
    this.pool = descriptor.pool ?? new MemoryPool({ releaseThreshold: Infinity, label: 'allocator pool' });
    this.context = this.pool.context;
    this.label = descriptor.label ?? 'stream-ordered allocator';
  }

  /** `length` elements of `dtype`, usable in stream order on `stream`. */
  allocate<T extends DType>(dtype: T, length: number, stream: Stream): DeviceBuffer<T> {
    if (stream.context !== this.context) throw new Error(`stream "${stream.label}" belongs to another context than ${this.label}`);
    const bytes = length * dtypeInfo(dtype).bytes;
    const classBytes = sizeClass(bytes);
    const list = this.#free.get(classBytes);
    let block: Block | undefined;
    if (list?.length) {
      // Prefer a block freed on this stream: no wait needed.
      let i = list.findIndex((b) => b.freedOn === stream);
      if (i < 0) i = list.length - 1;
      block = list.splice(i, 1)[0]!;
      this.stats.hits++;
      this.stats.bytesCached -= classBytes;
      if (block.freedOn !== stream && block.freedAt) {
        check(cu().cuStreamWaitEvent(stream.use(), block.freedAt, 0), 'cuStreamWaitEvent', `${this.label}: reuse on "${stream.label}"`);
        this.stats.crossStreamReuses++;
      }
    } else {
      this.stats.misses++;
      block = { memory: DeviceBuffer.alloc('u8', classBytes, { pool: this.pool, stream }), classBytes, freedOn: undefined, freedAt: undefined };
    }
    const buffer = DeviceBuffer.wrap(dtype, length, block.memory.address, { context: this.context, label: `${this.label}[${classBytes}]` });
    this.#inUse.set(buffer, block);
    this.stats.bytesInUse += classBytes;
    return buffer;
  }

  /** Returns `buffer` to its size class; `stream` is the last stream whose work uses it. */
  freeForStream(buffer: DeviceBuffer<DType>, stream: Stream): void {
    const block = this.#inUse.get(buffer);
    if (!block) throw new Error(`buffer "${buffer.label}" was not allocated by ${this.label} (or was freed already)`);
    this.#inUse.delete(buffer);
    buffer.dispose();
    block.freedOn = stream;
    block.freedAt ??= this.#events.pop() ?? createRawEvent(this.context, CUevent_flags.CU_EVENT_DISABLE_TIMING, `${this.label} free event`);
    check(cu().cuEventRecord(block.freedAt, stream.use()), 'cuEventRecord', `${this.label}: free on "${stream.label}"`);
    (this.#free.get(block.classBytes) ?? this.#free.set(block.classBytes, []).get(block.classBytes)!).push(block);
    this.stats.bytesInUse -= block.classBytes;
    this.stats.bytesCached += block.classBytes;
  }

  /** Gives every cached block back to the pool (freed in the order of the stream that last used it). */
  trim(): void {
    // Blocks were allocated on one stream and may last have been used on another: let all work finish first.
    this.context.synchronize();
    for (const list of this.#free.values()) {
      for (const b of list) {
        b.memory.dispose();
        if (b.freedAt) this.#events.push(b.freedAt);
      }
      list.length = 0;
    }
    this.stats.bytesCached = 0;
    this.pool.trim(0);
  }

  dispose(): void {
    this.trim();
    for (const e of this.#events) cu().cuEventDestroy(e);
    this.#events.length = 0;
    if (this.#ownsPool) this.pool.dispose();
  }
}
