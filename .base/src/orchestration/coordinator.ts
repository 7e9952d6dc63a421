import { CUresult, type CUevent } from '../ffi/generated/types.js';
import { checkTimeoutMs } from '../runtime/timeout.js';
import { check, driverApi, driverError, hot } from '../runtime/cuda.js';
import { Graph, type CaptureMode } from '../runtime/graph.js';
import type { OperationKind } from '../report/timeline.js';
import { Resource } from '../runtime/resource.js';
import type { Stream } from '../runtime/stream.js';
import { addEdge, addEdgeToNew, topologicalOrder } from './dag.js';
import { DependencyFailedError, OperationError, OperationForgottenError, OperationTimeoutError } from './errors.js';
import { Operation, type OperationSpec, type OperationState, type SettledOperation } from './operation.js';
import { RingQueue } from './ring-queue.js';
import type { SettleListener } from './stream-pool.js';
import type { StreamPool } from './stream-pool.js';

/** How a Coordinator is made. */
export interface CoordinatorDescriptor {
  label?: string | undefined;
  /**
   * Settled operations kept for state() / wait() / names (default 4096); older ones are
   * forgotten oldest first (a failure's outcome is kept longer, see MAX_FORGOTTEN_FAILURES).
   */
  retainSettled?: number | undefined;
  /**
   * Names identify operations (default true): unique among unsettled ones, usable in `after`,
   * wait(), state(). false: names are labels only (any may repeat) and operations are
   * referred to by id, as the AsyncCoordinator does.
   */
  uniqueNames?: boolean | undefined;
}

/** poll() reports at most this many settlements since the previous poll(); older ones are dropped. */
export const MAX_UNREPORTED = 1 << 16;
/** Failures of forgotten operations remembered (their ids and errors); beyond, the oldest are dropped. */
export const MAX_FORGOTTEN_FAILURES = 1 << 16;
const DEFAULT_RETAIN = 4096;

function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

/** A user callback must not break the bookkeeping it is called from; its error still surfaces. */
function callSafely(callback: (error?: Error) => void, error: Error | undefined): void {
  try {
    callback(error);
  } catch (e) {
    queueMicrotask(() => {
      throw e;
    });
  }
}

