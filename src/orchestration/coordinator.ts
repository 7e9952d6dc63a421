import type { CaptureMode, Graph } from '../runtime/graph.js';
import type { OperationKind } from '../report/timeline.js';
import { describeValue, Resource } from '../runtime/resource.js';
import { shownValue } from '../runtime/value-checks.js';
import type { Stream } from '../runtime/stream.js';
import { captureOperations } from './capture-operations.js';
import { checkDescriptorShape, resolveDescriptor, type CoordinatorDescriptor } from './coordinator-descriptor.js';
import { addEdge, addEdgeToNew, topologicalOrder } from './dag.js';
import { DependencyFailedError, OperationError, OperationForgottenError } from './errors.js';
import { callSafely } from './host-calls.js';
import { Operation, type OperationSpec, type OperationState, type SettledOperation } from './operation.js';
import { checkOperationSpec, operationStream } from './operation-stream.js';
import { onEveryStream } from './parallel.js';
import { RingQueue } from './ring-queue.js';
import { OperationScheduler } from './scheduler.js';
import { SettledLog } from './settled-log.js';
import type { StreamPool } from './stream-pool.js';

export { MAX_FORGOTTEN_FAILURES, MAX_UNREPORTED } from './settled-log.js';

/**
 * Operations on a StreamPool's streams with dependencies across streams: the one
 * dependency-graph engine of tscuda, for user-defined graphs of one-off operations (the
 * AsyncCoordinator and the StageManager are fronts of it). The job engine does not use it, and
 * it is not how tscuda overlaps repeated work: work that goes through upload, compute and
 * download again and again runs on a Lane (pipeline/lanes), whose slots' events order the stages
 * without a graph, an event per operation or a record per operation.
 *
 * A dependency between GPU operations on different streams is lowered to the event the pool
 * records behind the first (one per operation, reused from the context's pool) and one
 * cuStreamWaitEvent before the second: the host never waits between them. On the same stream,
 * stream order suffices. A host step waits (through the completion poller, never blocking) for
 * its dependencies to complete; what depends on it is enqueued once it has run. An operation
 * completes once its own work has finished and every dependency has completed.
 *
 * A failed operation (its enqueue threw, its host step failed or timed out, or its GPU work
 * reported a CUDA error) fails every operation that depends on it with a DependencyFailedError
 * whose `cause` is that failure; independent operations run on. Settled operations are kept
 * up to a bound (`retainSettled`); a dependency on a forgotten failure still fails.
 */
export class Coordinator extends Resource {
  readonly pool: StreamPool;
  readonly #retain: number;
  readonly #uniqueNames: boolean;
  readonly #guestStreams: boolean;
  readonly #ops = new Map<number, Operation>();
  readonly #byName = new Map<string, Operation>();
  readonly #deps = new Map<number, Set<number>>();
  readonly #streamCallbacks = new Map<Stream, ((error?: Error) => void)[]>();
  #nextId = 1;
  #barrier: Operation | undefined;
  /** Settlements for poll(), failures of forgotten operations. */
  readonly #log = new SettledLog();
  /** Settled operations still in #ops, oldest first: what retention forgets. */
  readonly #retained = new RingQueue<Operation>();
  readonly #scheduler: OperationScheduler;
  readonly #nameOf = (id: number): string => this.#ops.get(id)?.name ?? `#${id}`;

  constructor(pool: StreamPool, descriptor: CoordinatorDescriptor = {}) {
    checkDescriptorShape(descriptor);
    super('Coordinator', descriptor.label ?? 'coordinator');
    // Checked here: a missing pool would fail only at the first add(), reading 'acquire' of null.
    if (typeof (pool as Partial<StreamPool> | null)?.acquire !== 'function')
      throw new TypeError(
        `${this.label}: pool must be a StreamPool, got ${pool === null ? 'null' : typeof pool === 'object' ? 'an object without acquire()' : typeof pool}`,
      );
    this.pool = pool;
    const resolved = resolveDescriptor(descriptor, this.label);
    this.#retain = resolved.retainSettled;
    this.#uniqueNames = resolved.uniqueNames;
    this.#guestStreams = resolved.guestStreams;
    this.#scheduler = new OperationScheduler(this.label, pool, (op) => this.#record(op));
  }

