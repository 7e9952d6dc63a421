/**
 * One request inside the fuser: the Job its caller holds. It waits in a fusion window, then rides
 * in a fused engine job, and is answered on its own with its own rows of that job's result. Its
 * deadline and cancellation are its own: a request that times out or is cancelled settles alone,
 * leaving the others to finish. CUDA-free.
 */
import { JobCancelledError, JobTimeoutError } from '../../engine/errors.js';
import type { Job, JobData, JobDataType, JobOutputArrays, JobResult, JobSpec, JobStatus } from '../../engine/types.js';
import type { NormalizedJob } from '../../engine/validate.js';

/** What a request tells the window or fused job it is in when it settles on its own (timeout, cancel). */
export interface RequestHolder {
  /** `request` settled before its share of the result came (timed out, cancelled). */
  settledAlone(request: FusedRequest): void;
}

/** A request of the fuser, seen by its caller as a Job. */
export class FusedRequest implements Job {
  readonly id: number;
  readonly label: string | undefined;
  readonly result: Promise<JobResult>;
  readonly released: Promise<void>;
  /** The caller's spec (its parameters run the fused job when it comes first). */
  readonly spec: JobSpec;
  /** Its samples, as validated (an f16 Float16Array is seen as its bits). */
  readonly data: JobData;
  /** The samples' type, as validated. */
  readonly dtype: JobDataType;
  /** Series, and result bytes the engine would allocate for this request alone. */
  readonly rows: number;
  readonly resultBytes: number;
  readonly into: JobOutputArrays;
  /** Where it is: the window it waits in, then the fused job it runs in. */
  holder: RequestHolder | null = null;
  #status: JobStatus | 'waiting' | 'submitted' = 'waiting';
  #engineJob: Job | null = null;
  #timer: NodeJS.Timeout | undefined;
  #resolve!: (result: JobResult) => void;
  #reject!: (error: unknown) => void;
  #release!: () => void;

  constructor(id: number, spec: JobSpec, job: NormalizedJob, resultBytes: number) {
    this.id = id;
    this.label = spec.label;
    this.spec = spec;
    this.data = job.data;
    this.dtype = job.dtype;
    this.rows = job.batch;
    this.resultBytes = resultBytes;
    this.into = job.into;
    this.result = new Promise<JobResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.released = new Promise<void>((resolve) => (this.#release = resolve));
    const timeoutMs = job.timeoutMs;
    // As the engine's: the deadline counts from submit, and the request fails at it wherever it is.
    if (timeoutMs !== undefined) this.#timer = setTimeout(() => this.#timedOut(timeoutMs), timeoutMs);
  }

  /** queued while it waits in its window or its fused job is queued; then as the fused job, until it settles on its own. */
  get status(): JobStatus {
    if (this.#status === 'waiting') return 'queued';
    if (this.#status === 'submitted') return this.#engineJob!.status;
    return this.#status;
  }

  /** Whether it has its answer (a result or an error). */
  get settled(): boolean {
    return this.#status !== 'waiting' && this.#status !== 'submitted';
  }

  /** Its window was submitted as `engineJob`: its memory is the engine's until that job is released. */
  submitted(engineJob: Job, holder: RequestHolder): void {
    this.#engineJob = engineJob;
    this.holder = holder;
    if (this.settled) return;
    this.#status = 'submitted';
  }

  /** Answers with its share of the fused result. */
  answer(result: JobResult): void {
    if (!this.#settle('ready')) return;
    this.#resolve(result);
  }

  /** Answers with the fused job's error (the same error for every request of the job). */
  fail(error: unknown): void {
    if (!this.#settle(error instanceof JobCancelledError ? 'cancelled' : 'error')) return;
    this.#reject(error);
  }

  /**
   * Cancels the request while it waits in its window or its fused job is still queued (the job then
   * runs for the others, or is cancelled once no request of it is left); false once running.
   */
  cancel(): boolean {
    if (this.settled || (this.#status === 'submitted' && this.#engineJob!.status !== 'queued')) return false;
    this.#alone('cancelled', new JobCancelledError(this.id));
    return true;
  }

  #timedOut(timeoutMs: number): void {
    this.#timer = undefined;
    if (this.settled) return;
    this.#alone(
      'error',
      new JobTimeoutError(this.id, timeoutMs, this.#status === 'submitted' && this.#engineJob!.status === 'running'),
    );
  }

  /** Settles without the fused job (timeout, cancel) and tells its holder, which drops it. */
  #alone(status: 'error' | 'cancelled', error: Error): void {
    this.#settle(status);
    this.#reject(error);
    this.holder?.settledAlone(this);
  }

  /** Marks it settled once; its memory is released then, or when its fused job's engine job is. */
  #settle(status: 'ready' | 'error' | 'cancelled'): boolean {
    if (this.settled) return false;
    this.#status = status;
    clearTimeout(this.#timer);
    // The engine reads the samples (or the stacked copy) and writes `into` until its job is released.
    if (this.#engineJob === null) this.#release();
    else void this.#engineJob.released.then(this.#release);
    return true;
  }
}
