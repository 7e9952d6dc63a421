import { describe, expect, it } from 'vitest';
import { checkBatchCounts, checkJobCounts, scanJson, scanJsonText } from '../../../src/server/json-scan.js';

/** Texts with strings (escaped quotes, brackets inside), sparse and dense structure, bad JSON: the scan runs before the parse. */
const TEXTS = [
  JSON.stringify({ items: Array.from({ length: 32 }, (_, r) => Array.from({ length: 64 }, (_, i) => r + i / 7)) }),
  JSON.stringify({ signal: Array.from({ length: 5000 }, (_, i) => i / 3), flags: ['stft'], s: 'a\\"[b\\\\', t: '{[' }),
  `{"signal":[${'[0],'.repeat(5000)}[0]]}`,
  '{"a":"\\\\\\"[[[", "b":[1,2,[3]]}',
  '{"x":"unterminated [[[',
  '[,,,[]]',
  '"\\\\"[[',
  '{"s":"é[ü]","v":[1,2]}',
];

describe('scanJsonText: the counts of the exact pass (scanJson), found faster', () => {
  it('counts what scanJson counts, sparse or dense', () => {
    for (const text of TEXTS) {
      const exact = scanJson(text);
      const fast = scanJsonText(text);
      expect({ values: fast.values, arrays: fast.arrays, maxDepth: fast.maxDepth }).toEqual({ values: exact.values, arrays: exact.arrays, maxDepth: exact.maxDepth });
    }
  });

  it('refuses nesting past the limit as scanJson does, sparse or dense', () => {
    for (const text of [`{"signal":${'['.repeat(40)}${']'.repeat(40)}}`, `${'[0],'.repeat(3000)}${'['.repeat(40)}`]) {
      expect(() => scanJson(text)).toThrow(/nested deeper/);
      expect(() => scanJsonText(text)).toThrow(/nested deeper/);
    }
  });

  it('the checks refuse the same texts from either scan', () => {
    const verdict = (f: () => void): string => {
      try {
        f();
        return 'ok';
      } catch (error) {
        return (error as { code?: string }).code ?? 'error';
      }
    };
    for (const text of TEXTS)
      for (const [maxSamples, maxItems] of [
        [1 << 26, 4096],
        [100, 10],
        [4, 1],
      ] as const) {
        const exact = scanJson(text);
        const fast = scanJsonText(text);
        expect(verdict(() => checkJobCounts(fast, maxSamples))).toBe(verdict(() => checkJobCounts(exact, maxSamples)));
        expect(verdict(() => checkBatchCounts(fast, maxItems))).toBe(verdict(() => checkBatchCounts(exact, maxItems)));
      }
  });
});
