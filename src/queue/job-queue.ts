/**
 * JobQueue: the client side of the queue. `submit()` checks a job with the engine's own
 * validation (a job the engine would refuse never enters the queue), stores its samples under a
 * Redis key, adds it to BullMQ with an unguessable id, and hands back a QueueJobHandle whose
 * `result` settles when some worker, on any host, has run it. Any JobQueue over the same Redis
 * and queue name answers any id (`view`, `job`, `cancel`): nothing is kept in this process that
 * another one would need.
 */
import { Job as BullJob, Queue, type ConnectionOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobSpec } from '../engine/types.js';
import type { WireJob } from './codec.js';
import { BlobStores } from './blob-stores.js';
import { Admission, ledgerKeys } from './admission.js';
import { createRedis, describeConnection, settlesWithin } from './connection.js';
import { QueueFullError, QueueJobCancelledError, QueueUnavailableError } from './errors.js';
import { checkJobId, isQueueJobId, newJobId } from './job-ids.js';
import { CONNECT_WAIT_MS, OperationBound } from './operation-bound.js';
import { startSweep } from './sweep.js';
import { QueueJobHandle } from './handle.js';
import { BlobKeys, RETRY_BACKOFF_MS } from './options.js';
import { checkSubmission, wireJob } from './submission.js';
import { notQueued, storeAndAdd } from './enqueue.js';
import { JobWatcher } from './job-watcher.js';
import {
  resolveQueueOptions,
  resolveSubmitOptions,
  type JobQueueOptions,
  type QueueCounts,
  type ResolvedQueueOptions,
  type SubmitOptions,
} from './job-queue-options.js';
import { LiveHandles } from './live-handles.js';
import { readCounts, readOutcome, type QueueJobResult, type QueueJobView } from './outcome.js';
import { clip } from '../runtime/value-checks.js';

/** A submit's bound grows by 1 ms per this many bytes of samples (1 s per 64 MiB): their transfer is not a stall. */
const TRANSFER_BYTES_PER_MS = (64 * 2 ** 20) / 1000;

/** How long close() waits for BullMQ's connections to close before dropping them, ms. */
const CLOSE_WAIT_MS = 2000;

export { newJobId };

/** The client of a queue of engine jobs over Redis. */
export class JobQueue {
  /** The queue's name and prefix (workers must use the same). */
  readonly name: string;
  readonly prefix: string;
  /** The options, checked, with their defaults. */
  readonly #options: ResolvedQueueOptions;
  readonly #stores: BlobStores;
  readonly #queue: Queue;
  readonly #queueRedis: Redis;
  readonly #watcher: JobWatcher;
  readonly #keys: BlobKeys;
  readonly #live = new LiveHandles();
  readonly #admission: Admission;
  readonly #bound: OperationBound;
  readonly #stopSweep: () => void;
  /** The rate limit's store in Redis, once under way (undefined again after a failure, so the next submit retries). */
  #rateLimitStored: Promise<void> | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Aborted by close(): a wait for Redis ends at once (the connections it waits on are being dropped). */
  readonly #closeSignal = new AbortController();