  /** Operations added and not yet settled. */
  get pendingCount(): number {
    return this.#ops.size - this.#retained.length;
  }

  #get(ref: string | number): Operation {
    const op = this.#find(ref);
    if (op === undefined)
      throw new OperationForgottenError(
        `${this.label}: operation ${ref} settled long ago and its outcome is no longer retained`,
      );
    return op;
  }

  /**
   * The operation `ref` names; for a forgotten one, a stand-in carrying its outcome;
   * undefined when its outcome is unknown. Throws a RangeError for a name or id never issued.
   */
  #find(ref: string | number): Operation | undefined {
    if (typeof ref === 'number') {
      const op = this.#ops.get(ref);
      if (op) return op;
      if (!Number.isSafeInteger(ref) || ref < 1 || ref >= this.#nextId)
        throw new RangeError(`${this.label}: no operation ${String(ref)}`);
      return this.#log.stub(ref);
    }
    const op = this.#byName.get(ref);
    if (!op) throw new RangeError(`${this.label}: no operation ${JSON.stringify(ref)}`);
    return op;
  }

  /**
   * Adds an operation (not started until run()); returns its id. A name may be reused once the
   * operation that had it has settled: names in `after` then mean the latest.
   */
  add(spec: OperationSpec): number {
    return this.#register(this.#make(spec)).id;
  }

  /**
   * Adds an operation and starts it at once (GPU work is enqueued now if its dependencies
   * allow, else as soon as they do); returns its id. Throws a DependencyFailedError, adding
   * nothing, if a dependency has already failed; throws the error of its own enqueue if that
   * failed (the operation is then recorded as failed).
   */
  start(spec: OperationSpec): number {
    const op = this.#make(spec);
    const failed = op.after.find((d) => d.state === 'failed');
    if (failed) {
      this.#nextId--; // nothing was added: the id is not spent
      throw new DependencyFailedError(op.name, failed.name, failed.error!, {
        operationId: op.id,
        dependencyId: failed.id,
      });
    }
    this.#register(op);
    this.#launch([op]);
    if (op.state === 'failed' && !(op.error instanceof DependencyFailedError)) throw op.error!;
    return op.id;
  }

  #make(spec: OperationSpec): Operation {
    this.assertAlive();
    checkOperationSpec(spec, this.label);
    const existing = this.#uniqueNames ? this.#byName.get(spec.name) : undefined;
    if (existing && !existing.isSettled)
      throw new Error(`${this.label}: an operation named "${spec.name}" is already pending`);
    const after: Operation[] = [];
    for (const ref of spec.after ?? []) {
      const d = this.#find(ref);
      if (d === undefined)
        throw new OperationForgottenError(
          `${this.label}: operation "${spec.name}" depends on operation ${ref}, whose outcome is no longer retained`,
        );
      if (d.state !== 'completed' && d.state !== 'captured' && !after.includes(d)) after.push(d);
    }
    const stream = operationStream(spec, this.pool, this.#guestStreams, this.label);
    const op = new Operation(this.#nextId++, spec, stream);
    op.after.push(...after);
    return op;
  }

  #register(op: Operation): Operation {
    this.#ops.set(op.id, op);
    if (this.#uniqueNames) this.#byName.set(op.name, op);
    // A new operation has no dependents yet, so none of these edges can close a cycle.
    const barrier = this.#barrier;
    if (barrier && !barrier.isSettled && barrier !== op && !op.after.includes(barrier)) op.after.push(barrier);
    for (const d of op.after) if (this.#ops.get(d.id) === d) addEdgeToNew(this.#deps, d.id, op.id);
    return op;
  }

  /** `dependent` runs after `dependency`; throws a CycleError naming the cycle if that would close one. */
  addDependency(dependency: string | number, dependent: string | number): void {
    this.assertAlive();
    const to = this.#get(dependent);
    if (to.state !== 'pending')
      throw new Error(
        `${this.label}: "${to.name}" has already started (${to.state}); add its dependencies before run()`,
      );
    const from = this.#get(dependency);
    if (this.#ops.get(from.id) === from) addEdge(this.#deps, from.id, to.id, this.#nameOf);
    if (from.state !== 'completed' && from.state !== 'captured' && !to.after.includes(from)) to.after.push(from);
  }

  /**
   * Every operation added later runs after every operation added so far that has not settled,
   * on all streams. Lowered to one no-op on the pool's first stream that waits for them all,
   * and one event every later operation waits on: no host synchronization.
   */
  barrier(name = `barrier#${this.#nextId}`): number {
    this.assertAlive();
    // A number would be filed as a name and then never found: numbers in `after` mean ids.
    if (typeof name !== 'string' || name === '')
      throw new TypeError(`${this.label}: barrier() name must be a non-empty string, got ${shownValue(name)}`);
    const existing = this.#byName.get(name);
    if (existing && !existing.isSettled)
      throw new Error(`${this.label}: an operation named "${name}" is already pending`);
    const op = new Operation(
      this.#nextId++,
      { name, kind: 'other', run: () => undefined },
      this.pool.streams[0]!,
      true,
    );
    for (const o of this.#ops.values()) if (!o.isSettled) op.after.push(o);
    this.#ops.set(op.id, op);
    this.#byName.set(op.name, op);
    for (const d of op.after) addEdgeToNew(this.#deps, d.id, op.id);
    this.#barrier = op;
    return op.id;
  }

  /** Calls `callback` each time a run's operations on `stream` have all settled (with the first failure among them). */
  onStreamComplete(stream: Stream, callback: (error?: Error) => void): void {
    if (!this.pool.streams.includes(stream)) {
      // null or a look-alike was "Cannot read properties of null (reading 'label')".
      if (!Resource.isResourceOf(stream, 'Stream'))
        throw new TypeError(
          `${this.label}: onStreamComplete() stream must be a Stream of ${this.pool.label}, got ${describeValue(stream)}`,
        );
      throw new Error(`${this.label}: stream "${stream.label}" does not belong to ${this.pool.label}`);
    }
    // A non-function was accepted here and threw only once the stream's operations settled.
    if (typeof callback !== 'function')
      throw new TypeError(`${this.label}: onStreamComplete() callback must be a function, got ${shownValue(callback)}`);
    let list = this.#streamCallbacks.get(stream);
    if (!list) this.#streamCallbacks.set(stream, (list = []));
    list.push(callback);
  }

  /** The pending operations in the order run() starts them (dependencies first, then by id). */
  #pendingInOrder(): Operation[] {
    const ids: number[] = [];
    for (const op of this.#ops.values()) if (op.state === 'pending') ids.push(op.id);
    return topologicalOrder(ids, this.#deps, this.#nameOf).map((id) => this.#ops.get(id)!);
  }

  /**
   * Starts every pending operation as soon as its dependencies allow and resolves when all have
   * settled; rejects with the first failure that was not merely a failed dependency.
   */
  async run(): Promise<void> {
    this.assertAlive();
    const ops = this.#pendingInOrder();
    if (ops.length === 0) return;
    this.#launch(ops);
    await Promise.allSettled(ops.map((op) => op.settled));
    const failed =
      ops.find((op) => op.state === 'failed' && !(op.error instanceof DependencyFailedError)) ??
      ops.find((op) => op.state === 'failed');
    if (failed) throw failed.error!;
  }

  /** Starts `ops` (pending, in a valid order) as their dependencies allow, watched for onStreamComplete(). */
  #launch(ops: readonly Operation[]): void {
    this.#watchStreams(ops);
    this.#scheduler.launch(ops);
  }

  #watchStreams(ops: readonly Operation[]): void {
    for (const [stream, callbacks] of this.#streamCallbacks) {
      const mine = ops.filter((op) => op.stream === stream);
      if (mine.length === 0) continue;
      void Promise.allSettled(mine.map((op) => op.settled)).then(() => {
        const error = mine.find((op) => op.error)?.error;
        for (const cb of callbacks) callSafely(cb, error, this.label, 'onStreamComplete', stream.label);
      });
    }
  }

  /** Reports a settlement to poll() and keeps the record within the retention bound. */
  #record(op: Operation, report = true): void {
    if (report) this.#log.report(op);
    this.#retained.push(op);
    while (this.#retained.length > this.#retain) this.#forget(this.#retained.shift()!);
  }

  #forget(op: Operation): void {
    if (this.#ops.get(op.id) !== op) return;
    this.#ops.delete(op.id);
    this.#deps.delete(op.id);
    if (this.#byName.get(op.name) === op) this.#byName.delete(op.name);
    if (this.#barrier === op) this.#barrier = undefined;
    this.#log.forget(op);
  }

  /**
   * Operations that completed or failed since the last poll(), in the order they settled;
   * never blocks. It first asks the GPU about the oldest pending operation of each stream, for
   * callers that do not yield to the event loop (the poller reports the same otherwise).
   */
  poll(): SettledOperation[] {
    this.observe();
    return this.#log.drain();
  }

  /**
   * Asks the GPU now (never blocking) about the oldest in-flight operation of each stream and
   * settles what has finished, without waiting for the poller's next turn.
   */
  observe(): void {
    this.#scheduler.observe();
  }

  /** Resolves when the operation completes (or is captured); rejects with its error. */
  wait(ref: string | number): Promise<void> {
    return this.#get(ref).settled;
  }

  /** The operation's state; a forgotten one reads 'completed' or 'failed'. */
  state(ref: string | number): OperationState {
    return this.#get(ref).state;
  }

  /** The error a failed operation failed with; undefined if it has not failed. */
  failure(ref: string | number): Error | undefined {
    return this.#get(ref).error;
  }

  /** Ids of the operations added and not yet settled, oldest first. */
  pendingIds(): number[] {
    const out: number[] = [];
    for (const op of this.#ops.values()) if (!op.isSettled) out.push(op.id);
    return out;
  }

  /**
   * Forgets settled operations (their names become free), so a long-lived coordinator stays
   * small. A later dependency on a forgotten failure still fails (its outcome is kept, bounded).
   */
  clearSettled(): void {
    for (let op = this.#retained.shift(); op !== undefined; op = this.#retained.shift()) this.#forget(op);
  }

  /**
   * Fails every operation not yet settled with an OperationError (its dependents with a
   * DependencyFailedError), so nothing waits forever; GPU work already enqueued still runs.
   * The pool is the caller's and stays.
   */
  protected releaseNative(): void {
    const open: Operation[] = [];
    for (const op of this.#ops.values()) if (!op.isSettled) open.push(op);
    open.sort((a, b) => a.id - b.id);
    for (const op of open)
      this.#scheduler.fail(
        op,
        new OperationError(`${this.label} was disposed before operation ${op.id} ("${op.name}") settled`, op.id),
      );
    this.#scheduler.abandon();
  }

  /**
   * Runs `fn` on every stream of the pool at once (each call enqueues that stream's share) and
   * resolves with the results when all of that work has completed. If some calls throw, the
   * others' work still completes first; then it rejects with the first error.
   */
  executeParallel<T>(
    fn: (stream: Stream, index: number) => T,
    options: { kind?: OperationKind | undefined; name?: string | undefined } = {},
  ): Promise<T[]> {
    try {
      this.assertAlive();
    } catch (e) {
      return Promise.reject(e as Error);
    }
    return onEveryStream(this.pool, fn, options);
  }

  /**
   * Records the pending operations into a Graph instead of running them: the same streams and
   * the same cross-stream events, captured (fork from the first operation's stream, join back
   * into it). Launching the instantiated graph replays one iteration of the DAG with one call.
   * Host steps cannot be captured; neither can a dependency on work still in flight. The
   * operations end 'captured' (wait() resolves; nothing ran, so no callbacks).
   */
  capture(options: { mode?: CaptureMode | undefined; label?: string | undefined } = {}): Graph {
    this.assertAlive();
    const ops = this.#pendingInOrder();
    const graph = captureOperations(this.label, this.pool.context, ops, options);
    for (const op of ops) {
      op.state = 'captured';
      op.resolve();
      this.#record(op, false);
    }
    return graph;
  }
}
