/** The library's one timeout rule: what a Node timer can hold (issue 22). */
import { describe, expect, it, vi } from 'vitest';
import { checkTimeoutMs, MAX_TIMEOUT_MS, timeoutMsProblem } from '../../../src/runtime/timeout.js';

describe('checkTimeoutMs / timeoutMsProblem', () => {
  it('takes 0..2^31-1 ms, fractions included', () => {
    for (const ms of [0, 0.5, 1, 1000, MAX_TIMEOUT_MS]) {
      expect(checkTimeoutMs(ms, 'x')).toBe(ms);
      expect(timeoutMsProblem(ms)).toBeUndefined();
    }
    expect(MAX_TIMEOUT_MS).toBe(2147483647);
  });

  it('refuses negative, non-finite and too-long delays with a RangeError naming the option', () => {
    for (const ms of [-1, -0.001, Number.NaN, Infinity, -Infinity, MAX_TIMEOUT_MS + 1, 2 ** 53, 1e21]) {
      expect(() => checkTimeoutMs(ms, 'thing: timeoutMs')).toThrow(RangeError);
      expect(() => checkTimeoutMs(ms, 'thing: timeoutMs')).toThrow(
        `thing: timeoutMs must be 0..2147483647 ms (the most a Node timer holds), got ${ms}`,
      );
    }
  });

  it('refuses a non-number with a TypeError', () => {
    expect(() => checkTimeoutMs('10', 'a')).toThrow(new TypeError('a must be a number of milliseconds, got string'));
    expect(() => checkTimeoutMs(null, 'a')).toThrow(/got null/);
    expect(() => checkTimeoutMs(10n, 'a')).toThrow(/got bigint/);
  });

  it('takes Infinity only where the option means "no timeout"', () => {
    expect(checkTimeoutMs(Infinity, 'a', { infinite: true })).toBe(Infinity);
    expect(() => checkTimeoutMs(Number.NaN, 'a', { infinite: true })).toThrow(/, or Infinity for none, got NaN/);
  });

  it('agrees with what setTimeout does: 2^31 ms fires at once (the reason for the bound)', async () => {
    // Node says so with a TimeoutOverflowWarning: caught here, so a passing npm test prints none.
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const fired = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(true), MAX_TIMEOUT_MS + 1);
        setTimeout(() => {
          clearTimeout(t);
          resolve(false);
        }, 200);
      });
      expect(fired).toBe(true);
      expect(warn.mock.calls.some(([w]) => String(w).includes('does not fit into a 32-bit signed integer'))).toBe(true);
    } finally {
      warn.mockRestore();
    }
  });
});
