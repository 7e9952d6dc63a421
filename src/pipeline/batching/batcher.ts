/**
 * Batcher: packs many small concurrent submits into batches for one dispatch call each
 * (a kernel launch, a cuFFT plan execution), and routes each batch's outputs back to the
 * submits they came from.
 *
 * The hot path allocates per submit (one request, one promise) and per batch, never per
 * item: a batch remembers which requests it holds as (request, offset, length) segments.
 */
import { AutoTuner } from './auto-tuner.js';
import { SubmitChannel } from './channel.js';
import { boundedDrain, checkCloseOptions } from './close.js';
import { batchFailure, BatcherClosedError, BatcherFullError, outputsMismatch } from './errors.js';
import { callDispatch } from './dispatch-call.js';
import { resolveBatcherOptions, submitOptionsError, type BatcherDescriptor } from './options.js';
import { Batch, BatchInfoRecord, PendingSubmit, resolveFlushWaiters, type FlushWaiter } from './records.js';
import { RingQueue } from '../../orchestration/ring-queue.js';
import { BatcherStats } from './stats.js';
import { DeadlineTimer, TIMER_GRANULARITY_MS } from './deadline-timer.js';
import type { BatchDispatch, BatcherMetrics, CloseOptions, SubmitOptions } from './types.js';

export { BatcherClosedError, BatcherDispatchError, BatcherFullError, BatcherTimeoutError } from './errors.js';
export type { AutoTuneOptions, TunedParameters } from './auto-tuner.js';
export { DEFAULT_MAX_CONCURRENT_BATCHES, type BatcherDescriptor, type BatcherOptions } from './options.js';
export type { BatchInfo, BatchDispatch, BatcherMetrics, CloseOptions, SubmitOptions } from './types.js';

/**
 * Many small concurrent submits packed into batches, one dispatch call each; each submit
 * resolves with its own outputs. Bounded by default, everywhere: `maxConcurrentBatches`
 * batches in flight (default 16), `channelSize` submits accepted and not yet dispatched,
 * `maxWaiting` waiting for room (default channelSize); a submit beyond all of these is
 * refused with BatcherFullError. `dispatchTimeoutMs` bounds each dispatch, close({ timeoutMs })
 * the drain. Unbounded only when asked for (`maxConcurrentBatches: Infinity`).
 */
export class Batcher<I, O> {
  readonly #dispatch: BatchDispatch<I, O>;
  readonly #label: string;
  readonly #maxConcurrentBatches: number;
  readonly #dispatchTimeoutMs: number | null;
  readonly #tuner: AutoTuner | null;
  #maxBatchSize: number;
  #maxWaitMs: number;

  readonly #channel: SubmitChannel<I, O>;
  /** In dispatch order; settled batches leave from the front only. */
  readonly #inFlight = new RingQueue<Batch<I, O>>();
  #inFlightBatches = 0;
  #inFlightItems = 0;
  /** flush() dispatches everything accepted before this position at once. */
  #forcedSeq = 0;
  readonly #flushWaiters = new RingQueue<FlushWaiter>();

  #nextBatchId = 1;
  #closed = false;
  #closing: Promise<void> | null = null;
  #pumping = false;
  #repump = false;
  /** Dispatches a partial batch once its oldest item has waited maxWaitMs. */
  readonly #timer = new DeadlineTimer(() => this.#pump(performance.now(), true));
  readonly #stats = new BatcherStats();

  constructor(dispatch: BatchDispatch<I, O>, options: BatcherDescriptor) {
    const resolved = resolveBatcherOptions(options);
    if (typeof dispatch !== 'function') {
      throw new TypeError(`Batcher "${resolved.label}": dispatch must be a function, got ${typeof dispatch}`);
    }
    this.#dispatch = dispatch;
    this.#label = resolved.label;
    this.#channel = new SubmitChannel<I, O>(resolved.channelSize, resolved.maxWaiting);
    this.#maxConcurrentBatches = resolved.maxConcurrentBatches;
    this.#dispatchTimeoutMs = resolved.dispatchTimeoutMs;
    this.#maxBatchSize = resolved.maxBatchSize;
    this.#maxWaitMs = resolved.maxWaitMs;
    this.#tuner = resolved.autoTune === null ? null : new AutoTuner(resolved.autoTune);
  }

