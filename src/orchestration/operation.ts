import type { CUevent } from '../ffi/generated/types.js';
import type { OperationKind } from '../report/timeline.js';
import type { Stream } from '../runtime/stream.js';
import { DependencyFailedError } from './errors.js';
import { shownValue } from '../runtime/value-checks.js';
import type { StreamPurpose, WorkloadType } from './strategy.js';

export { DependencyFailedError } from './errors.js';

/** One operation of a Coordinator: what it runs, where, and after what. */
export interface OperationSpec {
  /** Unique among the Coordinator's unsettled operations; used in errors, cycle messages and the timeline. */
  name: string;
  /** What the operation is (metrics, timeline). A host step is kind 'host'. */
  kind: OperationKind;
  /**
   * GPU work: enqueues on `stream` and returns (synchronously; the GPU runs it later).
   * A host step (kind 'host'): runs on the host once its dependencies have completed, and may
   * return a promise; its dependents are enqueued after it settles.
   */
  run: (stream: Stream) => void | Promise<void>;
  /** Default: the pool's choice for `purpose` / `workload`. Any live stream of the pool's context. */
  stream?: Stream | undefined;
  purpose?: StreamPurpose | undefined;
  workload?: WorkloadType | undefined;
  /** Bytes moved or touched (metrics, timeline). */
  bytes?: number | undefined;
  /** Names or ids of operations this one runs after. */
  after?: readonly (string | number)[] | undefined;
  /** Called once the operation has completed, or failed (with the error). */
  onComplete?: ((error?: Error) => void) | undefined;
  /** Host steps: fail with OperationTimeoutError if the step has not settled this many ms after it started. */
  timeoutMs?: number | undefined;
  /** Host steps: fail (with the signal's reason) when this aborts before the step settles. */
  signal?: AbortSignal | undefined;
  /** Bracket the work in the pool's profiler (default true). */
  profile?: boolean | undefined;
}

/** Every OperationKind, for the check of `kind` (the Record makes a new kind fail to compile until listed). */
export const OPERATION_KINDS = Object.keys({
  upload: true,
  download: true,
  copy: true,
  kernel: true,
  fft: true,
  memset: true,
  host: true,
  alloc: true,
  other: true,
} satisfies Record<OperationKind, true>);

/**
 * Checks the fields of a spec the Coordinator only reads later, at add(): an unknown kind was
 * counted as neither transfer nor launch, a negative `bytes` skewed the pool's peak, and an
 * onComplete that is not a function threw only once the operation settled, far from the call.
 * `what` names the operation in the messages.
 */
export function checkSpecFields(spec: OperationSpec, what: string): void {
  if (!OPERATION_KINDS.includes(spec.kind))
    throw new TypeError(`${what}: kind must be one of ${OPERATION_KINDS.join(', ')}; got ${shownValue(spec.kind)}`);
  if (spec.bytes !== undefined && !(typeof spec.bytes === 'number' && Number.isFinite(spec.bytes) && spec.bytes >= 0))
    throw new RangeError(`${what}: bytes must be a finite number >= 0, got ${shownValue(spec.bytes)}`);
  if (spec.onComplete !== undefined && typeof spec.onComplete !== 'function')
    throw new TypeError(`${what}: onComplete must be a function, got ${shownValue(spec.onComplete)}`);
}

/**
 * pending: added, not started; waiting: started but held by dependencies; enqueued: GPU work
 * submitted; running: a host step in progress; completed / failed: settled; captured: recorded
 * into a Graph by Coordinator.capture() instead of running.
 */
export type OperationState = 'pending' | 'waiting' | 'enqueued' | 'running' | 'completed' | 'failed' | 'captured';

/** What poll() reports for each operation that settled since the previous poll(). */
export interface SettledOperation {
  id: number;
  name: string;
  kind: OperationKind;
  status: 'completed' | 'failed';
  error?: Error | undefined;
}

/** @deprecated the name before issue 9; use SettledOperation. */
export type CompletedOperation = SettledOperation;

/** The Coordinator's record of one operation. */
export class Operation {
  state: OperationState = 'pending';
  error: Error | undefined;
  /** Recorded behind the GPU work while it is pending: what dependents on other streams wait on. */
  event: CUevent | undefined;
  /** Dependencies, held by reference so that forgetting a settled record never loses its outcome. */
  readonly after: Operation[] = [];
  /** Operations started after this one that depend on it: failed with it, released by its completion. */
  dependents: Operation[] = [];
  /** GPU dependents held until this one's work is enqueued. */
  waitingForLaunch: Operation[] = [];
  /** Dependents held until this one has completed (host steps, and anything after a host step). */
  waitingForCompletion: Operation[] = [];
  /** Dependencies not yet far enough along for this one to start. */
  blockers = 0;
  /** Dependencies not yet completed: the operation completes only after all of them. */
  unfinished = 0;
  /** Its own work has finished (it completes once `unfinished` reaches 0). */
  workDone = false;
  /** Clears a host step's timeout / abort listener. */
  cancelGuard: (() => void) | undefined;
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
    return this.state === 'completed' || this.state === 'failed' || this.state === 'captured';
  }

  /**
   * Whether `dependent` may start now as far as this dependency goes: a GPU dependent needs its
   * GPU dependencies enqueued (the event orders the rest) and host ones finished; a host step
   * needs all its dependencies completed.
   */
  satisfies(dependent: Operation): boolean {
    if (this.state === 'completed' || this.state === 'captured') return true;
    return this.state === 'enqueued' && !dependent.isHost && !this.isHost;
  }

  resolve(): void {
    this.#resolve();
  }

  reject(error: Error): void {
    this.#reject(error);
  }

  /** The failure a dependent of this (failed) operation gets. */
  dependencyFailure(dependent: Operation): DependencyFailedError {
    return new DependencyFailedError(dependent.name, this.name, this.error!, {
      operationId: dependent.id,
      dependencyId: this.id,
    });
  }
}
