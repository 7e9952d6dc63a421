/**
 * What a Coordinator remembers of settled operations beyond its retained records: settlements not
 * yet reported by poll() (bounded, oldest dropped) and the failures of forgotten operations
 * (bounded; past the bound, ids at or below the oldest dropped one have an unknown outcome).
 */
import { RingQueue } from './ring-queue.js';
import { Operation, type SettledOperation } from './operation.js';
import type { Stream } from '../runtime/stream.js';

/** poll() reports at most this many settlements since the previous poll(); older ones are dropped. */
export const MAX_UNREPORTED = 1 << 16;
/** Failures of forgotten operations remembered (their ids and errors); beyond, the oldest are dropped. */
export const MAX_FORGOTTEN_FAILURES = 1 << 16;

/** Settlements for poll() and the outcomes of forgotten operations. */
export class SettledLog {
  readonly #unreported = new RingQueue<SettledOperation>();
  readonly #forgottenFailures = new Map<number, Error>();
  /** Ids at or below this may have failed with their failure no longer remembered. */
  #unknownBelow = 0;

  /** `op` settled: poll() will report it. */
  report(op: Operation): void {
    if (this.#unreported.length >= MAX_UNREPORTED) this.#unreported.shift();
    const kind = op.spec.kind;
    this.#unreported.push(
      op.error
        ? { id: op.id, name: op.name, kind, status: 'failed', error: op.error }
        : { id: op.id, name: op.name, kind, status: 'completed' },
    );
  }

  /** Everything reported since the last call, oldest first. */
  drain(): SettledOperation[] {
    const out: SettledOperation[] = [];
    for (let s = this.#unreported.shift(); s !== undefined; s = this.#unreported.shift()) out.push(s);
    return out;
  }

  /** A settled `op` leaves the retained records: a failure is remembered (bounded). */
  forget(op: Operation): void {
    if (op.state !== 'failed') return;
    this.#forgottenFailures.set(op.id, op.error!);
    if (this.#forgottenFailures.size > MAX_FORGOTTEN_FAILURES) {
      const oldest = this.#forgottenFailures.keys().next().value!;
      this.#forgottenFailures.delete(oldest);
      if (oldest > this.#unknownBelow) this.#unknownBelow = oldest;
    }
  }

  /** A stand-in carrying the outcome of forgotten operation `id` (settled, so dependencies on it resolve or fail); undefined when that outcome is no longer known. */
  stub(id: number): Operation | undefined {
    const error = this.#forgottenFailures.get(id);
    if (error === undefined && id <= this.#unknownBelow) return undefined;
    const stub = new Operation(
      id,
      { name: `#${id}`, kind: 'other', run: () => undefined },
      undefined as unknown as Stream,
    );
    if (error === undefined) {
      stub.state = 'completed';
      stub.resolve();
    } else {
      stub.state = 'failed';
      stub.error = error;
      stub.reject(error);
    }
    return stub;
  }
}
