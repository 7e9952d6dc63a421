/**
 * A submitted job as the engine tracks it: its status, its result promise and its timers. The
 * engine core drives the transitions; callers see it through the `Job` interface. CUDA-free.
 */
import type { Job, JobResult, JobStatus } from './types.js';
import type { NormalizedJob } from './validate.js';

/** A job's record: the `Job` callers hold plus what the core needs to run and settle it. */
export class JobRecord implements Job {
  readonly id: number;
  readonly label: string | undefined;
  readonly spec: NormalizedJob;
  readonly result: Promise<JobResult>;
  readonly released: Promise<void>;
  readonly submittedAt = performance.now();
  startedAt = Number.NaN;
  #status: JobStatus = 'queued';
  #resolve!: (r: JobResult) => void;
  #reject!: (e: unknown) => void;
  #release!: () => void;
  readonly #cancel: (job: JobRecord) => boolean;
  /** Cleanups run when the job settles (timer, abort listener). */
  readonly #cleanups: (() => void)[] = [];

  constructor(id: number, spec: NormalizedJob, cancel: (job: JobRecord) => boolean) {
    this.id = id;
    this.label = spec.label;
    this.spec = spec;
    this.#cancel = cancel;
    this.result = new Promise<JobResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A caller that never looks at a failed job must not crash the process with an unhandled rejection.
    this.result.catch(() => {});
    this.released = new Promise<void>((resolve) => (this.#release = resolve));
  }

  get status(): JobStatus {
    return this.#status;
  }

  /** Ready, error or cancelled: the result promise has settled. */
  get settled(): boolean {
    return this.#status === 'ready' || this.#status === 'error' || this.#status === 'cancelled';
  }

  cancel(): boolean {
    return this.#cancel(this);
  }

  /** Runs `fn` when the job settles (or now, if it has). */
  onSettle(fn: () => void): void {
    if (this.settled) fn();
    else this.#cleanups.push(fn);
  }

  /** The engine is done with the job's memory (its lane's run has ended); see Job.released. */
  markReleased(): void {
    this.#release();
  }

  markRunning(): void {
    this.#status = 'running';
    this.startedAt = performance.now();
  }

  resolve(result: JobResult): boolean {
    if (this.settled) return false;
    if (this.#status !== 'running') this.#release(); // never on a lane: nothing of it is in use
    this.#status = 'ready';
    this.#settle();
    this.#resolve(result);
    return true;
  }

  reject(error: unknown, status: 'error' | 'cancelled' = 'error'): boolean {
    if (this.settled) return false;
    if (this.#status !== 'running') this.#release(); // never on a lane: nothing of it is in use
    this.#status = status;
    this.#settle();
    this.#reject(error);
    return true;
  }

  #settle(): void {
    for (const fn of this.#cleanups.splice(0)) fn();
  }
}
