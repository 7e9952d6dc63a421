/**
 * Host memory for pools that feed jobs (the server's request bodies, a queue worker's samples and
 * results): Buffers over the engine's pinned arrays (`hostBuffer()`), so a job reads its samples
 * and writes its results with no host copy. One place for both pools, since which arrays the
 * engine lends, in which precision, and what to do when it lends none are the engine's to say.
 */
import type { BufferAllocator } from '../runtime/memory/buffer-pool.js';
import type { JobEngineLike } from './types.js';

/**
 * Memory from the engine's pinned arrays, in its precision; plain memory when the engine can
 * lend no more (closed, or out of pinned memory): the Buffers stay valid memory either way.
 * Undefined when the engine lends none at all (a CUDA-free engine).
 */
export function pinnedAllocator(engine: JobEngineLike): BufferAllocator | undefined {
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
