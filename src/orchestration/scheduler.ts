/**
 * The Coordinator's execution of operations: wiring each to its dependencies, starting what may
 * start (GPU work with one cuStreamWaitEvent per dependency on another stream still in flight,
 * host steps once their dependencies completed), completing and failing operations and,
 * transitively, what depends on them. The Coordinator keeps the records, names and retention.
 * Like the Coordinator, it serves user-defined graphs only: no product path (the job engine, the
 * queue, the server) runs through it.
 */
import { hot } from '../runtime/cuda.js';
import type { Stream } from '../runtime/stream.js';
import { abortError, callSafely, guardHostStep, isThenable, toError } from './host-calls.js';
import type { Operation } from './operation.js';
import type { SettleListener } from './pool-member.js';
import type { StreamPool } from './stream-pool.js';

/** Starts, completes and fails a Coordinator's operations. */
export class OperationScheduler {
  readonly #label: string;
  readonly #pool: StreamPool;
  /** Called once for each operation that settles (completed or failed). */
  readonly #record: (op: Operation) => void;
  /** GPU operations whose event is pending, in enqueue order (observe() asks the GPU about them). */
  readonly #inFlight = new Set<Operation>();
  readonly #ready: Operation[] = [];
  #draining = false;

  constructor(label: string, pool: StreamPool, record: (op: Operation) => void) {
    this.#label = label;
    this.#pool = pool;
    this.#record = record;
  }

  /** Wires `ops` (pending, in a valid order) to their dependencies and starts those that may start. */
  launch(ops: readonly Operation[]): void {
    for (const op of ops) op.state = 'waiting';
    const doomed: [Operation, Operation][] = [];
    for (const op of ops) {
      op.blockers = 0;
      op.unfinished = 0;
      for (const d of op.after) {
        if (d.state === 'failed') {
          doomed.push([op, d]);
          continue;
        }
        if (d.isSettled) continue;
        d.dependents.push(op);
        op.unfinished++;
        if (d.satisfies(op)) continue;
        op.blockers++;
        if (d.isHost || op.isHost) d.waitingForCompletion.push(op);
        else d.waitingForLaunch.push(op);
      }
    }
    for (const [op, d] of doomed) this.fail(op, d.dependencyFailure(op));
    for (const op of ops) if (op.blockers === 0 && op.state === 'waiting') this.#ready.push(op);
    this.#drain();
  }

  /** Starts ready operations; completions arriving meanwhile queue theirs instead of recursing. */
  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    try {
      for (let i = 0; i < this.#ready.length; i++) this.#start(this.#ready[i]!);
    } finally {
      this.#ready.length = 0;
      this.#draining = false;
    }
  }

