/** The Batcher's public shapes: what dispatch() is given and returns, submit and close options, metrics. */

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
  /**
   * When the channel is full: true (default) waits for room in FIFO order (at most `maxWaiting`
   * submits wait; beyond, BatcherFullError), false rejects with BatcherFullError at once.
   */
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
  /** Submits refused with BatcherFullError (the channel and its waiting line were full, or wait was false). */
  refused: number;
}
