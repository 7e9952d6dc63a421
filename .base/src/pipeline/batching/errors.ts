/** submit() after close(), or a submit still waiting for room when close() was called. */
export class BatcherClosedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatcherClosedError';
  }
}

/** submit({ wait: false }) found the channel full, or `maxWaiting` submits were already waiting for room. */
export class BatcherFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatcherFullError';
  }
}

/**
 * A batch failed: dispatch threw or rejected (the original error is `cause`), or it returned
 * the wrong number of outputs. Every submit with an item in that batch rejects with it.
 */
export class BatcherDispatchError extends Error {
  readonly batchId: number;

  constructor(message: string, batchId: number, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'BatcherDispatchError';
    this.batchId = batchId;
  }
}

/** A batch's dispatch did not settle within `dispatchTimeoutMs`: its submitters reject with this (its signal is aborted). */
export class BatcherTimeoutError extends BatcherDispatchError {
  constructor(message: string, batchId: number) {
    super(message, batchId);
    this.name = 'BatcherTimeoutError';
  }
}