  constructor(options: JobQueueOptions) {
    const o = resolveQueueOptions(options);
    this.#options = o;
    this.name = o.name;
    this.prefix = o.prefix;
    this.#keys = new BlobKeys(this.prefix, this.name);
    // Bounded clients: a command fails while the connection is down or after commandTimeoutMs, never waits for Redis.
    const patience = { kind: 'bounded', commandTimeoutMs: o.commandTimeoutMs } as const;
    this.#stores = new BlobStores(o.blobStores, `${this.prefix}:${this.name}:client`, o.blobConnections, patience);
    // BullMQ leaves a connection it was given open (it may be shared): close() disconnects it.
    this.#queueRedis = createRedis(o.connection, `${this.prefix}:${this.name}:queue`, patience);
    this.#admission = new Admission(this.#queueRedis, ledgerKeys(this.prefix, this.name));
    this.#bound = new OperationBound({
      name: this.name,
      where: this.where,
      queueRedis: this.#queueRedis,
      stores: this.#stores,
      commandTimeoutMs: o.commandTimeoutMs,
      closeSignal: this.#closeSignal.signal,
    });
    this.#queue = new Queue(this.name, {
      connection: this.#queueRedis as unknown as ConnectionOptions,
      prefix: this.prefix,
    });
    this.#queue.on('error', () => undefined);
    const { name, prefix } = this;
    const [connection, queue, stores, queueRedis, pollIntervalMs] = [
      o.connection,
      this.#queue,
      this.#stores,
      this.#queueRedis,
      o.pollIntervalMs,
    ];
    const startWaitMs = Math.min(CONNECT_WAIT_MS, o.commandTimeoutMs);
    this.#watcher = new JobWatcher({
      name,
      prefix,
      connection,
      queue,
      queueRedis,
      stores,
      pollIntervalMs,
      startWaitMs,
      view: (id) => this.view(id),
    });
    this.#stopSweep = startSweep(queue, o.inputTtlMs, () => this.reachable);
  }

  /** Where Redis is, for messages (no password). */
  get where(): string {
    return describeConnection(this.#options.connection);
  }

  /**
   * Whether Redis answers now: the connections are up and the last probe (a PING every half
   * `commandTimeoutMs`, at most every second) or operation was answered within `commandTimeoutMs`.
   * A readiness probe reads this.
   */
  get reachable(): boolean {
    return !this.#closed && this.#bound.reachable;
  }

  /** Resolves once Redis answers and the rate limit is stored; rejects with QueueUnavailableError when that takes more than `commandTimeoutMs`. */
  async ready(): Promise<void> {
    await this.#bound.run('waiting for Redis', async () => {
      await this.#queue.waitUntilReady();
      await this.#storeRateLimit();
      // Answered, not only connected: a stopped Redis keeps its connections.
      await this.#queueRedis.ping();
    });
  }

  /** Stores the rate limit in Redis, once (submit() does before its first add: a limit is in force whether or not ready() was awaited). */
  #storeRateLimit(): Promise<void> {
    const limit = this.#options.rateLimit;
    if (limit === undefined) return Promise.resolve();
    this.#rateLimitStored ??= this.#queue.setGlobalRateLimit(limit.max, limit.durationMs).then(
      () => undefined,
      (error: unknown) => {
        this.#rateLimitStored = undefined;
        throw error;
      },
    );
    return this.#rateLimitStored;
  }

  /** Pings Redis within `timeoutMs`: true when it answered. */
  async ping(timeoutMs = 1000): Promise<boolean> {
    return this.reachable && (await this.#bound.probe(timeoutMs));
  }

  /**
   * Checks `spec` as the engine would, stores its samples and queues it. Throws at once, queuing
   * nothing: JobValidationError (a bad field), ResultTooLargeError (the estimated result is over
   * maxResultBytes), QueueUnavailableError (Redis is not reachable now, or the client is closed),
   * QueueFullError (`maxWaitingJobs` or `maxWaitingBytes` reached, or Redis out of memory),
   * TypeError or RangeError (bad options, naming the option).
   * Also QueueUnavailableError when storing or queuing fails midway, or Redis does not answer
   * within `commandTimeoutMs` (plus 1 s per 64 MiB of samples): the job is then removed, or failed
   * with the reason, and no worker runs it (a job runs only if this resolved; a job that Redis took
   * after the bound is withdrawn once it answers, unless a worker took it in that moment).
   * The samples are sent from `spec.data` itself (no copy): leave it unchanged until this resolves.
   */
  async submit(spec: JobSpec, options: SubmitOptions = {}): Promise<QueueJobHandle> {
    if (this.#closed) throw new QueueUnavailableError(`queue ${this.name} is closed`);
    const o = this.#options;
    const { priority, attempts } = resolveSubmitOptions(options, o.attempts);
    const checked = checkSubmission(spec, o);
    if (checked.signal?.aborted === true) {
      // As the engine does: a job whose signal is already aborted is cancelled, never queued.
      const handle = this.#handle(newJobId(), undefined);
      handle.settle({ error: new QueueJobCancelledError(handle.id) });
      return handle;
    }
    const { signal } = checked;
    const id = newJobId();
    const { wire, samples } = wireJob(checked, this.#keys.input(id), this.#stores.count, o);
    let gaveUp = false;
    const enqueue = (): Promise<void> => {
      const work = this.#enqueue(id, wire, samples, priority, attempts);
      // Redis answered after the bound (it was stopped, or slow): the job is withdrawn, since its submit rejected.
      work.then(
        () => void (gaveUp && this.#withdraw(id, wire.inputKey)),
        () => undefined,
      );
      return work;
    };
    try {
      await this.#bound.run('nothing was queued', enqueue, Math.ceil(samples.byteLength / TRANSFER_BYTES_PER_MS));
    } catch (error) {
      gaveUp = true;
      throw error;
    }
    const handle = this.#handle(id, this.#watcher.mark());
    if (signal !== undefined) {
      // The cancel may fail (the job ran meanwhile, the client closed): never an unhandled rejection.
      const onAbort = (): void => void handle.cancel().catch(() => undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      handle.whenSettled(() => signal.removeEventListener('abort', onAbort));
    }
    return handle;
  }

  /**
   * Admits job `id` (the ledger of waiting jobs and bytes, admission.ts), stores its samples and
   * adds it. Throws QueueFullError past a limit, QueueUnavailableError when a step fails (what was
   * stored is removed).
   */
  async #enqueue(id: string, wire: WireJob, samples: Buffer, priority: number, attempts: number): Promise<void> {
    const o = this.#options;
    // The first submit pins where the events are read from, so this job's events are not missed.
    const admitted = await Promise.allSettled([
      this.#admission.admit(id, samples.byteLength, o.inputTtlMs, o.maxWaitingJobs, o.maxWaitingBytes),
      this.#storeRateLimit(),
      this.#watcher.listen(),
    ]).then(([admit, limit]) => {
      if (admit.status === 'fulfilled' && admit.value === null && limit.status === 'rejected')
        void this.#admission.leave(id).catch(() => undefined);
      if (admit.status === 'rejected') {
        // Refused by its timeout, the admission may still run once Redis reads it: its entry must not hold a place for inputTtlMs.
        void this.#admission.leave(id).catch(() => undefined);
        throw notQueued(this, admit.reason);
      }
      if (limit.status === 'rejected') throw notQueued(this, limit.reason);
      return admit.value;
    });
    if (admitted !== null) {
      const [what, unit] =
        admitted.limit === 'jobs' ? ['jobs wait', 'maxWaitingJobs'] : ['bytes of samples wait', 'maxWaitingBytes'];
      throw new QueueFullError(
        `queue ${this.name} is full: ${admitted.waiting} ${what} for a worker (${unit} = ${admitted.max}); nothing was queued, retry later`,
      );
    }
    const keepS = Math.ceil(o.resultTtlMs / 1000);
    const blobs = this.#stores.forJob(id);
    const add = (): Promise<unknown> =>
      this.#queue.add('job', wire, {
        jobId: id,
        priority,
        attempts,
        backoff: { type: 'exponential', delay: RETRY_BACKOFF_MS },
        removeOnComplete: { age: keepS },
        removeOnFail: { age: keepS },
      });
    try {
      await storeAndAdd(
        { name: this.name, where: this.where, queue: this.#queue, blobs, inputTtlMs: o.inputTtlMs },
        id,
        wire,
        samples,
        add,
      );
    } catch (error) {
      // A command refused by its timeout may still run once Redis answers (a stopped Redis reads
      // its socket later): the removal follows it on the same connection, so no job outlives a
      // submit that rejected.
      // (The samples are storeAndAdd's: a marker a worker left there must stay.)
      this.#withdraw(id, undefined);
      throw error;
    }
  }

  /**
   * Removes job `id` and its ledger entry, and its samples under `inputKey` when given: a job whose
   * submit rejected but that Redis may still take (best effort; a worker that took it in that
   * moment runs it).
   */
  #withdraw(id: string, inputKey: string | undefined): void {
    void this.#queue.remove(id).catch(() => undefined);
    if (inputKey !== undefined)
      void this.#stores
        .forJob(id)
        .control.del(inputKey)
        .catch(() => undefined);
    void this.#admission.leave(id).catch(() => undefined);
  }

  /**
   * A handle on job `id` (submitted by any client); its `result` settles once the job does. While
   * this client holds an unsettled handle on `id` (from submit() or an earlier call), that one.
   */
  job(id: string): QueueJobHandle {
    checkJobId('job', id);
    return this.#live.get(id) ?? this.#handle(id, undefined);
  }

  /** A handle on `id`; `mark` (taken right after this client added the job) spares it a look at Redis when it starts watching. */
  #handle(id: string, mark: number | undefined): QueueJobHandle {
    const handle: QueueJobHandle = new QueueJobHandle(id, {
      view: () => this.view(id),
      cancel: () => this.cancel(id),
      watch: () => {
        if (this.#closed) return handle.settle({ error: new QueueUnavailableError(`queue ${this.name} is closed`) });
        this.#watcher.watch(handle, mark);
      },
      forget: () => this.#watcher.forget(handle),
    });
    this.#live.add(handle);
    return handle;
  }

  /** Job `id` as any client sees it: its status, and its result or error once finished. An id of a shape submit() never makes is 'unknown' without asking Redis. */
  async view(id: string): Promise<QueueJobView> {
    checkJobId('view', id);
    if (!this.#closed && !isQueueJobId(id)) return { id, status: 'unknown', attempts: 0 };
    return this.#bound.run(`reading job ${clip(id)}`, () =>
      readOutcome(this.#queue, this.#stores.forJob(id), this.#keys, id),
    );
  }

  /** Cancels job `id` if no worker has taken it: true when it was cancelled (its result then rejects with a JobCancelledError). */
  async cancel(id: string): Promise<boolean> {
    checkJobId('cancel', id);
    if (!this.#closed && !isQueueJobId(id)) return false;
    return this.#bound.run(`cancelling job ${clip(id)}`, async (abandoned) => {
      const job = await BullJob.fromId(this.#queue, id);
      if (job === undefined) return false;
      const state = await job.getState();
      // The call already said Redis was unavailable: the job stays as it is.
      if (abandoned.aborted || (state !== 'waiting' && state !== 'prioritized' && state !== 'delayed')) return false;
      // remove() refuses a job a worker has locked meanwhile (0), so a running job is never cancelled.
      if ((await this.#queue.remove(id)) !== 1) return false;
      const store = this.#stores.forJob(id).control;
      await store.set(this.#keys.cancelled(id), '1', 'PX', this.#options.resultTtlMs);
      await Promise.all([store.del((job.data as WireJob).inputKey), this.#admission.leave(id)]);
      this.#live.get(id)?.settle({ error: new QueueJobCancelledError(id) });
      return true;
    });
  }

  /** Removes a finished job and its result (a DELETE of a finished job): true when there was one. */
  async forget(id: string): Promise<boolean> {
    checkJobId('forget', id);
    if (!this.#closed && !isQueueJobId(id)) return false;
    return this.#bound.run(`forgetting job ${clip(id)}`, async (abandoned) => {
      const job = await BullJob.fromId(this.#queue, id);
      const store = this.#stores.forJob(id).control;
      if (abandoned.aborted) return false;
      if (job === undefined) return (await store.del(this.#keys.cancelled(id))) > 0;
      const state = await job.getState();
      if (abandoned.aborted || (state !== 'completed' && state !== 'failed')) return false;
      const resultKey = (job.returnvalue as { resultKey?: unknown } | null)?.resultKey;
      await this.#queue.remove(id);
      if (typeof resultKey === 'string') await store.del(resultKey);
      return true;
    });
  }

  /** Jobs by state: the queue's depth is waiting + prioritized + delayed. */
  counts(): Promise<QueueCounts> {
    return this.#bound.run('counting jobs', () => readCounts(this.#queue));
  }

  /**
   * Stops listening and closes the connections; pending handles reject with QueueUnavailableError,
   * and so does a submit still waiting for Redis. Jobs already queued stay queued. Every call
   * returns the same promise: a second one resolves when the connections are closed too.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#closeSignal.abort();
    this.#bound.close();
    this.#stopSweep();
    // Bounded: with Redis away, BullMQ's close would wait for it; nothing is left to flush.
    const unavailable = (handle: QueueJobHandle): Error =>
      new QueueUnavailableError(`queue ${this.name}: the client was closed before job ${clip(handle.id)} finished`);
    await settlesWithin(
      Promise.allSettled([this.#watcher.close(unavailable, CLOSE_WAIT_MS), this.#queue.close()]),
      CLOSE_WAIT_MS,
    );
    void this.#queue.disconnect().catch(() => undefined);
    this.#stores.disconnect();
    this.#queueRedis.disconnect();
  }
}

export type { JobQueueOptions, QueueCounts, QueueJobResult, QueueJobView, SubmitOptions };