  #release(list: Operation[]): void {
    for (const op of list) if (--op.blockers === 0 && op.state === 'waiting') this.#ready.push(op);
    list.length = 0;
  }

  #start(op: Operation): void {
    if (op.state !== 'waiting') return;
    if (op.isHost) this.#startHost(op);
    else this.#startGpu(op);
  }

  #startHost(op: Operation): void {
    op.state = 'running';
    const { signal, timeoutMs } = op.spec;
    if (signal?.aborted) {
      this.fail(op, abortError(this.#label, op, signal));
      return;
    }
    let result: unknown;
    let thenable: boolean;
    try {
      result = op.spec.run(op.stream);
      // Inside the try: a `then` getter that throws is the step failing too.
      thenable = isThenable(result);
    } catch (e) {
      this.fail(op, toError(e));
      return;
    }
    if (!thenable) {
      this.#workDone(op);
      return;
    }
    if (timeoutMs !== undefined || signal !== undefined)
      guardHostStep(this.#label, op, timeoutMs, signal, (error) => this.fail(op, error));
    try {
      (result as PromiseLike<unknown>).then(
        () => this.#workDone(op),
        (e: unknown) => this.fail(op, toError(e)),
      );
    } catch (e) {
      // A thenable whose then() throws will never call back: the step stayed 'running' and its
      // dependents 'waiting' forever, and the throw escaped the drain, stranding the ops after it.
      this.fail(op, toError(e));
    }
  }

  /** The edge path: one cuStreamWaitEvent per dependency on another stream still in flight. */
  #startGpu(op: Operation): void {
    try {
      const sh = op.stream.use();
      const deps = op.after;
      for (let i = 0; i < deps.length; i++) {
        const d = deps[i]!;
        const event = d.event;
        if (event === undefined || d.stream === op.stream) continue;
        hot().streamWaitEvent(sh, event, 0, edgeDuring, op, d);
      }
      op.state = 'enqueued';
      const listener: SettleListener = (error) => {
        if (error) this.fail(op, error);
        else this.#workDone(op);
      };
      const spec = op.spec;
      const event = op.barrier
        ? op.stream.trackCompletion(listener)
        : this.#pool.submit(
            op.stream,
            spec.kind,
            spec.run,
            {
              name: op.name,
              ...(spec.bytes === undefined ? {} : { bytes: spec.bytes }),
              ...(spec.profile === false ? { profile: false } : {}),
            },
            listener,
          );
      // Finished already (settled inline): nothing is left to wait on.
      if (op.state === 'enqueued' && !op.workDone && event !== undefined) {
        op.event = event;
        this.#inFlight.add(op);
      }
      this.#release(op.waitingForLaunch);
    } catch (e) {
      this.fail(op, toError(e));
    }
  }

  /** The operation's own work has finished; it completes once its dependencies have. */
  #workDone(op: Operation): void {
    if (op.isSettled || op.workDone) return;
    op.workDone = true;
    op.event = undefined;
    this.#inFlight.delete(op);
    if (op.unfinished === 0) this.#complete(op);
  }

  #complete(first: Operation): void {
    const work = [first];
    for (let op = work.pop(); op !== undefined; op = work.pop()) {
      if (op.isSettled) continue;
      op.state = 'completed';
      op.event = undefined;
      this.#inFlight.delete(op);
      op.cancelGuard?.();
      op.resolve();
      this.#record(op);
      if (op.spec.onComplete) callSafely(op.spec.onComplete, undefined, this.#label, 'onComplete', op.name);
      this.#release(op.waitingForLaunch);
      this.#release(op.waitingForCompletion);
      for (const d of op.dependents) if (!d.isSettled && --d.unfinished === 0 && d.workDone) work.push(d);
      op.dependents.length = 0;
    }
    this.#drain();
  }

  /** Fails `op` and, transitively, everything that depends on it and has not settled. */
  fail(op: Operation, error: Error): void {
    const work: [Operation, Error][] = [[op, error]];
    for (let item = work.pop(); item !== undefined; item = work.pop()) {
      const [o, e] = item;
      if (o.isSettled) continue;
      o.state = 'failed';
      o.error = e;
      o.event = undefined;
      this.#inFlight.delete(o);
      o.cancelGuard?.();
      o.reject(e);
      this.#record(o);
      if (o.spec.onComplete) callSafely(o.spec.onComplete, e, this.#label, 'onComplete', o.name);
      for (const d of o.dependents) if (!d.isSettled) work.push([d, o.dependencyFailure(d)]);
      o.dependents.length = 0;
      o.waitingForLaunch.length = 0;
      o.waitingForCompletion.length = 0;
    }
  }

  /**
   * Asks the GPU now (never blocking) about the oldest in-flight operation of each stream and
   * settles what has finished, without waiting for the poller's next turn.
   */
  observe(): void {
    if (this.#inFlight.size === 0) return;
    const notReady = new Set<Stream>();
    const query = hot().eventQuery;
    for (const op of [...this.#inFlight]) {
      if (notReady.has(op.stream)) continue;
      const event = op.event;
      if (event === undefined) {
        this.#inFlight.delete(op);
        continue;
      }
      let done: boolean;
      try {
        done = query(event, operationDuring, op);
      } catch (e) {
        this.fail(op, toError(e));
        continue;
      }
      if (done) this.#workDone(op);
      else notReady.add(op.stream);
    }
  }

  /** Forgets what is queued to start and in flight (the Coordinator was disposed; it failed every open operation first). */
  abandon(): void {
    this.#ready.length = 0;
    this.#inFlight.clear();
  }
}

// What a failed call was doing, built only when it fails (src/ffi/checked-call.ts).
const operationDuring = (op: Operation): string => `"${op.name}" on stream "${op.stream.label}"`;
const edgeDuring = (op: Operation, after: Operation): string =>
  `"${op.name}" on stream "${op.stream.label}" after "${after.name}"`;
