import { cu, driverError } from '../cuda.js';
import type { OperationKind } from '../profiler/timeline.js';
import type { Stream } from '../stream.js';
import { addEdge, topologicalOrder } from './dag.js';
import type { StreamPool } from './stream-pool.js';
import type { WorkloadType } from './strategy.js';

export interface OperationSpec {
  name: string;
  /** What the operation is, for metrics and the timeline. Host steps are `host`. */
  kind: OperationKind;
  /** GPU work: enqueues on the given stream. A host step (kind 'host') runs after its dependencies complete. */
  run: (stream: Stream) => void | Promise<void>;
  /** Default: the pool's choice for `workload`. */
  stream?: Stream;
  workload?: WorkloadType;
  bytes?: number;
  /** Names or ids of operations this one runs after. */
  after?: readonly (string | number)[];
  onComplete?: (error?: Error) => void;
}

interface Op {
  id: number;
  spec: OperationSpec;
  stream: Stream;
  state: 'pending' | 'enqueued' | 'done' | 'failed';
  error: Error | undefined;
  /** Recorded right after the operation's work: what cross-stream dependents wait on. */
  event: bigint | undefined;
  settled: Promise<void>;
  resolve: () => void;
  reject: (e: Error) => void;
  reported: boolean;
}

export class DependencyFailedError extends Error {
  override readonly name = 'DependencyFailedError';
}

/**
 * Operations on a StreamPool's streams with dependencies across streams. A dependency between
 * GPU operations becomes cuEventRecord + cuStreamWaitEvent: the host never waits between them.
 * Host steps wait (asynchronously) for their dependencies, then their dependents are enqueued.
 */
export class Coordinator {
  readonly pool: StreamPool;
  readonly #ops = new Map<number, Op>();
  readonly #byName = new Map<string, number>();
  readonly #deps = new Map<number, Set<number>>();
  readonly #streamCallbacks = new Map<Stream, ((error?: Error) => void)[]>();
  #nextId = 1;
  #barrier: number | undefined;
  #completedUnreported: number[] = [];

  constructor(pool: StreamPool) {
    this.pool = pool;
  }

  #id(ref: string | number): number {
    const id = typeof ref === 'number' ? ref : this.#byName.get(ref);
    if (id === undefined || !this.#ops.has(id)) throw new Error(`no operation ${JSON.stringify(ref)} in this coordinator`);
    return id;
  }

  #name = (id: number): string => this.#ops.get(id)?.spec.name ?? `#${id}`;