  get label(): string {
    return this.#label;
  }

  get maxBatchSize(): number {
    return this.#maxBatchSize;
  }

  get maxWaitMs(): number {
    return this.#maxWaitMs;
  }

  /** Batches dispatched and not yet settled, at most (Infinity: unbounded, as asked for). */
  get maxConcurrentBatches(): number {
    return this.#maxConcurrentBatches;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get metrics(): BatcherMetrics {
    const c = this.#channel;
    return this.#stats.snapshot({
      queued: c.queuedItems,
      inFlight: this.#inFlightItems,
      inFlightBatches: this.#inFlightBatches,
      waiting: c.waitingSubmits,
    });
  }

  /** Resolves with this submit's outputs, in its item order, once all its items are done; rejects with BatcherFullError when the batcher holds all it may (see the class comment). */
  submit(items: readonly I[], options?: SubmitOptions): Promise<O[]> {
    if (this.#closed) return Promise.reject(this.#closedError('submit() after close()'));
    if (!Array.isArray(items))
      return Promise.reject(
        new TypeError(`Batcher "${this.#label}": submit() expects an array of items, got ${typeof items}`),
      );
    if (items.length === 0) return Promise.resolve([]);
    return this.#submit<O[]>(items, undefined, items.length, options);
  }

  /** submit() of one item, resolving with its output alone (no array built); rejects with BatcherClosedError after close() or dispose(). */
  submitOne(item: I, options?: SubmitOptions): Promise<O> {
    if (this.#closed) return Promise.reject(this.#closedError('submitOne() after close()'));
    return this.#submit<O>(null, item, 1, options);
  }

  /** Dispatches what is queued now; resolves once everything submitted before the call has settled. */
  flush(): Promise<void> {
    const target = this.#channel.acceptedSeq;
    if (target > this.#forcedSeq) this.#forcedSeq = target;
    const done = new Promise<void>((resolve) => this.#flushWaiters.push({ target, resolve }));
    this.#pump(performance.now(), false);
    return done;
  }

  /**
   * Stops accepting: later submits, and submits still waiting for room (never accepted),
   * reject with BatcherClosedError. Everything accepted is dispatched; resolves once it has
   * all settled. Idempotent. With `timeoutMs` / `signal` it is bounded: see CloseOptions.
   */
  close(options: CloseOptions = {}): Promise<void> {
    try {
      checkCloseOptions(options, this.#label);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    return boundedDrain(this.#close(), options, (why) => this.#abandonAll(why));
  }

  #close(): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    this.#closed = true;
    this.#channel.refuseWaiters(this.#closedError('close() was called while this submit waited for room'));
    this.#timer.clear();
    this.#closing = this.flush();
    return this.#closing;
  }

  /** `await using` support: close() with no bound, so leaving the block waits until every accepted item has been dispatched and settled. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Closes at once without draining: every submit not yet settled (waiting, queued, or in a
   * batch in flight) rejects with BatcherClosedError and in-flight batches' signals abort; a
   * dispatch's later result is ignored. close() is the draining form. Idempotent.
   */
  dispose(): void {
    void this.#close();
    this.#abandonAll('dispose() was called');
  }

  /** `using` support: dispose(), which closes without draining and rejects every submit not yet settled. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /**
   * A bounded close() gave up: every submit not yet settled rejects with BatcherClosedError,
   * batches in flight are settled (their later results are ignored) and their signals aborted.
   */
  #abandonAll(why: string): void {
    const error = this.#closedError(`${why}; this submit had not settled`);
    // The queue first: failing a batch pumps, and nothing queued may be dispatched now.
    this.#channel.abandonQueued(error);
    this.#timer.clear();
    for (let batch = this.#inFlight.peek(); batch !== undefined; batch = this.#inFlight.peek()) {
      if (batch.settled) {
        this.#inFlight.shift();
        continue;
      }
      batch.info?.abort(error);
      this.#fail(batch, error, false);
    }
    this.#resolveFlushWaiters();
  }

  #submit<R>(
    items: readonly I[] | null,
    item: I | undefined,
    count: number,
    options: SubmitOptions | undefined,
  ): Promise<R> {
    const bad = options === undefined ? undefined : submitOptionsError(options, this.#label);
    if (bad !== undefined) return Promise.reject(bad);
    const signal = options?.signal;
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const channel = this.#channel;
    const hasRoom = channel.hasRoom;
    if (!hasRoom && (options?.wait === false || channel.waitingSubmits >= channel.maxWaiting))
      return Promise.reject(this.#full(options?.wait === false));
    const now = performance.now();
    if (this.#stats.firstSubmitAt < 0) this.#stats.firstSubmitAt = now;
    const request = new PendingSubmit<I, O>(items, item, count, now, signal);
    if (signal !== undefined) {
      request.onAbort = () => this.#abort(request);
      signal.addEventListener('abort', request.onAbort, { once: true });
    }
    if (hasRoom) {
      channel.enqueue(request, now);
      this.#pump(now, false);
    } else {
      channel.wait(request);
    }
    return request.promise as Promise<R>;
  }

  /** The refusal of a submit beyond what the batcher holds, naming each bound. */
  #full(noWait: boolean): BatcherFullError {
    this.#stats.refused++;
    return this.#channel.refusal(
      this.#label,
      `${this.#inFlightBatches} batches in flight (maxConcurrentBatches ${this.#maxConcurrentBatches})`,
      noWait,
    );
  }

  #abort(request: PendingSubmit<I, O>): void {
    request.onAbort = null;
    if (!this.#channel.cancel(request)) return; // part of it is already dispatched: the work is underway
    request.reject(request.signal?.reason);
    this.#pump(performance.now(), false);
  }

  /** Dispatches every batch that is due and admits waiters; re-entrant calls (from a synchronous dispatch) fold into the running one. */
  #pump(now: number, fromTimer: boolean): void {
    if (this.#pumping) {
      this.#repump = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#repump = false;
        this.#dispatchDue(now, fromTimer);
        if (this.#channel.admitWaiters(now)) this.#repump = true;
      } while (this.#repump);
    } finally {
      this.#pumping = false;
    }
    this.#resolveFlushWaiters();
    this.#armTimer(now);
  }

  #dispatchDue(now: number, fromTimer: boolean): void {
    const channel = this.#channel;
    for (;;) {
      channel.dropCancelledHead();
      const queued = channel.queuedItems;
      if (queued === 0 || this.#inFlightBatches >= this.#maxConcurrentBatches) return;
      const max = this.#maxBatchSize;
      if (queued < max && !this.#partialBatchDue(now, fromTimer)) return;
      this.#dispatchBatch(queued < max ? queued : max, now);
    }
  }

  #partialBatchDue(now: number, fromTimer: boolean): boolean {
    // A full channel means the batch cannot grow until something is dispatched, so waiting
    // for the timer would only add latency.
    const channel = this.#channel;
    if (this.#closed || channel.dispatchedSeq < this.#forcedSeq || channel.full) return true;
    const head = channel.head();
    const slack = fromTimer ? TIMER_GRANULARITY_MS : 0;
    return head !== undefined && now - head.enqueuedAt >= this.#maxWaitMs - slack;
  }

  #dispatchBatch(size: number, now: number): void {
    const channel = this.#channel;
    const first = channel.head();
    if (first === undefined)
      throw new Error(`Batcher "${this.#label}": internal error, queue empty with ${size} items counted`);
    const batch = new Batch<I, O>(
      this.#nextBatchId++,
      size,
      this.#maxBatchSize,
      channel.dispatchedSeq,
      first.submittedAt,
    );
    const items = channel.take(batch, size, now, this.#stats.waits);
    this.#inFlight.push(batch);
    this.#inFlightBatches++;
    this.#inFlightItems += size;
    this.#stats.dispatched(size, batch.capacity);

    const info = new BatchInfoRecord(batch.id, this.#label);
    batch.info = info;
    callDispatch(
      this.#dispatch,
      items,
      batch,
      info,
      this.#dispatchTimeoutMs,
      this.#label,
      this.#onOutputs,
      this.#onFailure,
    );
  }

  /** Where a dispatch's outcome goes (one bound function each, not a closure per batch). */
  readonly #onOutputs = (batch: Batch<I, O>, outputs: unknown): void => this.#complete(batch, outputs);
  readonly #onFailure = (batch: Batch<I, O>, error: unknown, wrap: boolean): void => this.#fail(batch, error, wrap);

  #complete(batch: Batch<I, O>, outputs: unknown): void {
    if (batch.settled) return;
    const mismatch = outputsMismatch(outputs, this.#label, batch.id, batch.size);
    if (mismatch !== null) {
      this.#fail(batch, mismatch, false);
      return;
    }
    const now = performance.now();
    batch.deliver(outputs as readonly O[], now, this.#stats.latencies);
    this.#stats.completed(batch.size, now);
    this.#settle(batch, now, true);
  }

  #fail(batch: Batch<I, O>, cause: unknown, wrap: boolean): void {
    if (batch.settled) return;
    const error = wrap ? batchFailure(cause, this.#label, batch.id, batch.size) : cause;
    this.#stats.failedBatches++;
    for (const request of batch.requests) {
      if (request.settled) continue;
      request.settled = true;
      request.outputs = null;
      // The rest of this submit may still be queued; its result is already decided.
      this.#channel.dropRemainder(request);
      request.reject(error);
    }
    this.#settle(batch, performance.now(), false);
  }

  #settle(batch: Batch<I, O>, now: number, succeeded: boolean): void {
    batch.settled = true;
    if (batch.timer !== null) {
      clearTimeout(batch.timer);
      batch.timer = null;
    }
    batch.info = null;
    this.#inFlightBatches--;
    this.#inFlightItems -= batch.size;
    while (this.#inFlight.peek()?.settled === true) this.#inFlight.shift();
    if (succeeded && this.#tuner !== null) this.#tune(batch, now);
    // Requests may stay referenced by this batch until earlier batches settle.
    batch.requests.length = 0;
    if (this.#channel.length > 0 || this.#channel.waitingSubmits > 0) this.#pump(now, false);
    else this.#resolveFlushWaiters();
  }

  #tune(batch: Batch<I, O>, now: number): void {
    const tuner = this.#tuner;
    if (tuner === null) return;
    const next = tuner.next(
      { maxBatchSize: this.#maxBatchSize, maxWaitMs: this.#maxWaitMs },
      now - batch.oldestSubmittedAt,
      batch.size >= batch.capacity,
    );
    if (next === null) return;
    this.#maxBatchSize = next.maxBatchSize;
    this.#maxWaitMs = next.maxWaitMs;
  }

  #resolveFlushWaiters(): void {
    if (this.#flushWaiters.length === 0) return;
    const oldest = this.#inFlight.peek();
    resolveFlushWaiters(this.#flushWaiters, oldest === undefined ? this.#channel.dispatchedSeq : oldest.startSeq);
  }

  /** One timer, for the oldest queued item; it re-arms itself if it fires early for a newer head. */
  #armTimer(now: number): void {
    if (this.#closed || this.#channel.queuedItems === 0 || this.#inFlightBatches >= this.#maxConcurrentBatches) return;
    const head = this.#channel.head();
    if (head !== undefined) this.#timer.arm(head.enqueuedAt + this.#maxWaitMs, now);
  }

  #closedError(detail: string): BatcherClosedError {
    return new BatcherClosedError(`Batcher "${this.#label}" is closed: ${detail}`);
  }
}
