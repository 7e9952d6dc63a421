/**
 * Host memory behind a TypedArray that must never outlive it (DESIGN.md: pinned host memory is a
 * TypedArray). The pages are released once their owner (a HostBuffer or ManagedBuffer) is
 * disposed or collected AND every array handed out over them has been collected: an array kept
 * after dispose(), or kept while its owner became unreachable
 * (`const a = HostBuffer.alloc('f32', n).array`), still reads and writes memory that is alive and
 * that nothing else was given.
 *
 * Why not detach the arrays at dispose() instead: ArrayBuffers over external memory (koffi.view)
 * cannot be detached in Node (structuredClone/transfer copy them), so the only safe choice is to
 * keep their pages until they are collected.
 */
import koffi from 'koffi';
import { processLost } from '../../ffi/sticky.js';

/** Arrays collected: each drops its hold on the pages it views (a failure is a process warning, never swallowed). */
const arrays = new FinalizationRegistry<HostPages>((pages) => {
  try {
    pages.drop();
  } catch (e) {
    if (!processLost())
      process.emitWarning(
        `tscuda: releasing host memory after its last array was collected failed: ${e instanceof Error ? e.message : String(e)}`,
        {
          code: 'TSCUDA_RELEASE_FAILED',
        },
      );
  }
});

/** One host allocation and the holds on it: the owner's, and one per array handed out. */
export class HostPages {
  #holds = 1;
  #release: (() => void) | undefined;
  readonly address: number;
  readonly byteLength: number;
  #buffer: WeakRef<ArrayBuffer> | undefined;

  /** `release` frees the memory; it runs once, when the last hold goes. */
  constructor(address: number, byteLength: number, release: () => void) {
    this.address = address;
    this.byteLength = byteLength;
    this.#release = release;
  }

  /** True once the memory was released (every hold dropped). */
  get released(): boolean {
    return this.#release === undefined;
  }

  /** Holds still on the memory: 1 for a live owner, plus one per live array. */
  get holds(): number {
    return this.#holds;
  }

  /**
   * An ArrayBuffer over the pages (the same one while it lives), holding them until it is
   * collected. Throws once the pages were released.
   */
  buffer(): ArrayBuffer {
    if (this.#release === undefined) throw new Error('host memory was already released');
    const existing = this.#buffer?.deref();
    if (existing) return existing;
    const buffer = koffi.view(BigInt(this.address), this.byteLength) as ArrayBuffer;
    this.#holds++;
    arrays.register(buffer, this);
    this.#buffer = new WeakRef(buffer);
    return buffer;
  }

  /** Drops one hold (the owner's at dispose or collection; an array's when collected); releases on the last, throwing what the release threw. */
  drop(): void {
    if (this.#holds <= 0) return;
    if (--this.#holds > 0) return;
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }
}
