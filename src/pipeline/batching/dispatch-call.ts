/**
 * One batch's dispatch call: a dispatch may return its outputs at once or a promise of them, or
 * throw; a promise is bounded by `dispatchTimeoutMs` when the batcher has one (the batch's signal
 * is then aborted and its submits reject with BatcherTimeoutError).
 */
import { BatcherTimeoutError } from './errors.js';
import type { Batch, BatchInfoRecord } from './records.js';
import type { BatchDispatch } from './types.js';

function isArray<T>(value: readonly T[] | PromiseLike<readonly T[]>): value is readonly T[] {
  return Array.isArray(value);
}

/**
 * Calls `dispatch` on `batch`'s `items` and hands its outcome to `complete` (the outputs, not yet
 * checked) or `fail` (`wrap`: the error is the dispatch's own, to be wrapped in a
 * BatcherDispatchError; else it is already the batch's error). A result of the right shape
 * returned at once completes the batch before this returns.
 */
export function callDispatch<I, O>(
  dispatch: BatchDispatch<I, O>,
  items: readonly I[],
  batch: Batch<I, O>,
  info: BatchInfoRecord,
  timeoutMs: number | null,
  label: string,
  complete: (batch: Batch<I, O>, outputs: unknown) => void,
  fail: (batch: Batch<I, O>, error: unknown, wrap: boolean) => void,
): void {
  let result: Promise<readonly O[]> | readonly O[];
  try {
    result = dispatch(items, info);
  } catch (error) {
    fail(batch, error, true);
    return;
  }
  if (isArray(result)) {
    complete(batch, result);
    return;
  }
  if (timeoutMs !== null) {
    batch.timer = setTimeout(() => {
      batch.timer = null;
      const error = new BatcherTimeoutError(
        `Batcher "${label}": batch #${batch.id} (${batch.size} items) did not settle within dispatchTimeoutMs ${timeoutMs}`,
        batch.id,
      );
      info.abort(error);
      fail(batch, error, false);
    }, timeoutMs);
  }
  Promise.resolve(result).then(
    (outputs) => complete(batch, outputs),
    (error: unknown) => fail(batch, error, true),
  );
}
