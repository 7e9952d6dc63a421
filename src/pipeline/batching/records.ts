/** Bookkeeping records of the Batcher: one per submit, one per batch. */
import type { RingQueue } from '../../orchestration/ring-queue.js';
import type { SampleWindow } from './sample-window.js';

/** Waiting for room in a full channel (not yet accepted). */
export const WAITING = 0;
/** Accepted into the channel, not yet fully dispatched. */
export const QUEUED = 1;
/** Every item is in a batch. */
export const DISPATCHED = 2;
/** Aborted, refused at close, or failed with its batch: skipped by the queue. */
export const CANCELLED = 3;
/** Where a submit is. */
export type SubmitState = typeof WAITING | typeof QUEUED | typeof DISPATCHED | typeof CANCELLED;

// One shared executor instead of a closure per submit: the Promise constructor calls it
// synchronously, so the resolvers are read back right after construction.
let capturedResolve: unknown;
let capturedReject: unknown;
function captureResolvers(resolve: unknown, reject: unknown): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/** One submit() in the Batcher's books. */
export class PendingSubmit<I, O> {
  state: SubmitState = WAITING;
  /** Items already placed in batches. */
  offset = 0;
  /** Items whose outputs have arrived (only counted for submits split across batches). */
  done = 0;
  enqueuedAt = 0;
  settled = false;
  /** Gathers outputs of a submit split across batches. */
  outputs: O[] | null = null;
  onAbort: (() => void) | null = null;

  /** Settles with the submit's outputs (an array, or the bare output of submitOne), or its error. */
  readonly promise: Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;

  constructor(
    /** null for submitOne, whose single item is `item` and which resolves with a bare output. */
    readonly items: readonly I[] | null,
    readonly item: I | undefined,
    readonly count: number,
    readonly submittedAt: number,
    readonly signal: AbortSignal | undefined,
  ) {
    this.promise = new Promise(captureResolvers);
    this.resolve = capturedResolve as (value: unknown) => void;
    this.reject = capturedReject as (reason: unknown) => void;
  }

  /** Stops listening to `signal`: once any item is dispatched (or the submit settled) an abort no longer cancels it. */
  detachAbort(): void {
    if (this.onAbort === null) return;
    this.signal?.removeEventListener('abort', this.onAbort);
    this.onAbort = null;
  }
}

/** What dispatch() is told about its batch; `signal` is made on first use (no cost unless read). */
export class BatchInfoRecord {
  #controller: AbortController | null = null;
  #aborted: unknown = undefined;
  #isAborted = false;

  constructor(
    readonly batchId: number,
    readonly label: string,
  ) {}

  /** Aborted when the batch times out (dispatchTimeoutMs) or close() gives up on it. */
  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#isAborted) this.#controller.abort(this.#aborted);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#isAborted) return;
    this.#isAborted = true;
    this.#aborted = reason;
    this.#controller?.abort(reason);
  }
}

/** One dispatched batch: which segments of which submits it holds. */
export class Batch<I, O> {
  settled = false;
  /** The dispatch's timeout, while it runs. */
  timer: NodeJS.Timeout | null = null;
  info: BatchInfoRecord | null = null;
  readonly requests: PendingSubmit<I, O>[] = [];
  /** Offset inside each request of its segment in this batch. */
  readonly offsets: number[] = [];
  readonly lengths: number[] = [];

  constructor(
    readonly id: number,
    readonly size: number,
    /** maxBatchSize when dispatched (the tuner may change it later). */
    readonly capacity: number,
    /** Position in the stream of accepted items of this batch's first item. */
    readonly startSeq: number,
    readonly oldestSubmittedAt: number,
  ) {}

  /**
   * Routes `results` (one per item, in batch order) to the submits they belong to: a submit
   * wholly in this batch resolves now; one split across batches gathers its outputs and
   * resolves with the last of them. Each resolution records its latency in `latencies`.
   */
  deliver(results: readonly O[], now: number, latencies: SampleWindow): void {
    const { requests, offsets, lengths } = this;
    let position = 0;
    for (let s = 0; s < requests.length; s++) {
      const request = requests[s] as PendingSubmit<I, O>;
      const length = lengths[s] as number;
      if (!request.settled) {
        if (length === request.count) {
          request.settled = true;
          request.resolve(request.items === null ? results[position] : results.slice(position, position + length));
          latencies.record(now - request.submittedAt, length);
        } else {
          const gathered = request.outputs ?? (request.outputs = new Array<O>(request.count));
          const offset = offsets[s] as number;
          for (let i = 0; i < length; i++) gathered[offset + i] = results[position + i] as O;
          request.done += length;
          if (request.done === request.count) {
            request.settled = true;
            request.outputs = null;
            request.resolve(gathered);
            latencies.record(now - request.submittedAt, request.count);
          }
        }
      }
      position += length;
    }
  }
}

/** A flush() waiting for a position in the accepted stream to settle. */
export interface FlushWaiter {
  /** Resolve once every item before this position in the accepted stream has settled. */
  target: number;
  resolve: () => void;
}

/** Resolves, oldest first, every flush() waiting for a position at or before `settledBefore` (all before it have settled). */
export function resolveFlushWaiters(waiters: RingQueue<FlushWaiter>, settledBefore: number): void {
  for (let waiter = waiters.peek(); waiter !== undefined && waiter.target <= settledBefore; waiter = waiters.peek()) {
    waiters.shift();
    waiter.resolve();
  }
}
