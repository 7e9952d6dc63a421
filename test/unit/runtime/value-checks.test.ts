import { describe, expect, it } from 'vitest';
import { clip, MAX_QUOTED_CHARS, positiveInteger, shownValue } from '../../../src/runtime/value-checks.js';

describe('positiveInteger: the one check of a count or a size', () => {
  it('returns a safe integer >= 1 as it is', () => {
    expect(positiveInteger(1, 'lanes')).toBe(1);
    expect(positiveInteger(Number.MAX_SAFE_INTEGER, 'lanes')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([
    [0, 'got 0'],
    [-3, 'got -3'],
    [1.5, 'got 1.5'],
    [Number.NaN, 'got NaN'],
    [Infinity, 'got Infinity'],
    [2 ** 53, `got ${2 ** 53}`],
    ['4', 'got "4"'],
    [4n, 'got 4n'],
    [null, 'got null'],
    [undefined, 'got undefined'],
    [[4], 'got an array'],
    [{ n: 4 }, 'got an object'],
    [() => 4, 'got a function'],
  ])('refuses %p, naming the option and the value', (value, shown) => {
    expect(() => positiveInteger(value, 'maxQueued')).toThrow(RangeError);
    expect(() => positiveInteger(value, 'maxQueued')).toThrow(`maxQueued must be a positive integer, ${shown}`);
  });
});

describe('shownValue and clip', () => {
  it('quotes a long string cut to MAX_QUOTED_CHARS, saying how long it was', () => {
    const long = 'x'.repeat(5000);
    const shown = shownValue(long);
    expect(shown.length).toBeLessThan(MAX_QUOTED_CHARS + 40);
    expect(shown).toContain('(5002 characters)');
    expect(clip('short')).toBe('short');
  });
});
