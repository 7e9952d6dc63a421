/**
 * Dependency bookkeeping of the AsyncCoordinator, free of CUDA so that it is testable anywhere:
 * an operation completes once its own GPU work has finished and every dependency has
 * completed; a failure fails exactly the operations downstream of it.
 */
import { AsyncDependencyError, AsyncOperationError } from './errors.js';
import { RingQueue } from './batching/ring-queue.js';

export type AsyncOperationKind = 'upload' | 'compute' | 'download';
export type AsyncOperationId = number;
export type AsyncOperationStatus = 'pending' | 'completed' | 'failed';

/** What poll() reports for each operation that settled since the previous poll(). */
export interface SettledAsyncOperation {
  id: AsyncOperationId;
  kind: AsyncOperationKind;
  name: string;
  status: 'completed' | 'failed';
  error?: Error;
}

export interface OperationNode<P> {
  readonly id: AsyncOperationId;
  readonly kind: AsyncOperationKind;
  readonly name: string;
  readonly payload: P;
  status: AsyncOperationStatus;
  /** Its own GPU work has finished (its dependencies may not have settled yet). */
  workDone: boolean;
  /** Dependencies not yet completed. */
  waitingOn: number;
  dependents: OperationNode<P>[];
  waiters: { resolve: () => void; reject: (e: Error) => void }[] | null;
}

/** poll() reports at most this many settlements since the previous poll(); older ones are dropped. */
export const MAX_UNREPORTED = 1 << 16;
/** Errors of this many most recent failures are kept for wait(); older failures answer with a generic error. */
const MAX_RETAINED_ERRORS = 4096;

export class OperationGraph<P> {
  readonly label: string;
  #nextId = 1;
  readonly #pending = new Map<AsyncOperationId, OperationNode<P>>();
  readonly #failedIds = new Set<AsyncOperationId>();
  readonly #errors = new Map<AsyncOperationId, Error>();
  readonly #unreported = new RingQueue<SettledAsyncOperation>();

  constructor(label: string) {
    this.label = label;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Pending operations, oldest first. */
  pending(): IterableIterator<OperationNode<P>> {
    return this.#pending.values();
  }

  status(id: AsyncOperationId): AsyncOperationStatus {
    this.#checkIssued(id);
    if (this.#pending.has(id)) return 'pending';
    return this.#failedIds.has(id) ? 'failed' : 'completed';
  }

  /**
   * The pending operations among `ids` (completed ones need no waiting). Throws for an id
   * never issued, and with AsyncDependencyError (for operation `forId`) if one has failed.
   */
  resolveDependencies(ids: readonly AsyncOperationId[], forId: AsyncOperationId = this.#nextId): OperationNode<P>[] {
    const out: OperationNode<P>[] = [];
    for (const id of ids) {
      this.#checkIssued(id);
      if (this.#failedIds.has(id)) {
        throw new AsyncDependencyError(`${this.label}: operation ${forId} depends on operation ${id}, which failed`, forId, id, { cause: this.errorOf(id) });
      }
      const node = this.#pending.get(id);
      if (node !== undefined && !out.includes(node)) out.push(node);
    }
    return out;
  }

  /** The id the next add() will return. */
  get nextId(): AsyncOperationId {
    return this.#nextId;
  }

  add(kind: AsyncOperationKind, name: string, dependencies: readonly OperationNode<P>[], payload: P): OperationNode<P> {
    const node: OperationNode<P> = { id: this.#nextId++, kind, name, payload, status: 'pending', workDone: false, waitingOn: 0, dependents: [], waiters: null };
    for (const d of dependencies) {
      if (d.status === 'failed') throw new Error(`${this.label}: internal error, dependency ${d.id} already failed`);
      if (d.status === 'pending') {
        d.dependents.push(node);
        node.waitingOn++;
      }
    }
    this.#pending.set(node.id, node);
    return node;
  }

  /** The operation's own GPU work has finished. */
  workDone(node: OperationNode<P>): void {
    if (node.status !== 'pending' || node.workDone) return;
    node.workDone = true;
    if (node.waitingOn === 0) this.#complete(node);
  }

  /** Fails `node` and, transitively, every pending operation that depends on it. */
  fail(node: OperationNode<P>, error: Error): void {
    if (node.status !== 'pending') return;
    // Messages name the root failure, not the whole chain: a long chain would make them quadratic.
    const root = `operation ${node.id} failed: ${error.message}`;
    const work: [OperationNode<P>, Error][] = [[node, error]];
    for (let item = work.pop(); item !== undefined; item = work.pop()) {
      const [n, e] = item;
      if (n.status !== 'pending') continue;
      this.#settle(n, 'failed', e);
      for (const d of n.dependents) {
        if (d.status !== 'pending') continue;
        const via = n === node ? '' : ` (via operation ${n.id})`;
        work.push([d, new AsyncDependencyError(`${this.label}: operation ${d.id} (${d.kind} "${d.name}") cannot run: ${root}${via}`, d.id, n.id, { cause: e })]);
      }
      n.dependents = [];
    }
  }

  /** Resolves once operation `id` has completed; rejects if it (or anything it depends on) failed. */
  wait(id: AsyncOperationId): Promise<void> {
    try {
      this.#checkIssued(id);
    } catch (e) {
      return Promise.reject(e);
    }
    const node = this.#pending.get(id);
    if (node === undefined) return this.#failedIds.has(id) ? Promise.reject(this.errorOf(id)) : Promise.resolve();
    return new Promise<void>((resolve, reject) => (node.waiters ??= []).push({ resolve, reject }));
  }

  /** The settlements since the previous call, in the order they happened. */
  takeSettled(): SettledAsyncOperation[] {
    const out: SettledAsyncOperation[] = [];
    for (let s = this.#unreported.shift(); s !== undefined; s = this.#unreported.shift()) out.push(s);
    return out;
  }

  #complete(node: OperationNode<P>): void {
    const work = [node];
    for (let n = work.pop(); n !== undefined; n = work.pop()) {
      this.#settle(n, 'completed', undefined);
      for (const d of n.dependents) {
        if (d.status !== 'pending') continue;
        d.waitingOn--;
        if (d.waitingOn === 0 && d.workDone) work.push(d);
      }
      n.dependents = [];
    }
  }

  #settle(node: OperationNode<P>, status: 'completed' | 'failed', error: Error | undefined): void {
    node.status = status;
    this.#pending.delete(node.id);
    if (error !== undefined) {
      this.#failedIds.add(node.id);
      this.#errors.set(node.id, error);
      if (this.#errors.size > MAX_RETAINED_ERRORS) this.#errors.delete(this.#errors.keys().next().value!);
    }
    if (this.#unreported.length >= MAX_UNREPORTED) this.#unreported.shift();
    this.#unreported.push(error === undefined ? { id: node.id, kind: node.kind, name: node.name, status } : { id: node.id, kind: node.kind, name: node.name, status, error });
    const waiters = node.waiters;
    node.waiters = null;
    if (waiters === null) return;
    for (const w of waiters) {
      if (error === undefined) w.resolve();
      else w.reject(error);
    }
  }

  /** The error of a failed operation. */
  errorOf(id: AsyncOperationId): Error {
    return this.#errors.get(id) ?? new AsyncOperationError(`${this.label}: operation ${id} failed (its error is no longer retained)`, id);
  }

  #checkIssued(id: AsyncOperationId): void {
    if (!Number.isSafeInteger(id) || id < 1 || id >= this.#nextId) throw new RangeError(`${this.label}: there is no operation ${String(id)}`);
  }
}
