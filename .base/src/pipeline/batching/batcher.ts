/**
 * Batcher: packs many small concurrent submits into batches for one dispatch call each
 * (a kernel launch, a cuFFT plan execution), and routes each batch's outputs back to the
 * submits they came from.
 *
 * The hot path allocates per submit (one request, one promise) and per batch, never per
 * item: a batch remembers which requests it holds as (request, offset, length) segments.
 */
import { checkTimeoutMs } from '../../runtime/timeout.js';
import { AutoTuner } from './auto-tuner.js';
import { BatcherClosedError, BatcherDispatchError, BatcherFullError, BatcherTimeoutError } from './errors.js';
import { resolveBatcherOptions, type BatcherDescriptor } from './options.js';
import { Batch, BatchInfoRecord, CANCELLED, DISPATCHED, PendingSubmit, QUEUED, WAITING, type FlushWaiter } from './records.js';
import { RingQueue } from '../../orchestration/ring-queue.js';
import { SampleWindow } from './sample-window.js';

export { BatcherClosedError, BatcherDispatchError, BatcherFullError, BatcherTimeoutError } from './errors.js';
export type { AutoTuneOptions, TunedParameters } from './auto-tuner.js';
export type { BatcherDescriptor, BatcherOptions } from './options.js';

/** What dispatch() is told about the batch it runs. */
export interface BatchInfo {
  batchId: number;
  label: string;
  /** Aborted when the batch times out (dispatchTimeoutMs) or a bounded close() gives up on it: stop the work. */
  readonly signal: AbortSignal;
}

/** Options of close(). */
export interface CloseOptions {
  /**
   * Give up after this long: what has not settled by then (queued submits, batches in flight)
   * rejects with BatcherClosedError, in-flight batches' signals are aborted, and close() resolves.
   */
  timeoutMs?: number | undefined;
  /** Same as timeoutMs expiring, when it aborts. */
  signal?: AbortSignal | undefined;
}

/** Must return exactly one output per item, in item order. */
export type BatchDispatch<I, O> = (items: readonly I[], info: BatchInfo) => Promise<readonly O[]> | readonly O[];

/** Options of submit() / submitOne(). */
export interface SubmitOptions {
  /** When the channel is full: true (default) waits for room in FIFO order, false rejects with BatcherFullError. */
  wait?: boolean | undefined;
  /** Cancels the submit while it waits for room or while none of its items has been dispatched. */
  signal?: AbortSignal | undefined;
}

/** What the Batcher measured (metrics getter). */
export interface BatcherMetrics {
  /** Batches dispatched. */
  batches: number;
  /** Items dispatched. */
  items: number;
  /** Mean over batches of items / maxBatchSize at dispatch time. */
  fillRate: number;
  /** Submit-to-dispatch wait per item, over the last 8192 items dispatched. */
  waitP50Ms: number;
  waitP99Ms: number;
  /** Submit-to-resolve latency per item, over the last 8192 items resolved. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Items completed successfully per second, from the first submit to the latest completion. */
  itemsPerSecond: number;
  /** Items accepted and not yet dispatched. */
  queued: number;
  /** Items dispatched and not yet settled. */
  inFlight: number;
  /** Batches dispatched and not yet settled. */
  inFlightBatches: number;
  /** Submits waiting for room in the channel. */
  waiting: number;
  failedBatches: number;
}

const METRIC_WINDOW = 8192;
/**
 * Node's timers have millisecond resolution, so a timer may fire up to this much before
 * its deadline; flushing then is better than sleeping another whole millisecond.
 */
const TIMER_GRANULARITY_MS = 1;

// One shared executor instead of a closure per submit: the Promise constructor calls it
// synchronously, so the resolvers are read back right after construction.
let capturedResolve: unknown;
let capturedReject: unknown;
function captureResolvers(resolve: unknown, reject: unknown): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

