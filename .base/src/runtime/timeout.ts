/**
 * Timeouts a Node timer can hold. setTimeout() takes at most 2^31-1 ms (about 24.8 days); a larger
 * delay (or NaN) silently becomes 1 ms, so a bound meant as "almost never" fires at once. Every
 * tscuda API that takes a timeout checks it here first.
 */

/** The longest delay setTimeout() honours: 2^31-1 ms. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Throws RangeError naming `what` unless `ms` is a number in 0..2^31-1 (Infinity is allowed
 * where `infinite` says so: no timeout). Returns it.
 */
export function checkTimeoutMs(ms: unknown, what: string, options: { infinite?: boolean | undefined } = {}): number {
  if (typeof ms !== 'number') throw new TypeError(`${what} must be a number of milliseconds, got ${ms === null ? 'null' : typeof ms}`);
  if (ms === Infinity && options.infinite) return ms;
  if (!(ms >= 0 && ms <= MAX_TIMEOUT_MS)) {
    throw new RangeError(`${what} must be 0..${MAX_TIMEOUT_MS} ms (the most a Node timer holds)${options.infinite ? ', or Infinity for none' : ''}, got ${ms}`);
  }
  return ms;
}
