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

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The error every submit of batch `batchId` (of `size` items) rejects with when its dispatch threw or rejected with `cause`. */
export function batchFailure(cause: unknown, label: string, batchId: number, size: number): BatcherDispatchError {
  return new BatcherDispatchError(
    `Batcher "${label}": batch #${batchId} (${size} items) failed: ${describeError(cause)}`,
    batchId,
    { cause },
  );
}

/** null when a dispatch returned one output per item of its batch, else the error saying what it returned. */
export function outputsMismatch(
  outputs: unknown,
  label: string,
  batchId: number,
  size: number,
): BatcherDispatchError | null {
  if (Array.isArray(outputs) && outputs.length === size) return null;
  const got = Array.isArray(outputs) ? `${outputs.length} outputs` : `${typeof outputs} instead of an array`;
  return new BatcherDispatchError(
    `Batcher "${label}": batch #${batchId} dispatch returned ${got} for ${size} items`,
    batchId,
  );
}
