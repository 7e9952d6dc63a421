/**
 * QueueJobHandle: one submitted job as a client holds it. Its `result` promise settles from the
 * queue's events or, when events were missed (Redis was away), from the client's periodic look;
 * progress and status changes arrive as events.
 */
import { EventEmitter } from 'node:events';
import type { JobStatus } from '../engine/types.js';
import { UnknownQueueJobError } from './errors.js';
import type { QueueJobResult, QueueJobStatus, QueueJobView } from './outcome.js';

/** What a worker reports while it runs a job. */
export interface QueueJobProgress {
  /** `running`: a worker has taken the job and runs it on its engine (reported once per start). */
  phase: 'running';
  /** The worker's name. */
  worker: string;
  /** Which start of the job this is (1 the first; more after a retry). */
  attempt: number;
}

/** What the client behind a handle does for it. */
export interface HandleHost {
  view(): Promise<QueueJobView>;
  cancel(): Promise<boolean>;
  /** Someone waits for this handle (its result or events): watch the job until it settles. */
  watch(): void;
  /** The handle has settled: stop watching it. */
  forget(): void;
}

/**
 * A job in the queue; `result` settles once the job has finished on some worker. A `progress` or
 * `status` listener that throws stops neither the other listeners nor the result: its error goes
 * to the handle's `error` listeners when it has some, and is dropped otherwise (the events come
 * from the client's event reader and its reads of Redis, which go on for every other job).
 */
export class QueueJobHandle extends EventEmitter<{
  progress: [QueueJobProgress];
  status: [JobStatus];
  error: [unknown];
}> {
  /** The queue's id of the job: 128 random bits, usable from any client of the same queue. */
  readonly id: string;
  readonly #result: Promise<QueueJobResult>;
  #watched = false;
  /** When the client last heard of this job (Date.now()). */
  lastHeardAt = Date.now();
  #status: JobStatus = 'queued';
  #settled = false;
  #resolve!: (r: QueueJobResult) => void;
  #reject!: (e: unknown) => void;
  #onSettled: (() => void)[] = [];
  readonly #host: HandleHost;

  constructor(id: string, host: HandleHost) {
    super();
    this.id = id;
    this.#host = host;
    this.#result = new Promise<QueueJobResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A caller that never looks at a failed job must not crash the process with an unhandled rejection.
    this.#result.catch(() => undefined);
    this.on('newListener', (event) => {
      if (event === 'progress' || event === 'status') this.#watch();
    });
  }

  /**
   * Resolves with the result, or rejects with a QueueJobError (failed after its attempts), a
   * JobCancelledError, or a QueueUnavailableError (the client closed first). The client watches
   * the job from the first read of `result` (or the first listener) on, so a process that only
   * submits (an HTTP front) holds nothing per job.
   */
  get result(): Promise<QueueJobResult> {
    this.#watch();
    return this.#result;
  }

  #watch(): void {
    if (this.#watched || this.#settled) return;
    this.#watched = true;
    this.#host.watch();
  }

  /** The status last heard of (events); `status()` asks Redis. */
  get lastStatus(): JobStatus {
    return this.#status;
  }

  /** The job's status now, from Redis ('unknown' once it is no longer held). */
  async status(): Promise<QueueJobStatus> {
    const view = await this.#host.view();
    this.update(view);
    return view.status;
  }

  /** Cancels the job if no worker has taken it yet; true when it was. */
  cancel(): Promise<boolean> {
    return this.#host.cancel();
  }

  /** @internal The client's view of the job: settles the handle once it is finished. */
  update(view: QueueJobView): void {
    this.lastHeardAt = Date.now();
    if (view.status === 'ready' && view.result !== undefined) this.settle({ result: view.result });
    else if ((view.status === 'error' || view.status === 'cancelled') && view.error !== undefined)
      this.settle({ error: view.error });
    else if (view.status === 'queued' || view.status === 'running') this.setStatus(view.status);
    // Redis does not hold it (never submitted, removed, or lost with a Redis that kept no data): it will never finish.
    else if (view.status === 'unknown') this.settle({ error: view.error ?? new UnknownQueueJobError(this.id) });
  }

  /** @internal */
  setStatus(status: JobStatus): void {
    this.lastHeardAt = Date.now();
    if (this.#settled || status === this.#status) return;
    this.#status = status;
    this.#tell('status', status);
  }

  /** @internal A worker's progress report. */
  progress(data: unknown): void {
    this.lastHeardAt = Date.now();
    if (this.#settled || typeof data !== 'object' || data === null) return;
    this.setStatus('running');
    this.#tell('progress', data as QueueJobProgress);
  }

  /** Calls each listener of `event` on its own (see the class comment); `once` listeners are removed as emit() would. */
  #tell<E extends 'progress' | 'status'>(event: E, value: E extends 'status' ? JobStatus : QueueJobProgress): void {
    for (const listener of this.rawListeners(event))
      try {
        Reflect.apply(listener, this, [value]);
      } catch (error) {
        if (this.listenerCount('error') === 0) continue;
        try {
          this.emit('error', error);
        } catch {
          // An 'error' listener that throws too: nothing is left to report it to.
        }
      }
  }

  /** @internal Runs `fn` once the handle settles (at once if it has). */
  whenSettled(fn: () => void): void {
    if (this.#settled) fn();
    else this.#onSettled.push(fn);
  }

  /** @internal Settles `result` first, then tells the `status` listeners (whatever they do, the result is settled). */
  settle(outcome: { result: QueueJobResult } | { error: Error }): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#host.forget();
    for (const fn of this.#onSettled.splice(0)) fn();
    if ('result' in outcome) {
      this.#status = 'ready';
      this.#resolve(outcome.result);
    } else {
      this.#status = outcome.error.name === 'JobCancelledError' ? 'cancelled' : 'error';
      this.#reject(outcome.error);
    }
    this.#tell('status', this.#status);
  }
}