  add(spec: OperationSpec): number {
    if (this.#byName.has(spec.name)) throw new Error(`an operation named "${spec.name}" already exists`);
    const id = this.#nextId++;
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const settled = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    settled.catch(() => undefined);
    const stream = spec.stream ?? this.pool.acquire(spec.workload ? { workload: spec.workload } : {});
    this.#ops.set(id, { id, spec, stream, state: 'pending', error: undefined, event: undefined, settled, resolve, reject, reported: false });
    this.#byName.set(spec.name, id);
    if (this.#barrier !== undefined) addEdge(this.#deps, this.#barrier, id, this.#name);
    for (const ref of spec.after ?? []) this.addDependency(ref, id);
    return id;
  }

  /** `dependent` runs after `dependency`; throws a CycleError naming the cycle if that closes one. */
  addDependency(dependency: string | number, dependent: string | number): void {
    addEdge(this.#deps, this.#id(dependency), this.#id(dependent), this.#name);
  }

  /** Every operation added later runs after every operation added so far, on all streams. */
  barrier(name = `barrier#${this.#nextId}`): number {
    const before = [...this.#ops.keys()].filter((id) => this.#ops.get(id)!.state === 'pending');
    const id = this.add({ name, kind: 'other', run: () => undefined, stream: this.pool.streams[0]!, after: before });
    this.#barrier = id;
    return id;
  }

  onStreamComplete(stream: Stream, callback: (error?: Error) => void): void {
    (this.#streamCallbacks.get(stream) ?? this.#streamCallbacks.set(stream, []).get(stream)!).push(callback);
  }

  /** Enqueues every pending operation in dependency order; resolves when all have settled (rejects with the first failure). */
  async run(): Promise<void> {
    const pending = [...this.#ops.values()].filter((o) => o.state === 'pending').map((o) => o.id);
    const order = topologicalOrder(pending, this.#deps);
    for (const id of order) await this.#start(this.#ops.get(id)!);
    this.#barrier = undefined;
    const results = await Promise.allSettled(order.map((id) => this.#ops.get(id)!.settled));
    for (const [stream, callbacks] of this.#streamCallbacks) {
      const failure = order.map((id) => this.#ops.get(id)!).find((o) => o.stream === stream && o.error)?.error;
      for (const cb of callbacks) cb(failure);
    }
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  async #start(op: Op): Promise<void> {
    const deps = [...(this.#deps.get(op.id) ?? [])].map((d) => this.#ops.get(d)!);
    // Host steps are the only dependencies the host must wait for before enqueueing.
    for (const d of deps) if (d.spec.kind === 'host' || op.spec.kind === 'host') await d.settled.catch(() => undefined);
    const failedDep = deps.find((d) => d.state === 'failed');
    if (failedDep) return this.#fail(op, new DependencyFailedError(`"${op.spec.name}" did not run: its dependency "${failedDep.spec.name}" failed`, { cause: failedDep.error }));
    try {
      if (op.spec.kind === 'host') {
        await op.spec.run(op.stream);
        op.state = 'done';
        this.#succeed(op);
        return;
      }
      const sh = op.stream.use();
      for (const d of deps) {
        // Same stream: stream order suffices. Completed: nothing to wait for (its event went back to the pool).
        if (d.stream === op.stream || d.spec.kind === 'host' || d.state === 'done' || d.event === undefined) continue;
        const status = cu().cuStreamWaitEvent(sh, d.event as never, 0);
        if (status !== 0) throw driverError(status, 'cuStreamWaitEvent', `"${op.spec.name}" after "${d.spec.name}"`);
      }
      this.pool.run(op.stream, op.spec.kind, () => op.spec.run(op.stream), op.spec.bytes !== undefined ? { bytes: op.spec.bytes, name: op.spec.name } : { name: op.spec.name });
      const events = op.stream.context.completionEvents;
      const event = events.acquire();
      const status = cu().cuEventRecord(event, sh);
      if (status !== 0) throw driverError(status, 'cuEventRecord', `"${op.spec.name}"`);
      op.event = event as unknown as bigint;
      op.state = 'enqueued';
      op.stream.context.completion.enqueue(sh ?? 0, event, () => {
        op.state = 'done';
        op.event = undefined;
        this.#succeed(op);
      }, (e) => this.#fail(op, e), events.recycle);
    } catch (e) {
      this.#fail(op, e instanceof Error ? e : new Error(String(e)));
    }
  }

  #succeed(op: Op): void {
    op.resolve();
    this.#completedUnreported.push(op.id);
    op.spec.onComplete?.();
  }

  #fail(op: Op, error: Error): void {
    op.state = 'failed';
    op.error = error;
    op.reject(error);
    this.#completedUnreported.push(op.id);
    op.spec.onComplete?.(error);
  }

  /** Operations that finished (or failed) since the last poll(); never blocks. */
  poll(): { id: number; name: string; error?: Error }[] {
    const out = this.#completedUnreported.map((id) => {
      const op = this.#ops.get(id)!;
      op.reported = true;
      return op.error ? { id, name: op.spec.name, error: op.error } : { id, name: op.spec.name };
    });
    this.#completedUnreported = [];
    return out;
  }

  /** Resolves when operation `ref` completes; rejects with its error (or its failed dependency's). */
  wait(ref: string | number): Promise<void> {
    return this.#ops.get(this.#id(ref))!.settled;
  }

  state(ref: string | number): Op['state'] {
    return this.#ops.get(this.#id(ref))!.state;
  }

  /** Runs `fn` on every stream of the pool at once and resolves when all of that work completes. */
  async executeParallel(fn: (stream: Stream, index: number) => void): Promise<void> {
    const streams = this.pool.streams;
    streams.forEach((s, i) => this.pool.run(s, 'other', () => fn(s, i)));
    await Promise.all(streams.map((s) => s.done()));
  }
}
