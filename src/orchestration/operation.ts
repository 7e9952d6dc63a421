import type { CUevent } from '../ffi/generated/types.js';
import type { OperationKind } from '../report/timeline.js';
import type { Stream } from '../runtime/stream.js';
import type { StreamPurpose, WorkloadType } from './strategy.js';

export interface OperationSpec {
  /** Unique within its Coordinator; used in errors, cycle messages and the timeline. */
  name: string;
  /** What the operation is (metrics, timeline). A host step is kind 'host'. */
  kind: OperationKind;
  /**
   * GPU work: enqueues on `stream` and returns (synchronously; the GPU runs it later).
   * A host step (kind 'host'): runs on the host once its dependencies have completed, and may
   * return a promise; its dependents are enqueued after it settles.
   */
  run: (stream: Stream) => void | Promise<void>;
  /** Default: the pool's choice for `purpose` / `workload`. */
  stream?: Stream;
  purpose?: StreamPurpose;
  workload?: WorkloadType;
  /** Bytes moved or touched (metrics, timeline). */
  bytes?: number;
  /** Names or ids of operations this one runs after. */
  after?: readonly (string | number)[];
  /** Called once the operation has completed, or failed (with the error). */
  onComplete?: (error?: Error) => void;
}

/**
 * pending: not started; waiting: started by run() but held by dependencies; enqueued: GPU work
 * submitted; running: a host step in progress; done / failed: settled; captured: recorded into
 * a Graph by Coordinator.capture() instead of running.
 */
export type OperationState = 'pending' | 'waiting' | 'enqueued' | 'running' | 'done' | 'failed' | 'captured';

export interface CompletedOperation {
  id: number;
  name: string;
  error?: Error;
}

/** A dependent that did not run because something it depends on failed; `cause` is that failure. */
export class DependencyFailedError extends Error {
  override readonly name = 'DependencyFailedError';
  /** The failure that started the chain (not a DependencyFailedError). */
  readonly root: Error;
  constructor(operation: string, dependency: string, cause: Error) {
    const root = cause instanceof DependencyFailedError ? cause.root : cause;
    super(`"${operation}" did not run: its dependency "${dependency}" failed${cause === root ? '' : ` (because of: ${root.message})`}`, { cause });
    this.root = root;
  }
}

/** The Coordinator's record of one operation. */
export class Operation {
  state: OperationState = 'pending';
  error: Error | undefined;
  /** Recorded behind the GPU work while it is pending: what dependents on other streams wait on. */
  event: CUevent | undefined;
  /** Dependencies, resolved when a run starts the operation. */
  deps: Operation[] = [];
  /** Operations started after this one that depend on it: failed with it if it fails. */
  dependents: Operation[] = [];
  /** GPU dependents held until this one's work is enqueued. */
  waitingForLaunch: Operation[] = [];
  /** Dependents held until this one has completed (host steps, and anything after a host step). */
  waitingForCompletion: Operation[] = [];
  /** Dependencies not yet far enough along for this one to start. */
  blockers = 0;
  readonly settled: Promise<void>;
  #resolve!: () => void;
  #reject!: (e: Error) => void;

  constructor(
    readonly id: number,
    readonly spec: OperationSpec,
    readonly stream: Stream,
    /** Marks the no-op operation barrier() adds: lowered to events only, not counted as work. */
    readonly barrier = false,
  ) {
    this.settled = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // wait() hands the promise out; an unobserved failure is reported by run(), not as unhandled.
    this.settled.catch(() => undefined);
  }

  get name(): string {
    return this.spec.name;
  }

  get isHost(): boolean {
    return this.spec.kind === 'host';
  }

  get isSettled(): boolean {
    return this.state === 'done' || this.state === 'failed' || this.state === 'captured';
  }

  /**
   * Whether `dependent` may start now as far as this dependency goes: a GPU dependent needs its
   * GPU dependencies enqueued (the event orders the rest) and host ones finished; a host step
   * needs all its dependencies completed.
   */
  satisfies(dependent: Operation): boolean {
    if (this.state === 'done' || this.state === 'captured') return true;
    return this.state === 'enqueued' && !dependent.isHost;
  }

  resolve(): void {
    this.#resolve();
  }

  reject(error: Error): void {
    this.#reject(error);
  }
}
