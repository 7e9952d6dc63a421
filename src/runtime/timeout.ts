/**
 * Timeouts a Node timer can hold. setTimeout() takes at most 2^31-1 ms (about 24.8 days); a larger
 * delay (or NaN) silently becomes 1 ms, so a bound meant as "almost never" fires at once. Every
 * tscuda option that is a timeout or a delay (timeoutMs, maxWaitMs, dispatchTimeoutMs, ...) is
 * checked by this one rule; it is pure (no CUDA), so any layer may import it.
 */

/** The longest delay setTimeout() honours: 2^31-1 ms. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * What is wrong with `ms` as a timeout, as the end of a sentence naming the option ("must be
 * 0..2147483647 ms ..., got 1e+21"); undefined when it is a number in 0..2^31-1 (or Infinity
 * where `infinite` allows it). For callers with an error class of their own (a job's
 * validation error naming its field); others call checkTimeoutMs().
 */
export function timeoutMsProblem(ms: unknown, options: { infinite?: boolean | undefined } = {}): string | undefined {
  if (typeof ms !== 'number') return `must be a number of milliseconds, got ${ms === null ? 'null' : typeof ms}`;
  if (ms === Infinity && options.infinite) return undefined;
  if (ms >= 0 && ms <= MAX_TIMEOUT_MS) return undefined;
  return `must be 0..${MAX_TIMEOUT_MS} ms (the most a Node timer holds)${options.infinite ? ', or Infinity for none' : ''}, got ${ms}`;
}

/**
 * Throws RangeError naming `what` unless `ms` is a number in 0..2^31-1 (Infinity is allowed
 * where `infinite` says so: no timeout); TypeError when it is not a number. Returns it.
 */
export function checkTimeoutMs(ms: unknown, what: string, options: { infinite?: boolean | undefined } = {}): number {
  const problem = timeoutMsProblem(ms, options);
  if (problem === undefined) return ms as number;
  throw typeof ms === 'number' ? new RangeError(`${what} ${problem}`) : new TypeError(`${what} ${problem}`);
}
