/**
 * A queue worker's reused memory for the jobs it runs: the samples are read from Redis into it and
 * the engine writes the result arrays into it (the job's `into`), from where they go to Redis.
 * Fresh memory for each MiB-sized job was most of a worker's CPU time (profiled on a 2-vCPU host,
 * 1 MiB jobs over the simulated GPU: the page faults of copying into new memory, and the garbage
 * collections that external memory triggers, about half of it). With an engine that lends pinned
 * arrays (JobEngine's hostBuffer()), the memory is pinned, as the server's request bodies are: the
 * GPU copies read the samples and write the results there directly, with no host copy.
 */
import type { JobEngineLike, JobOutputArrays, JobSpec } from '../engine/types.js';
import { validateJob } from '../engine/validate.js';
import { sizeClass } from '../runtime/memory/size-classes.js';
import { layoutViews, resultLayout } from './codec.js';

/** Bytes of free buffers a worker keeps for reuse by default (more are freed). */
export const DEFAULT_WORKER_POOL_BYTES = 256 * 2 ** 20;

/** Where the pool's memory comes from, when not from Buffer.allocUnsafeSlow (the engine's pinned arrays). */
interface Allocator {
  /** A Buffer of exactly `bytes` (a power of two), 8-byte aligned. */
  allocate(bytes: number): Buffer;
  /** Frees a Buffer from allocate() that the pool no longer keeps. */
  free(buffer: Buffer): void;
}

/** Smallest pooled allocation, bytes. */
const MIN_CLASS_BYTES = 1 << 16;

/**
 * Buffers kept for reuse by power-of-two size class, up to a byte budget (the server's BodyPool
 * does the same for request bodies; the queue may not import the server's layer).
 */
class Pool {
  readonly #free = new Map<number, Buffer[]>();
  /** The whole pooled allocation behind each buffer handed out. */
  readonly #backing = new WeakMap<Buffer, Buffer>();
  readonly #maxCachedBytes: number;
  readonly #allocator: Allocator | undefined;
  #cachedBytes = 0;

  constructor(maxCachedBytes: number, allocator: Allocator | undefined) {
    this.#maxCachedBytes = maxCachedBytes;
    this.#allocator = allocator;
  }

  take(bytes: number): Buffer {
    const size = Math.max(MIN_CLASS_BYTES, sizeClass(Math.max(1, bytes)));
    let backing = this.#free.get(size)?.pop();
    if (backing) this.#cachedBytes -= size;
    // allocUnsafeSlow: an ArrayBuffer of its own (offset 0, so any typed view is aligned).
    else backing = this.#allocator ? this.#allocator.allocate(size) : Buffer.allocUnsafeSlow(size);
    const buffer = backing.subarray(0, bytes);
    this.#backing.set(buffer, backing);
    return buffer;
  }

  release(buffer: Buffer): void {
    const backing = this.#backing.get(buffer);
    if (!backing) return;
    this.#backing.delete(buffer);
    if (this.#cachedBytes + backing.byteLength > this.#maxCachedBytes) return this.#allocator?.free(backing);
    const list = this.#free.get(backing.byteLength) ?? [];
    list.push(backing);
    this.#free.set(backing.byteLength, list);
    this.#cachedBytes += backing.byteLength;
  }
}

/** Stage names are the engine's: the worker's look at a job only decides its result's layout, so any name passes here. */
const ANY_STAGE = { stages: { has: () => true } as unknown as ReadonlySet<string> };

/** Memory from the engine's pinned arrays when it lends them (plain memory when it cannot, e.g. closed). */
function pinnedAllocator(engine: JobEngineLike): Allocator | undefined {
  const lend = engine.hostBuffer?.bind(engine);
  const giveBack = engine.releaseHostBuffer?.bind(engine);
  if (!lend || !giveBack) return undefined;
  const size = engine.precision === 'f32' ? 4 : 8;
  const lent = new WeakMap<Buffer, Float32Array | Float64Array>();
  return {
    allocate(bytes: number): Buffer {
      let array: Float32Array | Float64Array;
      try {
        array = engine.precision === 'f32' ? lend('f32', bytes / size) : lend('f64', bytes / size);
      } catch {
        return Buffer.allocUnsafeSlow(bytes);
      }
      const buffer = Buffer.from(array.buffer, array.byteOffset, array.byteLength);
      lent.set(buffer, array);
      return buffer;
    },
    free(buffer: Buffer): void {
      const array = lent.get(buffer);
      if (array) giveBack(array);
    },
  };
}

/** A worker's pooled memory (see the file's comment). */
export class WorkerMemory {
  readonly #pool: Pool;
  readonly #precision: 'f32' | 'f64';

  /** `maxCachedBytes`: free buffers kept for reuse, bytes. */
  constructor(engine: JobEngineLike, maxCachedBytes = DEFAULT_WORKER_POOL_BYTES) {
    this.#pool = new Pool(maxCachedBytes, pinnedAllocator(engine));
    this.#precision = engine.precision;
  }

  /** Memory of exactly `bytes` (8-byte aligned): where a job's samples are read. */
  readonly take = (bytes: number): Buffer => this.#pool.take(bytes);

  /**
   * The result arrays of `spec` in pooled memory, laid out as the result is packed, or undefined
   * when the job does not validate here (the engine then says why) or returns no array.
   */
  outputs(spec: JobSpec): { into: JobOutputArrays; buffer: Buffer } | undefined {
    let layout: ReturnType<typeof resultLayout>;
    try {
      layout = resultLayout(validateJob(spec, ANY_STAGE), this.#precision);
    } catch {
      return undefined;
    }
    if (layout.bytes === 0) return undefined;
    const buffer = this.#pool.take(layout.bytes);
    return { into: layoutViews(buffer, layout.slots), buffer };
  }

  /** Hands back memory from take() or outputs() once nothing reads or writes it (other buffers are ignored). */
  release(buffer: Buffer | null | undefined): void {
    if (buffer) this.#pool.release(buffer);
  }
}
