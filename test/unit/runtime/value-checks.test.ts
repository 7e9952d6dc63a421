import { describe, expect, it } from 'vitest';
import {
  clip,
  clipMessage,
  knownKeys,
  MAX_MESSAGE_CHARS,
  MAX_QUOTED_CHARS,
  positiveInteger,
  shownValue,
} from '../../../src/runtime/value-checks.js';

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

describe('clipMessage', () => {
  it('cuts each run without a space past MAX_QUOTED_CHARS and the whole past MAX_MESSAGE_CHARS', () => {
    expect(clipMessage('a short message')).toBe('a short message');
    const cut = clipMessage(`bad value ${'y'.repeat(500)} here`);
    expect(cut).toMatch(/^bad value y{100}\.\.\. \(500 characters\) here$/);
    const many = clipMessage(Array.from({ length: 200 }, () => 'word'.repeat(20)).join(' '));
    expect(many.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS + 20);
    expect(many.endsWith('... (cut)')).toBe(true);
  });

  it('a 10 MB run is cut in one pass (a regular expression over it overflowed the stack)', () => {
    const t0 = performance.now();
    const cut = clipMessage(`accept: ${'text/html,'.repeat(1_000_000)}`);
    expect(cut).toMatch(/\(10000000 characters\)$/);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe('knownKeys', () => {
  it('names the first unknown key and the known ones; a key that is no identifier in brackets', () => {
    expect(() => knownKeys({ a: 1, b: 2 }, ['a', 'b'], 'options')).not.toThrow();
    expect(() => knownKeys({ a: 1, c: 2 }, ['a', 'b'], 'options')).toThrow(
      new TypeError('options.c: unknown option (known: a, b)'),
    );
    expect(() => knownKeys({ 'x y': 1 }, ['a'], 'options')).toThrow(
      new TypeError('options["x y"]: unknown option (known: a)'),
    );
  });
});
