import type { CUevent } from '../ffi/generated/types.js';
import { check, cu, driverError, hot } from '../runtime/cuda.js';
import { Graph, type CaptureMode } from '../runtime/graph.js';
import type { OperationKind } from '../report/timeline.js';
import type { Stream } from '../runtime/stream.js';
import { addEdge, addEdgeToNew, topologicalOrder } from './dag.js';
import { DependencyFailedError, Operation, type CompletedOperation, type OperationSpec, type OperationState } from './operation.js';
import type { StreamPool } from './stream-pool.js';

export interface CoordinatorDescriptor {
  label?: string;
}

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
 * Operations on a StreamPool's streams with dependencies across streams.
 *
 * A dependency between GPU operations on different streams is lowered to the event the pool
 * records behind the first (one per operation, reused from the context's pool) and one
 * cuStreamWaitEvent before the second: the host never waits between them. On the same stream,
 * stream order suffices. A host step waits (through the completion poller, never blocking) for
 * its dependencies to complete; what depends on it is enqueued once it has run.
 *
 * A failed operation (its enqueue threw, its host step failed, or its GPU work reported a CUDA
 * error) fails every operation that depends on it with a DependencyFailedError whose `cause` is
 * that failure; independent operations run on.
 */
export class Coordinator {
  readonly pool: StreamPool;
  readonly label: string;
  readonly #ops = new Map<number, Operation>();
  readonly #byName = new Map<string, Operation>();
  readonly #deps = new Map<number, Set<number>>();
  readonly #streamCallbacks = new Map<Stream, ((error?: Error) => void)[]>();
  #nextId = 1;
  #barrier: Operation | undefined;
  #completed: Operation[] = [];
  readonly #ready: Operation[] = [];
  #draining = false;
  readonly #nameOf = (id: number): string => this.#ops.get(id)?.name ?? `#${id}`;

  constructor(pool: StreamPool, descriptor: CoordinatorDescriptor = {}) {
    this.pool = pool;
    this.label = descriptor.label ?? 'coordinator';
  }

  #get(ref: string | number): Operation {
    const op = typeof ref === 'number' ? this.#ops.get(ref) : this.#byName.get(ref);
    if (!op) throw new Error(`${this.label}: no operation ${JSON.stringify(ref)}`);
    return op;
  }

  /**
   * Adds an operation (not started until run()); returns its id. A name may be reused once the
   * operation that had it has settled: names in `after` then mean the latest.
   */
  add(spec: OperationSpec): number {
    if (typeof spec.name !== 'string' || spec.name === '') throw new TypeError(`${this.label}: an operation needs a name`);
    if (typeof spec.run !== 'function') throw new TypeError(`${this.label}: operation "${spec.name}" needs a run function`);
    const existing = this.#byName.get(spec.name);
    if (existing && !existing.isSettled) throw new Error(`${this.label}: an operation named "${spec.name}" is already pending`);
    const after = (spec.after ?? []).map((ref) => this.#get(ref));
    let stream = spec.stream;
    if (stream === undefined) {
      const request: { purpose?: OperationSpec['purpose']; workload?: OperationSpec['workload'] } = {};
      if (spec.purpose !== undefined) request.purpose = spec.purpose;
      if (spec.workload !== undefined) request.workload = spec.workload;
      stream = this.pool.acquire(request);
    } else if (!this.pool.streams.includes(stream)) throw new Error(`${this.label}: stream "${stream.label}" of "${spec.name}" does not belong to ${this.pool.label}`);
    return this.#register(new Operation(this.#nextId++, spec, stream), after);
  }

  #register(op: Operation, after: readonly Operation[]): number {
    this.#ops.set(op.id, op);
    this.#byName.set(op.name, op);
    // A new operation has no dependents yet, so none of these edges can close a cycle.
    if (this.#barrier && !this.#barrier.isSettled && this.#barrier !== op) addEdgeToNew(this.#deps, this.#barrier.id, op.id);
    for (const d of after) addEdgeToNew(this.#deps, d.id, op.id);
    return op.id;
  }

  /** `dependent` runs after `dependency`; throws a CycleError naming the cycle if that would close one. */
  addDependency(dependency: string | number, dependent: string | number): void {
    const to = this.#get(dependent);
    if (to.state !== 'pending') throw new Error(`${this.label}: "${to.name}" has already started (${to.state}); add its dependencies before run()`);
    addEdge(this.#deps, this.#get(dependency).id, to.id, this.#nameOf);
  }

  /**
   * Every operation added later runs after every operation added so far that has not settled,
   * on all streams. Lowered to one no-op on the pool's first stream that waits for them all,
   * and one event every later operation waits on: no host synchronization.
   */
  barrier(name = `barrier#${this.#nextId}`): number {
    const existing = this.#byName.get(name);
    if (existing && !existing.isSettled) throw new Error(`${this.label}: an operation named "${name}" is already pending`);
    const before: Operation[] = [];
    for (const op of this.#ops.values()) if (!op.isSettled) before.push(op);
    const op = new Operation(this.#nextId++, { name, kind: 'other', run: () => undefined }, this.pool.streams[0]!, true);
    const id = this.#register(op, before);
    this.#barrier = op;
    return id;
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
    const ops = this.#pendingInOrder();
    if (ops.length === 0) return;
    for (const op of ops) op.state = 'waiting';
    const doomed: Operation[] = [];
    for (const op of ops) {
      op.deps = [];
      op.blockers = 0;
      for (const id of this.#deps.get(op.id) ?? []) {
        const d = this.#ops.get(id);
        if (!d) continue; // forgotten by clearSettled(): it had settled
        op.deps.push(d);
        if (d.state === 'failed') {
          doomed.push(op);
          continue;
        }
        if (d.isSettled) continue;
        d.dependents.push(op);
        if (d.satisfies(op)) continue;
        op.blockers++;
        if (d.isHost || op.isHost) d.waitingForCompletion.push(op);
        else d.waitingForLaunch.push(op);
      }
    }
    this.#watchStreams(ops);
    for (const op of doomed) {
      const d = op.deps.find((x) => x.state === 'failed')!;
      this.#fail(op, new DependencyFailedError(op.name, d.name, d.error!));
    }
    for (const op of ops) if (op.blockers === 0 && op.state === 'waiting') this.#ready.push(op);
    this.#drain();
    await Promise.allSettled(ops.map((op) => op.settled));
    const failed = ops.find((op) => op.state === 'failed' && !(op.error instanceof DependencyFailedError)) ?? ops.find((op) => op.state === 'failed');
    if (failed) throw failed.error!;
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
    let result: unknown;
    try {
      result = op.spec.run(op.stream);
    } catch (e) {
      this.#fail(op, toError(e));
      return;
    }
    if (isThenable(result)) {
      result.then(
        () => this.#complete(op),
        (e: unknown) => this.#fail(op, toError(e)),
      );
    } else this.#complete(op);
  }

  /** The edge path: one cuStreamWaitEvent per dependency on another stream still in flight. */
  #startGpu(op: Operation): void {
    try {
      const sh = op.stream.use();
      const deps = op.deps;
      for (let i = 0; i < deps.length; i++) {
        const d = deps[i]!;
        const event = d.event;
        if (event === undefined || d.stream === op.stream) continue;
        const status = hot().streamWaitEvent(sh, event, 0);
        if (status !== 0) throw driverError(status, 'cuStreamWaitEvent', `"${op.name}" on stream "${op.stream.label}" after "${d.name}"`);
      }
      op.state = 'enqueued';
      const listener = (error: Error | undefined): void => {
        if (error) this.#fail(op, error);
        else this.#complete(op);
      };
      const event = op.barrier ? this.#recordBehind(op, listener) : this.pool.submit(op.stream, op.spec.kind, op.spec.run, op.spec.bytes === undefined ? { name: op.name } : { name: op.name, bytes: op.spec.bytes }, listener);
      // Completed already (settled inline): nothing is left to wait on.
      if (op.state === 'enqueued') op.event = event;
      this.#release(op.waitingForLaunch);
    } catch (e) {
      this.#fail(op, toError(e));
    }
  }

  /** A barrier's event: recorded and tracked like pool work, but not counted as work. */
  #recordBehind(op: Operation, listener: (error: Error | undefined) => void): CUevent | undefined {
    const context = this.pool.context;
    const events = context.completionEvents;
    const event = events.acquire();
    const status = hot().eventRecord(event, op.stream.handle);
    if (status !== 0) {
      events.recycle(event);
      throw driverError(status, 'cuEventRecord', `barrier "${op.name}"`);
    }
    let pending = true;
    const settle = (error: Error | undefined): void => {
      pending = false;
      listener(error);
    };
    context.completion.enqueue(op.stream.handle ?? 0, event, () => settle(undefined), settle, events.recycle);
    return pending ? event : undefined;
  }

  #complete(op: Operation): void {
    if (op.isSettled) return;
    op.state = 'done';
    op.event = undefined;
    op.resolve();
    this.#completed.push(op);
    if (op.spec.onComplete) callSafely(op.spec.onComplete, undefined);
    this.#release(op.waitingForLaunch);
    this.#release(op.waitingForCompletion);
    op.dependents.length = 0;
    this.#drain();
  }

  /** Fails `op` and, transitively, everything that depends on it and has not settled. */
  #fail(op: Operation, error: Error): void {
    const work: [Operation, Error][] = [[op, error]];
    while (work.length) {
      const [o, e] = work.pop()!;
      if (o.isSettled) continue;
      o.state = 'failed';
      o.error = e;
      o.event = undefined;
      o.reject(e);
      this.#completed.push(o);
      if (o.spec.onComplete) callSafely(o.spec.onComplete, e);
      for (const d of o.dependents) if (!d.isSettled) work.push([d, new DependencyFailedError(d.name, o.name, e)]);
      o.dependents.length = 0;
      o.waitingForLaunch.length = 0;
      o.waitingForCompletion.length = 0;
    }
  }

  /** Operations that completed or failed since the last poll(), in the order they settled; never blocks. */
  poll(): CompletedOperation[] {
    const out = this.#completed.map((op): CompletedOperation => (op.error ? { id: op.id, name: op.name, error: op.error } : { id: op.id, name: op.name }));
    this.#completed = [];
    return out;
  }

  /** Resolves when the operation completes (or is captured); rejects with its error. */
  wait(ref: string | number): Promise<void> {
    return this.#get(ref).settled;
  }

  state(ref: string | number): OperationState {
    return this.#get(ref).state;
  }

  /** Forgets settled operations (their names become free), so a long-lived coordinator stays small. */
  clearSettled(): void {
    for (const [id, op] of this.#ops) {
      if (!op.isSettled) continue;
      this.#ops.delete(id);
      this.#deps.delete(id);
      if (this.#byName.get(op.name) === op) this.#byName.delete(op.name);
      if (this.#barrier === op) this.#barrier = undefined;
    }
  }

  /**
   * Runs `fn` on every stream of the pool at once (each call enqueues that stream's share) and
   * resolves with the results when all of that work has completed. If some calls throw, the
   * others' work still completes first; then it rejects with the first error.
   */
  async executeParallel<T>(fn: (stream: Stream, index: number) => T, options: { kind?: OperationKind; name?: string } = {}): Promise<T[]> {
    const kind = options.kind ?? 'other';
    const streams = this.pool.streams;
    const results = new Array<T>(streams.length);
    const completions = streams.map(
      (stream, index) =>
        new Promise<void>((resolve, reject) => {
          this.pool.submit(stream, kind, (s) => (results[index] = fn(s, index)), { name: options.name ?? `parallel#${index}` }, (error) => (error ? reject(error) : resolve()));
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
  capture(options: { mode?: CaptureMode; label?: string } = {}): Graph {
    const ops = this.#pendingInOrder();
    if (ops.length === 0) throw new Error(`${this.label}: no pending operations to capture`);
    const inCapture = new Set(ops);
    const depsOf = new Map<Operation, Operation[]>();
    for (const op of ops) {
      if (op.isHost) throw new TypeError(`${this.label}: "${op.name}" is a host step; a graph holds only GPU work`);
      const deps: Operation[] = [];
      for (const id of this.#deps.get(op.id) ?? []) {
        const d = this.#ops.get(id);
        if (!d) continue;
        if (inCapture.has(d)) deps.push(d);
        else if (d.state !== 'done' && d.state !== 'captured') throw new Error(`${this.label}: "${op.name}" depends on "${d.name}", which is ${d.state}: capture once it has completed`);
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
    const api = cu();
    const record = (stream: Stream): CUevent => {
      const e = taken[next++]!;
      check(api.cuEventRecord(e, stream.use()), 'cuEventRecord', `${this.label}: capture on stream "${stream.label}"`);
      return e;
    };
    const waitOn = (stream: Stream, e: CUevent): void => check(api.cuStreamWaitEvent(stream.use(), e, 0), 'cuStreamWaitEvent', `${this.label}: capture on stream "${stream.label}"`);
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
              if (!op.barrier && isThenable(op.spec.run(op.stream))) throw new TypeError(`${this.label}: "${op.name}" returned a promise; GPU operations must enqueue synchronously`);
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
    }
    return graph;
  }
}


