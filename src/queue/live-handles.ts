/**
 * LiveHandles: a client's unsettled QueueJobHandles by job id, so that `queue.job(id)` hands back
 * the handle this client already has for `id` (from submit() or an earlier job()) instead of a
 * second one. Two handles on one id would both watch the job, and the watcher keeps one handle per
 * id: the other's `result` would never settle. The handles are held weakly: a process that only
 * submits (an HTTP front) and drops its handles keeps nothing per job.
 */
import type { QueueJobHandle } from './handle.js';

/** The live handles of one client (see the file's comment). */
export class LiveHandles {
  readonly #byId = new Map<string, WeakRef<QueueJobHandle>>();
  /** Drops the entry of a handle collected before it settled (its holder let it go unread). */
  readonly #collected = new FinalizationRegistry<{ id: string; ref: WeakRef<QueueJobHandle> }>(({ id, ref }) =>
    this.#drop(id, ref),
  );

  /** The unsettled handle on `id`, if this client holds one. */
  get(id: string): QueueJobHandle | undefined {
    return this.#byId.get(id)?.deref();
  }

  /** Records `handle` (unsettled) until it settles or is collected. */
  add(handle: QueueJobHandle): void {
    const id = handle.id;
    const ref = new WeakRef(handle);
    this.#byId.set(id, ref);
    this.#collected.register(handle, { id, ref }, ref);
    handle.whenSettled(() => {
      this.#collected.unregister(ref);
      this.#drop(id, ref);
    });
  }

  #drop(id: string, ref: WeakRef<QueueJobHandle>): void {
    if (this.#byId.get(id) === ref) this.#byId.delete(id);
  }
}
