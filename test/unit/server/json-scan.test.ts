import { describe, expect, it } from 'vitest';
import {
  JOB_BOUNDS,
  JsonScanner,
  batchBounds,
  checkBatchCounts,
  checkJobCounts,
  scanJson,
  type JsonCounts,
  type ScanBounds,
} from '../../../src/server/json-scan.js';

/** Texts with strings (escaped quotes and backslashes, brackets inside, multi-byte characters), sparse and dense structure, bad JSON: the scan runs before the parse. */
const TEXTS = [
  JSON.stringify({ items: Array.from({ length: 32 }, (_, r) => Array.from({ length: 64 }, (_, i) => r + i / 7)) }),
  JSON.stringify({ signal: Array.from({ length: 5000 }, (_, i) => i / 3), flags: ['stft'], s: 'a\\"[b\\\\', t: '{[' }),
  `{"signal":[${'[0],'.repeat(5000)}[0]]}`,
  '{"a":"\\\\\\"[[[", "b":[1,2,[3]]}',
  '{"x":"unterminated [[[',
  '[,,,[]]',
  '"\\\\"[[',
  '{"s":"é[ü]","v":[1,2]}',
  `{"k":{${Array.from({ length: 300 }, (_, i) => `"k${i}\\\\":{"v":[${i}]}`).join(',')}}}`,
];

/** The scan fed `text` in chunks of `size` bytes; its counts, or the code it refused with. */
function chunked(text: string, size: number, bounds?: ScanBounds): JsonCounts | string {
  const scanner = new JsonScanner(bounds);
  const bytes = Buffer.from(text);
  try {
    for (let at = 0; at < bytes.length; at += size) scanner.feed(bytes.subarray(at, at + size));
  } catch (error) {
    return (error as { code?: string }).code ?? 'error';
  }
  return scanner.counts();
}

function whole(text: string, bounds?: ScanBounds): JsonCounts | string {
  try {
    return scanJson(text, bounds);
  } catch (error) {
    return (error as { code?: string }).code ?? 'error';
  }
}

describe('JsonScanner: the same counts and refusals however the body is cut into chunks', () => {
  it('counts what a whole-text scan counts, at every chunk size', () => {
    for (const text of TEXTS)
      for (const size of [1, 2, 3, 7, 64, 1000])
        for (const bounds of [undefined, JOB_BOUNDS, batchBounds(10)])
          expect(chunked(text, size, bounds), `${text.slice(0, 40)} in ${size}-byte chunks`).toEqual(
            whole(text, bounds),
          );
  });

  it('an escaped quote cut from its backslash by a chunk boundary still stays in the string', () => {
    const text = '{"a":"x\\"[[[[","b":[1]}';
    const at = text.indexOf('\\') + 1;
    const scanner = new JsonScanner();
    scanner.feed(Buffer.from(text.slice(0, at)));
    scanner.feed(Buffer.from(text.slice(at)));
    expect(scanner.counts()).toMatchObject({ arrays: 1, objects: 1, keys: 2, maxDepth: 2 });
  });

  it('refuses nesting past the limit, whole or chunked', () => {
    for (const text of [`{"signal":${'['.repeat(40)}${']'.repeat(40)}}`, `${'[0],'.repeat(3000)}${'['.repeat(40)}`]) {
      expect(() => scanJson(text)).toThrow(/nested deeper/);
      expect(chunked(text, 5)).toBe('too_deep');
    }
  });

  it('a flood is refused on the chunk that shows it, not at the end of the body', () => {
    const scanner = new JsonScanner(JOB_BOUNDS);
    const flood = Buffer.from(`{"signal":[${'{},'.repeat(100_000)}{}]}`);
    let fed = 0;
    expect(() => {
      for (; fed < flood.length; fed += 1024) scanner.feed(flood.subarray(fed, fed + 1024));
    }).toThrow(/more than 1024 JSON objects/);
    expect(fed).toBeLessThan(8 * 1024);
  });

  it('the checks refuse the same texts from either way of scanning', () => {
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
        const pieces = chunked(text, 3) as JsonCounts;
        expect(verdict(() => checkJobCounts(pieces, maxSamples))).toBe(
          verdict(() => checkJobCounts(exact, maxSamples)),
        );
        expect(verdict(() => checkBatchCounts(pieces, maxItems))).toBe(
          verdict(() => checkBatchCounts(exact, maxItems)),
        );
      }
  });
});
