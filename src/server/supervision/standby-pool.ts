/**
 * Standby workers: processes with their engine built, not listening. A slot whose worker lost its
 * context takes a ready one of its device at once (recovery without a process start); the
 * supervisor starts another behind it. The pool counts standbys that exit before they are ready,
 * so that a standby that can never start is not restarted forever.
 */
import type { Worker } from 'node:cluster';

/** The standby workers of a supervisor, each with its device and whether its engine is built. */
export class StandbyPool {
  readonly #spares = new Map<Worker, { device: number; ready: boolean }>();
  /** Standbys in a row that exited before they were ready. */
  #startFailures = 0;

  /** Every standby, ready or starting. */
  get workers(): Worker[] {
    return [...this.#spares.keys()];
  }

  /** Standbys held now. */
  get size(): number {
    return this.#spares.size;
  }

  has(worker: Worker): boolean {
    return this.#spares.has(worker);
  }

  /** A standby just started on `device`, not ready yet. */
  add(worker: Worker, device: number): void {
    this.#spares.set(worker, { device, ready: false });
  }

  /** Takes a ready standby of `device` out of the pool, if there is one. */
  takeReady(device: number): Worker | undefined {
    const spare = [...this.#spares].find(([, s]) => s.ready && s.device === device)?.[0];
    if (spare !== undefined) this.#spares.delete(spare);
    return spare;
  }

  /** `worker` built its engine: its device when it is a standby of this pool (the start failures start over). */
  markReady(worker: Worker): number | undefined {
    const spare = this.#spares.get(worker);
    if (spare === undefined) return undefined;
    this.#startFailures = 0;
    spare.ready = true;
    return spare.device;
  }

  /** Removes a standby that exited; true when it was one of this pool. */
  remove(worker: Worker): boolean {
    return this.#spares.delete(worker);
  }

  /** Counts one more standby that exited before it was ready; returns the failures in a row. */
  failedToStart(): number {
    return ++this.#startFailures;
  }
}
