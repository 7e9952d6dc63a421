/**
 * The bytes of request bodies a server holds at once, across requests: counted as each chunk
 * arrives, handed back when the request's response is done or its connection gone. Each body is
 * bounded by its own limit and the number of requests by `maxPending`, but their product (4096 x
 * 256 MiB by default) bounds nothing a machine has: this is the bound on the sum. A chunk that
 * would pass it refuses its body (429, retryable). CUDA-free.
 */

/** Bytes of request bodies held, by the request that holds them. */
export class BodyBudget {
  readonly #limitBytes: number;
  readonly #byOwner = new WeakMap<object, number>();
  #heldBytes = 0;

  constructor(limitBytes: number) {
    if (!Number.isSafeInteger(limitBytes) || limitBytes <= 0)
      throw new RangeError(`limitBytes must be a positive integer, got ${String(limitBytes)}`);
    this.#limitBytes = limitBytes;
  }

  /** Bytes held now, all requests together. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** The bound. */
  get limitBytes(): number {
    return this.#limitBytes;
  }

  /** Counts `bytes` more of `owner`'s body; false, with nothing counted, when that would pass the bound. */
  take(owner: object, bytes: number): boolean {
    if (this.#heldBytes + bytes > this.#limitBytes) return false;
    this.#heldBytes += bytes;
    this.#byOwner.set(owner, (this.#byOwner.get(owner) ?? 0) + bytes);
    return true;
  }

  /** Hands back all `owner` holds (its response is done, or its connection gone); a second call does nothing. */
  release(owner: object): void {
    const bytes = this.#byOwner.get(owner);
    if (bytes === undefined) return;
    this.#byOwner.delete(owner);
    this.#heldBytes -= bytes;
  }
}
