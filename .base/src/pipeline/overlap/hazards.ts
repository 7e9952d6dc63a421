/**
 * Which earlier operations a new one must wait for, from the buffers it reads and writes:
 * read-after-write, write-after-write and write-after-read. Free of CUDA, so it is testable
 * anywhere. Operations of one lane (a stream) run in order, so per buffer only the latest
 * reader of each lane needs remembering: the bookkeeping stays bounded by buffers x lanes.
 */
export class HazardTracker<Id, Lane> {
  readonly #writer = new Map<number, { op: Id; lane: Lane }>();
  readonly #readers = new Map<number, Map<Lane, Id>>();

  /** What an operation on `lane` reading `inputs` and writing `outputs` must wait for (same-lane work excluded). */
  dependencies(lane: Lane, inputs: readonly number[], outputs: readonly number[]): Id[] {
    const deps = new Set<Id>();
    const after = (op: Id, on: Lane): void => {
      if (on !== lane) deps.add(op);
    };
    for (const b of inputs) {
      const w = this.#writer.get(b);
      if (w) after(w.op, w.lane);
    }
    for (const b of outputs) {
      const w = this.#writer.get(b);
      if (w) after(w.op, w.lane);
      const readers = this.#readers.get(b);
      if (readers) for (const [on, op] of readers) after(op, on);
    }
    return [...deps];
  }

  /** Records that `op` on `lane` reads `inputs` and writes `outputs`. */
  record(op: Id, lane: Lane, inputs: readonly number[], outputs: readonly number[]): void {
    for (const b of inputs) {
      if (outputs.includes(b)) continue;
      let readers = this.#readers.get(b);
      if (!readers) this.#readers.set(b, (readers = new Map()));
      readers.set(lane, op);
    }
    for (const b of outputs) {
      this.#writer.set(b, { op, lane });
      this.#readers.delete(b);
    }
  }

  clear(): void {
    this.#writer.clear();
    this.#readers.clear();
  }
}
