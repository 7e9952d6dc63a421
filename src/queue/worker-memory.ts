/**
 * A queue worker's reused memory for the jobs it runs: the samples are read from Redis into it and
 * the engine writes the result arrays into it (the job's `into`), from where they go to Redis.
 * Fresh memory for each MiB-sized job was most of a worker's CPU time (profiled on a 2-vCPU host,
 * 1 MiB jobs over the simulated GPU: the page faults of copying into new memory, and the garbage
 * collections that external memory triggers, about half of it). With an engine that lends pinned
 * arrays (JobEngine's hostBuffer()), the memory is pinned, as the server's request bodies are: the
 * GPU copies read the samples and write the results there directly, with no host copy.
 */
import { pinnedAllocator } from '../engine/pinned-allocator.js';
import type { JobEngineLike, JobOutputArrays, JobSpec } from '../engine/types.js';
import { validateJob } from '../engine/validate.js';
import type { Precision } from '../runtime/fft/precision.js';
import { BufferPool } from '../runtime/memory/buffer-pool.js';
import { layoutViews, resultLayout } from './codec.js';

/** Bytes of free buffers a worker keeps for reuse by default (more are freed). */
export const DEFAULT_WORKER_POOL_BYTES = 256 * 2 ** 20;

/** Stage names are the engine's: the worker's look at a job only decides its result's layout, so any name passes here. */
const ANY_STAGE = { stages: { has: () => true } as unknown as ReadonlySet<string> };

/** A worker's pooled memory (see the file's comment). */
export class WorkerMemory {
  readonly #pool: BufferPool;
  readonly #precision: Precision;

  /** `maxCachedBytes`: free buffers kept for reuse, bytes. */
  constructor(engine: JobEngineLike, maxCachedBytes = DEFAULT_WORKER_POOL_BYTES) {
    this.#pool = new BufferPool(maxCachedBytes, pinnedAllocator(engine));
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
