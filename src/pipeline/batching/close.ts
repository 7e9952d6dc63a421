/** close({ timeoutMs, signal }): a drain that gives up, so closing a batcher whose dispatch hangs still resolves. */
import { checkTimeoutMs } from '../../runtime/timeout.js';
import type { CloseOptions } from './types.js';

/** Checks close()'s options; throws TypeError/RangeError naming the field. */
export function checkCloseOptions(options: CloseOptions, label: string): void {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`Batcher "${label}": close() options must be an object { timeoutMs?, signal? }`);
  if (options.timeoutMs !== undefined) checkTimeoutMs(options.timeoutMs, `Batcher "${label}": close() timeoutMs`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new TypeError(`Batcher "${label}": close() signal must be an AbortSignal`);
}

/**
 * Resolves when `drained` does, or when `timeoutMs` passes or `signal` aborts first, after
 * calling `giveUp(why)` (which settles whatever is left). Without either bound it is `drained`.
 */
export function boundedDrain(
  drained: Promise<void>,
  options: CloseOptions,
  giveUp: (why: string) => void,
): Promise<void> {
  const { timeoutMs, signal } = options;
  if (timeoutMs === undefined && signal === undefined) return drained;
  return new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | null = null;
    const finish = (): void => {
      if (timer !== null) clearTimeout(timer);
      signal?.removeEventListener('abort', onBound);
      resolve();
    };
    const onBound = (): void => {
      giveUp(
        timeoutMs === undefined || signal?.aborted === true
          ? 'close() was aborted'
          : `close() gave up after ${timeoutMs} ms`,
      );
      finish();
    };
    if (signal?.aborted === true) {
      onBound();
      return;
    }
    signal?.addEventListener('abort', onBound, { once: true });
    if (timeoutMs !== undefined) timer = setTimeout(onBound, timeoutMs);
    void drained.then(finish);
  });
}