function isArray<T>(value: readonly T[] | PromiseLike<readonly T[]>): value is readonly T[] {
  return Array.isArray(value);
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Many small concurrent submits packed into batches, one dispatch call each; each submit
 * resolves with its own outputs. Bounded everywhere: `channelSize` submits accepted,
 * `maxWaiting` waiting for room (beyond: BatcherFullError), `maxConcurrentBatches` in
 * flight, `dispatchTimeoutMs` per dispatch, close({ timeoutMs }) for the drain.
 */
export class Batcher<I, O> {
  readonly #dispatch: BatchDispatch<I, O>;
  readonly #label: string;
  readonly #channelSize: number;
  readonly #maxConcurrentBatches: number;
  readonly #maxWaiting: number;
  readonly #dispatchTimeoutMs: number | null;
  readonly #tuner: AutoTuner | null;
  #maxBatchSize: number;
  #maxWaitMs: number;

  /** Accepted requests not yet fully dispatched, plus cancelled ones not yet skipped. */
  readonly #queue = new RingQueue<PendingSubmit<I, O>>(64);
  #queuedSubmits = 0;
  #queuedItems = 0;
  readonly #waiters = new RingQueue<PendingSubmit<I, O>>();
  #waitingSubmits = 0;
  /** In dispatch order; settled batches leave from the front only. */
  readonly #inFlight = new RingQueue<Batch<I, O>>();
  #inFlightBatches = 0;
  #inFlightItems = 0;

  // Positions in the stream of accepted items; flush() waits on them (cancelled items count
  // as dispatched when skipped, so the positions stay contiguous).
  #acceptedSeq = 0;
  #dispatchedSeq = 0;
  #forcedSeq = 0;
  readonly #flushWaiters = new RingQueue<FlushWaiter>();

  #nextBatchId = 1;
  #closed = false;
  #closing: Promise<void> | null = null;
  #pumping = false;
  #repump = false;
  #timeout: NodeJS.Timeout | null = null;
  #immediate: NodeJS.Immediate | null = null;
  #timerDeadline = 0;
  readonly #onTimer = (): void => {
    this.#timeout = null;
    this.#immediate = null;
    this.#pump(performance.now(), true);
  };

  #batches = 0;
  #items = 0;
  #fillSum = 0;
  #failedBatches = 0;
  #completedItems = 0;
  #firstSubmitAt = -1;
  #lastCompletionAt = 0;
  readonly #waits = new SampleWindow(METRIC_WINDOW);
  readonly #latencies = new SampleWindow(METRIC_WINDOW);

  constructor(dispatch: BatchDispatch<I, O>, options: BatcherDescriptor) {
    const resolved = resolveBatcherOptions(options);
    if (typeof dispatch !== 'function') {
      throw new TypeError(`Batcher "${resolved.label}": dispatch must be a function, got ${typeof dispatch}`);
    }
    this.#dispatch = dispatch;
    this.#label = resolved.label;
    this.#channelSize = resolved.channelSize;
    this.#maxConcurrentBatches = resolved.maxConcurrentBatches;
    this.#maxWaiting = resolved.maxWaiting;
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

  get closed(): boolean {
    return this.#closed;
  }

  get metrics(): BatcherMetrics {
    const [waitP50Ms = 0, waitP99Ms = 0] = this.#waits.percentiles([0.5, 0.99]);
    const [latencyP50Ms = 0, latencyP99Ms = 0] = this.#latencies.percentiles([0.5, 0.99]);
    const activeMs = this.#lastCompletionAt - this.#firstSubmitAt;
    return {
      batches: this.#batches,
      items: this.#items,
      fillRate: this.#batches === 0 ? 0 : this.#fillSum / this.#batches,
      waitP50Ms,
      waitP99Ms,
      latencyP50Ms,
      latencyP99Ms,
      itemsPerSecond: this.#firstSubmitAt >= 0 && activeMs > 0 ? (this.#completedItems * 1000) / activeMs : 0,
      queued: this.#queuedItems,
      inFlight: this.#inFlightItems,
      inFlightBatches: this.#inFlightBatches,
      waiting: this.#waitingSubmits,
      failedBatches: this.#failedBatches,
    };
  }

  /** Resolves with this submit's outputs, in its item order, once all its items are done. */
  submit(items: readonly I[], options?: SubmitOptions): Promise<O[]> {
    if (this.#closed) return Promise.reject(this.#closedError('submit() after close()'));
    if (!Array.isArray(items)) {
      return Promise.reject(new TypeError(`Batcher "${this.#label}": submit() expects an array of items, got ${typeof items}`));
    }
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
    const target = this.#acceptedSeq;
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
    const timeoutMs = options.timeoutMs;
    try {
      if (timeoutMs !== undefined) checkTimeoutMs(timeoutMs, `Batcher "${this.#label}": close() timeoutMs`);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
      return Promise.reject(new TypeError(`Batcher "${this.#label}": close() signal must be an AbortSignal`));
    }
    const drained = this.#close();
    if (timeoutMs === undefined && options.signal === undefined) return drained;
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const signal = options.signal;
      const finish = (): void => {
        if (timer !== null) clearTimeout(timer);
        signal?.removeEventListener('abort', giveUp);
        resolve();
      };
      const giveUp = (): void => {
        this.#abandonAll(timeoutMs === undefined || signal?.aborted === true ? 'close() was aborted' : `close() gave up after ${timeoutMs} ms`);
        finish();
      };
      if (signal?.aborted === true) {
        giveUp();
        return;
      }
      signal?.addEventListener('abort', giveUp, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(giveUp, timeoutMs);
      void drained.then(finish);
    });
  }

  #close(): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    this.#closed = true;
    for (let request = this.#waiters.shift(); request !== undefined; request = this.#waiters.shift()) {
      if (request.state !== WAITING) continue;
      request.state = CANCELLED;
      request.settled = true;
      this.#detachAbort(request);
      request.reject(this.#closedError('close() was called while this submit waited for room'));
    }
    this.#waitingSubmits = 0;
    this.#clearTimer();
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
    for (let request = this.#queue.shift(); request !== undefined; request = this.#queue.shift()) {
      if (request.settled) continue;
      request.state = CANCELLED;
      request.settled = true;
      request.outputs = null;
      this.#detachAbort(request);
      request.reject(error);
    }
    this.#queuedSubmits = 0;
    this.#queuedItems = 0;
    this.#dispatchedSeq = this.#acceptedSeq;
    this.#clearTimer();
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

  #submit<R>(items: readonly I[] | null, item: I | undefined, count: number, options: SubmitOptions | undefined): Promise<R> {
    const signal = options?.signal;
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const hasRoom = this.#waitingSubmits === 0 && this.#queuedSubmits < this.#channelSize;
    if (!hasRoom && options?.wait === false) {
      return Promise.reject(
        new BatcherFullError(`Batcher "${this.#label}": channel full (channelSize ${this.#channelSize} submits accepted and not yet dispatched); rejected because wait is false`),
      );
    }
    if (!hasRoom && this.#waitingSubmits >= this.#maxWaiting) {
      return Promise.reject(
        new BatcherFullError(`Batcher "${this.#label}": channel full and ${this.#waitingSubmits} submits already waiting for room (maxWaiting ${this.#maxWaiting})`),
      );
    }
    const now = performance.now();
    if (this.#firstSubmitAt < 0) this.#firstSubmitAt = now;
    const promise = new Promise<R>(captureResolvers);
    const request = new PendingSubmit<I, O>(items, item, count, now, capturedResolve as (value: unknown) => void, capturedReject as (reason: unknown) => void, signal);
    if (signal !== undefined) {
      request.onAbort = () => this.#abort(request);
      signal.addEventListener('abort', request.onAbort, { once: true });
    }
    if (hasRoom) {
      this.#enqueue(request, now);
      this.#pump(now, false);
    } else {
      this.#waiters.push(request);
      this.#waitingSubmits++;
    }
    return promise;
  }

  #abort(request: PendingSubmit<I, O>): void {
    request.onAbort = null;
    if (request.state === WAITING) {
      this.#waitingSubmits--;
    } else if (request.state === QUEUED && request.offset === 0) {
      this.#queuedSubmits--;
      this.#queuedItems -= request.count;
    } else {
      return; // part of it is already dispatched: the work is underway
    }
    request.state = CANCELLED;
    request.settled = true;
    request.reject(request.signal?.reason);
    this.#pump(performance.now(), false);
  }

  #detachAbort(request: PendingSubmit<I, O>): void {
    if (request.onAbort === null) return;
    request.signal?.removeEventListener('abort', request.onAbort);
    request.onAbort = null;
  }

  #enqueue(request: PendingSubmit<I, O>, now: number): void {
    request.state = QUEUED;
    request.enqueuedAt = now;
    this.#queue.push(request);
    this.#queuedSubmits++;
    this.#queuedItems += request.count;
    this.#acceptedSeq += request.count;
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
        this.#admitWaiters(now);
      } while (this.#repump);
    } finally {
      this.#pumping = false;
    }
    this.#resolveFlushWaiters();
    this.#armTimer(now);
  }

  #dispatchDue(now: number, fromTimer: boolean): void {
    for (;;) {
      this.#dropCancelledHead();
      const queued = this.#queuedItems;
      if (queued === 0 || this.#inFlightBatches >= this.#maxConcurrentBatches) return;
      const max = this.#maxBatchSize;
      if (queued < max && !this.#partialBatchDue(now, fromTimer)) return;
      this.#dispatchBatch(queued < max ? queued : max, now);
    }
  }

  #partialBatchDue(now: number, fromTimer: boolean): boolean {
    // A full channel means the batch cannot grow until something is dispatched, so waiting
    // for the timer would only add latency.
    if (this.#closed || this.#dispatchedSeq < this.#forcedSeq || this.#queuedSubmits >= this.#channelSize) return true;
    const head = this.#queue.peek();
    const slack = fromTimer ? TIMER_GRANULARITY_MS : 0;
    return head !== undefined && now - head.enqueuedAt >= this.#maxWaitMs - slack;
  }

  #dropCancelledHead(): void {
    for (let head = this.#queue.peek(); head !== undefined && head.state === CANCELLED; head = this.#queue.peek()) {
      this.#queue.shift();
      this.#dispatchedSeq += head.count - head.offset;
    }
  }

  #admitWaiters(now: number): void {
    while (this.#waitingSubmits > 0 && this.#queuedSubmits < this.#channelSize) {
      const request = this.#waiters.shift();
      if (request === undefined) break;
      if (request.state !== WAITING) continue;
      this.#waitingSubmits--;
      this.#enqueue(request, now);
      this.#repump = true;
    }
    while (this.#waiters.peek()?.state === CANCELLED) this.#waiters.shift();
  }

  #dispatchBatch(size: number, now: number): void {
    const first = this.#queue.peek();
    if (first === undefined) throw new Error(`Batcher "${this.#label}": internal error, queue empty with ${size} items counted`);
    const batch = new Batch<I, O>(this.#nextBatchId++, size, this.#maxBatchSize, this.#dispatchedSeq, first.submittedAt);
    let items: readonly I[];
    if (first.items !== null && first.offset === 0 && first.count === size) {
      items = first.items; // one submit is exactly one batch: no copy
      this.#takeSegment(batch, first, size, now);
    } else {
      const packed = new Array<I>(size);
      let fill = 0;
      while (fill < size) {
        const request = this.#queue.peek();
        if (request === undefined) throw new Error(`Batcher "${this.#label}": internal error, queue underflow`);
        if (request.state === CANCELLED) {
          this.#queue.shift();
          this.#dispatchedSeq += request.count - request.offset;
          continue;
        }
        const take = Math.min(request.count - request.offset, size - fill);
        const source = request.items;
        if (source === null) {
          packed[fill] = request.item as I;
        } else {
          for (let i = 0, from = request.offset; i < take; i++) packed[fill + i] = source[from + i] as I;
        }
        this.#takeSegment(batch, request, take, now);
        fill += take;
      }
      items = packed;
    }
    this.#queuedItems -= size;
    this.#dispatchedSeq += size;
    this.#inFlight.push(batch);
    this.#inFlightBatches++;
    this.#inFlightItems += size;
    this.#batches++;
    this.#items += size;
    this.#fillSum += size / batch.capacity;

    const info = new BatchInfoRecord(batch.id, this.#label);
    batch.info = info;
    let result: Promise<readonly O[]> | readonly O[];
    try {
      result = this.#dispatch(items, info);
    } catch (error) {
      this.#fail(batch, error, true);
      return;
    }
    if (isArray(result)) {
      this.#complete(batch, result);
    } else {
      const timeoutMs = this.#dispatchTimeoutMs;
      if (timeoutMs !== null) {
        batch.timer = setTimeout(() => {
          batch.timer = null;
          const error = new BatcherTimeoutError(
            `Batcher "${this.#label}": batch #${batch.id} (${batch.size} items) did not settle within dispatchTimeoutMs ${timeoutMs}`,
            batch.id,
          );
          info.abort(error);
          this.#fail(batch, error, false);
        }, timeoutMs);
      }
      Promise.resolve(result).then(
        (outputs) => this.#complete(batch, outputs),
        (error: unknown) => this.#fail(batch, error, true),
      );
    }
  }

  #takeSegment(batch: Batch<I, O>, request: PendingSubmit<I, O>, take: number, now: number): void {
    if (request.offset === 0) this.#detachAbort(request);
    batch.requests.push(request);
    batch.offsets.push(request.offset);
    batch.lengths.push(take);
    this.#waits.record(now - request.submittedAt, take);
    request.offset += take;
    if (request.offset === request.count) {
      this.#queue.shift();
      this.#queuedSubmits--;
      request.state = DISPATCHED;
    }
  }

  #complete(batch: Batch<I, O>, outputs: unknown): void {
    if (batch.settled) return;
    if (!Array.isArray(outputs) || outputs.length !== batch.size) {
      const got = Array.isArray(outputs) ? `${outputs.length} outputs` : `${typeof outputs} instead of an array`;
      const message = `Batcher "${this.#label}": batch #${batch.id} dispatch returned ${got} for ${batch.size} items`;
      this.#fail(batch, new BatcherDispatchError(message, batch.id), false);
      return;
    }
    const results = outputs as readonly O[];
    const now = performance.now();
    const { requests, offsets, lengths } = batch;
    let position = 0;
    for (let s = 0; s < requests.length; s++) {
      const request = requests[s] as PendingSubmit<I, O>;
      const length = lengths[s] as number;
      if (!request.settled) {
        if (length === request.count) {
          request.settled = true;
          request.resolve(request.items === null ? results[position] : results.slice(position, position + length));
          this.#latencies.record(now - request.submittedAt, length);
        } else {
          const gathered = request.outputs ?? (request.outputs = new Array<O>(request.count));
          const offset = offsets[s] as number;
          for (let i = 0; i < length; i++) gathered[offset + i] = results[position + i] as O;
          request.done += length;
          if (request.done === request.count) {
            request.settled = true;
            request.outputs = null;
            request.resolve(gathered);
            this.#latencies.record(now - request.submittedAt, request.count);
          }
        }
      }
      position += length;
    }
    this.#completedItems += batch.size;
    this.#lastCompletionAt = now;
    this.#settle(batch, now, true);
  }

  #fail(batch: Batch<I, O>, cause: unknown, wrap: boolean): void {
    if (batch.settled) return;
    const error = wrap
      ? new BatcherDispatchError(`Batcher "${this.#label}": batch #${batch.id} (${batch.size} items) failed: ${describeError(cause)}`, batch.id, { cause })
      : cause;
    this.#failedBatches++;
    for (const request of batch.requests) {
      if (request.settled) continue;
      request.settled = true;
      request.outputs = null;
      if (request.state === QUEUED) {
        // The rest of this submit is still queued; its result is already decided.
        request.state = CANCELLED;
        this.#queuedSubmits--;
        this.#queuedItems -= request.count - request.offset;
      }
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
    if (this.#queue.length > 0 || this.#waitingSubmits > 0) this.#pump(now, false);
    else this.#resolveFlushWaiters();
  }

  #tune(batch: Batch<I, O>, now: number): void {
    const tuner = this.#tuner;
    if (tuner === null) return;
    const next = tuner.next({ maxBatchSize: this.#maxBatchSize, maxWaitMs: this.#maxWaitMs }, now - batch.oldestSubmittedAt, batch.size >= batch.capacity);
    if (next === null) return;
    this.#maxBatchSize = next.maxBatchSize;
    this.#maxWaitMs = next.maxWaitMs;
  }

  #resolveFlushWaiters(): void {
    if (this.#flushWaiters.length === 0) return;
    const oldest = this.#inFlight.peek();
    const settledBefore = oldest === undefined ? this.#dispatchedSeq : oldest.startSeq;
    for (let waiter = this.#flushWaiters.peek(); waiter !== undefined && waiter.target <= settledBefore; waiter = this.#flushWaiters.peek()) {
      this.#flushWaiters.shift();
      waiter.resolve();
    }
  }

  /** One timer, for the oldest queued item; it re-arms itself if it fires early for a newer head. */
  #armTimer(now: number): void {
    if (this.#closed || this.#queuedItems === 0 || this.#inFlightBatches >= this.#maxConcurrentBatches) return;
    const head = this.#queue.peek();
    if (head === undefined) return;
    const deadline = head.enqueuedAt + this.#maxWaitMs;
    if ((this.#timeout !== null || this.#immediate !== null) && this.#timerDeadline <= deadline) return;
    this.#clearTimer();
    this.#timerDeadline = deadline;
    const delay = deadline - now;
    if (delay < TIMER_GRANULARITY_MS) this.#immediate = setImmediate(this.#onTimer);
    else this.#timeout = setTimeout(this.#onTimer, delay);
  }

  #clearTimer(): void {
    if (this.#timeout !== null) clearTimeout(this.#timeout);
    if (this.#immediate !== null) clearImmediate(this.#immediate);
    this.#timeout = null;
    this.#immediate = null;
  }

  #closedError(detail: string): BatcherClosedError {
    return new BatcherClosedError(`Batcher "${this.#label}" is closed: ${detail}`);
  }
}