/**
 * Operations on a StreamPool's streams with dependencies across streams: the one
 * dependency-graph engine of tscuda (the AsyncCoordinator and the stage manager are fronts
 * of it).
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
  readonly #ops = new Map<number, Operation>();
  readonly #byName = new Map<string, Operation>();
  readonly #deps = new Map<number, Set<number>>();
  readonly #streamCallbacks = new Map<Stream, ((error?: Error) => void)[]>();
  #nextId = 1;
  #barrier: Operation | undefined;
  readonly #unreported = new RingQueue<SettledOperation>();
  /** Settled operations still in #ops, oldest first: what retention forgets. */
  readonly #retained = new RingQueue<Operation>();
  readonly #forgottenFailures = new Map<number, Error>();
  /** Ids at or below this may have failed with their failure no longer remembered. */
  #unknownBelow = 0;
  /** GPU operations whose event is pending, in enqueue order (poll() asks the GPU about them). */
  readonly #inFlight = new Set<Operation>();
  readonly #ready: Operation[] = [];
  #draining = false;
  readonly #nameOf = (id: number): string => this.#ops.get(id)?.name ?? `#${id}`;

  constructor(pool: StreamPool, descriptor: CoordinatorDescriptor = {}) {
    super('Coordinator', descriptor.label ?? 'coordinator');
    this.pool = pool;
    const retain = descriptor.retainSettled ?? DEFAULT_RETAIN;
    if (!Number.isSafeInteger(retain) || retain < 0) throw new RangeError(`${this.label}: retainSettled must be an integer >= 0, got ${String(retain)}`);
    this.#retain = retain;
    this.#uniqueNames = descriptor.uniqueNames ?? true;
  }

  /** Operations added and not yet settled. */
  get pendingCount(): number {
    return this.#ops.size - this.#retained.length;
  }

  #get(ref: string | number): Operation {
    const op = this.#find(ref);
    if (op === undefined) throw new OperationForgottenError(`${this.label}: operation ${ref} settled long ago and its outcome is no longer retained`);
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
      if (!Number.isSafeInteger(ref) || ref < 1 || ref >= this.#nextId) throw new RangeError(`${this.label}: no operation ${String(ref)}`);
      const error = this.#forgottenFailures.get(ref);
      if (error === undefined && ref <= this.#unknownBelow) return undefined;
      const stub = new Operation(ref, { name: `#${ref}`, kind: 'other', run: () => undefined }, undefined as unknown as Stream);
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
      throw new DependencyFailedError(op.name, failed.name, failed.error!, { operationId: op.id, dependencyId: failed.id });
    }
    this.#register(op);
    this.#launch([op]);
    if (op.state === 'failed' && !(op.error instanceof DependencyFailedError)) throw op.error!;
    return op.id;
  }

  #make(spec: OperationSpec): Operation {
    this.assertAlive();
    if (spec === null || typeof spec !== 'object') throw new TypeError(`${this.label}: an operation must be an object`);
    if (typeof spec.name !== 'string' || spec.name === '') throw new TypeError(`${this.label}: an operation needs a name`);
    if (typeof spec.run !== 'function') throw new TypeError(`${this.label}: operation "${spec.name}" needs a run function`);
    if (spec.timeoutMs !== undefined) checkTimeoutMs(spec.timeoutMs, `${this.label}: operation "${spec.name}": timeoutMs`);
    if (spec.signal !== undefined && !(spec.signal instanceof AbortSignal)) throw new TypeError(`${this.label}: operation "${spec.name}": signal must be an AbortSignal`);
    if (spec.after !== undefined && !Array.isArray(spec.after)) throw new TypeError(`${this.label}: operation "${spec.name}": after must be an array of names or ids`);
    const existing = this.#uniqueNames ? this.#byName.get(spec.name) : undefined;
    if (existing && !existing.isSettled) throw new Error(`${this.label}: an operation named "${spec.name}" is already pending`);
    const after: Operation[] = [];
    for (const ref of spec.after ?? []) {
      const d = this.#find(ref);
      if (d === undefined) throw new OperationForgottenError(`${this.label}: operation "${spec.name}" depends on operation ${ref}, whose outcome is no longer retained`);
      if (d.state !== 'completed' && d.state !== 'captured' && !after.includes(d)) after.push(d);
    }
    let stream = spec.stream;
    if (stream === undefined) {
      const request: { purpose?: OperationSpec['purpose'] | undefined; workload?: OperationSpec['workload'] | undefined } = {};
      if (spec.purpose !== undefined) request.purpose = spec.purpose;
      if (spec.workload !== undefined) request.workload = spec.workload;
      stream = this.pool.acquire(request);
    } else if (!this.pool.streams.includes(stream) && stream.context !== this.pool.context) {
      throw new Error(`${this.label}: stream "${stream.label}" of "${spec.name}" belongs to another context than ${this.pool.label}`);
    }
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
    if (to.state !== 'pending') throw new Error(`${this.label}: "${to.name}" has already started (${to.state}); add its dependencies before run()`);
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
    const existing = this.#byName.get(name);
    if (existing && !existing.isSettled) throw new Error(`${this.label}: an operation named "${name}" is already pending`);
    const op = new Operation(this.#nextId++, { name, kind: 'other', run: () => undefined }, this.pool.streams[0]!, true);
    for (const o of this.#ops.values()) if (!o.isSettled) op.after.push(o);
    this.#ops.set(op.id, op);
    this.#byName.set(op.name, op);
    for (const d of op.after) addEdgeToNew(this.#deps, d.id, op.id);
    this.#barrier = op;
    return op.id;
  }

  /** Calls `callback` each time a run's operations on `stream` have all settled (with the first failure among them). */
  onStreamComplete(stream: Stream, callback: (error?: Error) => void): void {
    if (!this.pool.streams.includes(stream)) throw new Error(`${this.label}: stream "${stream.label}" does not belong to ${this.pool.label}`);
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
    const failed = ops.find((op) => op.state === 'failed' && !(op.error instanceof DependencyFailedError)) ?? ops.find((op) => op.state === 'failed');
    if (failed) throw failed.error!;
  }

  /** Wires `ops` (pending, in a valid order) to their dependencies and starts those that may start. */
  #launch(ops: readonly Operation[]): void {
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
    this.#watchStreams(ops);
    for (const [op, d] of doomed) this.#fail(op, d.dependencyFailure(op));
    for (const op of ops) if (op.blockers === 0 && op.state === 'waiting') this.#ready.push(op);
    this.#drain();
  }

  #watchStreams(ops: readonly Operation[]): void {
    for (const [stream, callbacks] of this.#streamCallbacks) {
      const mine = ops.filter((op) => op.stream === stream);
      if (mine.length === 0) continue;
      void Promise.allSettled(mine.map((op) => op.settled)).then(() => {
        const error = mine.find((op) => op.error)?.error;
        for (const cb of callbacks) callSafely(cb, error);
      });
    }
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
      this.#fail(op, this.#abortError(op, signal));
      return;
    }
    let result: unknown;
    try {
      result = op.spec.run(op.stream);
    } catch (e) {
      this.#fail(op, toError(e));
      return;
    }
    if (!isThenable(result)) {
      this.#workDone(op);
      return;
    }
    if (timeoutMs !== undefined || signal !== undefined) this.#guard(op, timeoutMs, signal);
    result.then(
      () => this.#workDone(op),
      (e: unknown) => this.#fail(op, toError(e)),
    );
  }

  /** Bounds a host step in flight: its timeout or its signal fails it (its promise is then ignored). */
  #guard(op: Operation, timeoutMs: number | undefined, signal: AbortSignal | undefined): void {
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => this.#fail(op, new OperationTimeoutError(`${this.label}: host step "${op.name}" did not settle within ${timeoutMs} ms`, op.id)), timeoutMs);
    const onAbort = signal === undefined ? undefined : (): void => this.#fail(op, this.#abortError(op, signal));
    if (onAbort) signal!.addEventListener('abort', onAbort, { once: true });
    op.cancelGuard = () => {
      if (timer !== undefined) clearTimeout(timer);
      if (onAbort) signal!.removeEventListener('abort', onAbort);
    };
  }

  #abortError(op: Operation, signal: AbortSignal): Error {
    const reason: unknown = signal.reason;
    return reason instanceof Error
      ? reason
      : new OperationTimeoutError(`${this.label}: host step "${op.name}" was aborted${reason === undefined ? '' : `: ${String(reason)}`}`, op.id, { cause: reason });
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
        const status = hot().streamWaitEvent(sh, event, 0);
        if (status !== 0) throw driverError(status, 'cuStreamWaitEvent', `"${op.name}" on stream "${op.stream.label}" after "${d.name}"`);
      }
      op.state = 'enqueued';
      const listener: SettleListener = (error) => {
        if (error) this.#fail(op, error);
        else this.#workDone(op);
      };
      const spec = op.spec;
      const event = op.barrier
        ? op.stream.trackCompletion(listener)
        : this.pool.submit(
            op.stream,
            spec.kind,
            spec.run,
            { name: op.name, ...(spec.bytes === undefined ? {} : { bytes: spec.bytes }), ...(spec.profile === false ? { profile: false } : {}) },
            listener,
          );
      // Finished already (settled inline): nothing is left to wait on.
      if (op.state === 'enqueued' && !op.workDone && event !== undefined) {
        op.event = event;
        this.#inFlight.add(op);
      }
      this.#release(op.waitingForLaunch);
    } catch (e) {
      this.#fail(op, toError(e));
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
      if (op.spec.onComplete) callSafely(op.spec.onComplete, undefined);
      this.#release(op.waitingForLaunch);
      this.#release(op.waitingForCompletion);
      for (const d of op.dependents) if (!d.isSettled && --d.unfinished === 0 && d.workDone) work.push(d);
      op.dependents.length = 0;
    }
    this.#drain();
  }

  /** Fails `op` and, transitively, everything that depends on it and has not settled. */
  #fail(op: Operation, error: Error): void {
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
      if (o.spec.onComplete) callSafely(o.spec.onComplete, e);
      for (const d of o.dependents) if (!d.isSettled) work.push([d, o.dependencyFailure(d)]);
      o.dependents.length = 0;
      o.waitingForLaunch.length = 0;
      o.waitingForCompletion.length = 0;
    }
  }

  /** Reports a settlement to poll() and keeps the record within the retention bound. */
  #record(op: Operation, report = true): void {
    if (report) {
      if (this.#unreported.length >= MAX_UNREPORTED) this.#unreported.shift();
      const kind = op.spec.kind;
      this.#unreported.push(op.error ? { id: op.id, name: op.name, kind, status: 'failed', error: op.error } : { id: op.id, name: op.name, kind, status: 'completed' });
    }
    this.#retained.push(op);
    while (this.#retained.length > this.#retain) this.#forget(this.#retained.shift()!);
  }

  #forget(op: Operation): void {
    if (this.#ops.get(op.id) !== op) return;
    this.#ops.delete(op.id);
    this.#deps.delete(op.id);
    if (this.#byName.get(op.name) === op) this.#byName.delete(op.name);
    if (this.#barrier === op) this.#barrier = undefined;
    if (op.state !== 'failed') return;
    this.#forgottenFailures.set(op.id, op.error!);
    if (this.#forgottenFailures.size > MAX_FORGOTTEN_FAILURES) {
      const oldest = this.#forgottenFailures.keys().next().value!;
      this.#forgottenFailures.delete(oldest);
      if (oldest > this.#unknownBelow) this.#unknownBelow = oldest;
    }
  }

  /**
   * Operations that completed or failed since the last poll(), in the order they settled;
   * never blocks. It first asks the GPU about the oldest pending operation of each stream, for
   * callers that do not yield to the event loop (the poller reports the same otherwise).
   */
  poll(): SettledOperation[] {
    this.observe();
    const out: SettledOperation[] = [];
    for (let s = this.#unreported.shift(); s !== undefined; s = this.#unreported.shift()) out.push(s);
    return out;
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
      const status = query(event);
      if (status === 0) this.#workDone(op);
      else if (status === CUresult.CUDA_ERROR_NOT_READY) notReady.add(op.stream);
      else this.#fail(op, driverError(status, 'cuEventQuery', `"${op.name}" on stream "${op.stream.label}"`));
    }
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
    for (const op of open) this.#fail(op, new OperationError(`${this.label} was disposed before operation ${op.id} ("${op.name}") settled`, op.id));
    this.#ready.length = 0;
    this.#inFlight.clear();
  }

  /**
   * Runs `fn` on every stream of the pool at once (each call enqueues that stream's share) and
   * resolves with the results when all of that work has completed. If some calls throw, the
   * others' work still completes first; then it rejects with the first error.
   */
  async executeParallel<T>(fn: (stream: Stream, index: number) => T, options: { kind?: OperationKind | undefined; name?: string | undefined } = {}): Promise<T[]> {
    this.assertAlive();
    const kind = options.kind ?? 'other';
    const streams = this.pool.streams;
    const results = new Array<T>(streams.length);
    const completions = streams.map(
      (stream, index) =>
        new Promise<void>((resolve, reject) => {
          this.pool.submit(
            stream,
            kind,
            (s) => (results[index] = fn(s, index)),
            { name: options.name ?? `parallel#${index}` },
            (error) => (error ? reject(error) : resolve()),
          );
        }),
    );
    // Every stream's share completes (or fails) before the first failure is reported.
    const settled = await Promise.allSettled(completions);
    for (const s of settled) if (s.status === 'rejected') throw toError(s.reason);
    return results;
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
    if (ops.length === 0) throw new Error(`${this.label}: no pending operations to capture`);
    const inCapture = new Set(ops);
    const depsOf = new Map<Operation, Operation[]>();
    for (const op of ops) {
      if (op.isHost) throw new TypeError(`${this.label}: "${op.name}" is a host step; a graph holds only GPU work`);
      const deps: Operation[] = [];
      for (const d of op.after) {
        if (inCapture.has(d)) deps.push(d);
        else if (d.state !== 'completed' && d.state !== 'captured')
          throw new Error(`${this.label}: "${op.name}" depends on "${d.name}", which is ${d.state}: capture once it has completed`);
      }
      depsOf.set(op, deps);
    }
    const origin = ops[0]!.stream;
    const streams = [...new Set(ops.map((op) => op.stream))];
    const events = this.pool.context.completionEvents;
    // Taken before the capture begins: creating an event is no part of the work to record.
    const taken: CUevent[] = [];
    for (let i = 0; i < 1 + ops.length + streams.length; i++) taken.push(events.acquire());
    let next = 0;
    const api = driverApi();
    const record = (stream: Stream): CUevent => {
      const e = taken[next++]!;
      check(api.cuEventRecord(e, stream.use()), 'cuEventRecord', `${this.label}: capture on stream "${stream.label}"`);
      return e;
    };
    const waitOn = (stream: Stream, e: CUevent): void =>
      check(api.cuStreamWaitEvent(stream.use(), e, 0), 'cuStreamWaitEvent', `${this.label}: capture on stream "${stream.label}"`);
    let graph: Graph;
    try {
      graph = Graph.capture(
        origin,
        () => {
          // Other streams join the capture by waiting on an event of the capturing stream.
          const fork = record(origin);
          for (const s of streams) if (s !== origin) waitOn(s, fork);
          const recorded = new Map<Operation, CUevent>();
          let failure: unknown;
          try {
            for (const op of ops) {
              for (const d of depsOf.get(op)!) if (d.stream !== op.stream) waitOn(op.stream, recorded.get(d)!);
              if (!op.barrier && isThenable(op.spec.run(op.stream)))
                throw new TypeError(`${this.label}: "${op.name}" returned a promise; GPU operations must enqueue synchronously`);
              recorded.set(op, record(op.stream));
            }
          } catch (e) {
            failure = e;
          }
          // Every forked stream joins back into the origin, also after a failure: otherwise the
          // capture could not end and the streams would stay in capture mode.
          try {
            for (const s of streams) if (s !== origin) waitOn(origin, record(s));
          } catch (e) {
            failure ??= e;
          }
          if (failure !== undefined) throw failure;
        },
        { mode: options.mode ?? 'threadLocal', label: options.label ?? `${this.label} iteration` },
      );
    } finally {
      // Events recorded in a capture are only edges of the graph; any later use records them again first.
      for (const e of taken) events.recycle(e);
    }
    for (const op of ops) {
      op.state = 'captured';
      op.resolve();
      this.#record(op, false);
    }
    return graph;
  }
}
