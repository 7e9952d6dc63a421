/** Bookkeeping records of the Batcher: one per submit, one per batch. */

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

  constructor(
    /** null for submitOne, whose single item is `item` and which resolves with a bare output. */
    readonly items: readonly I[] | null,
    readonly item: I | undefined,
    readonly count: number,
    readonly submittedAt: number,
    readonly resolve: (value: unknown) => void,
    readonly reject: (reason: unknown) => void,
    readonly signal: AbortSignal | undefined,
  ) {}
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
}

/** A flush() waiting for a position in the accepted stream to settle. */
export interface FlushWaiter {
  /** Resolve once every item before this position in the accepted stream has settled. */
  target: number;
  resolve: () => void;
}
