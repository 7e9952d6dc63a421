// The JSON pre-scan at the edge of each documented limit (depth 32, 1024 objects and 4096 keys in a
// job body, a batch's items, the 1024-array allowance with 4 samples per row, the sample limit), each
// check called on its own rather than through a route whose later checks answer with the same
// status, and counts written out by hand for texts whose strings hide brackets, quotes and colons.
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/server/errors.js';
import {
  JOB_BOUNDS,
  MAX_JOB_KEYS,
  MAX_JOB_OBJECTS,
  MAX_JSON_DEPTH,
  batchBounds,
  checkBatchCounts,
  checkJobCounts,
  JsonScanner,
  scanJson,
  type JsonCounts,
  type ScanBounds,
} from '../../../src/server/json-scan.js';

/** The scan fed one byte at a time, as a body might arrive: a string, an escape or a count cut across chunks. */
function byteByByte(text: string, bounds?: ScanBounds): JsonCounts {
  const scanner = new JsonScanner(bounds);
  for (const byte of Buffer.from(text)) scanner.feed(Uint8Array.of(byte));
  return scanner.counts();
}

const SCANS = [
  ['scanJson', scanJson],
  ['JsonScanner fed byte by byte', byteByByte],
] as const;

function httpErrorOf(action: () => unknown): HttpError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  return expect.unreachable('expected an HttpError');
}

/** `{"signal": [[0], [0], ...]}`-like: `rows` one-sample rows inside one array. */
const rowsOf = (rows: number): string => `[${Array.from({ length: rows }, () => '[0]').join(',')}]`;
/** Numbers only: `n` values in one array, dense enough for the exact pass. */
const numbersOf = (n: number): string => `[${Array.from({ length: n }, (_, i) => i % 10).join(',')}]`;

describe.each(SCANS)('%s', (_name, scan) => {
  it('counts by hand: strings hide brackets, braces, commas, colons and escaped quotes', () => {
    const text = '{"a\\"[{,:": "x]}\\\\", "b" :\n[1, 2, {"c"\t: [3]}], "d": "e:"}';
    expect(JSON.parse(text)).toBeTypeOf('object');
    const counts = scan(text);
    expect({
      values: counts.values,
      arrays: counts.arrays,
      objects: counts.objects,
      keys: counts.keys,
      maxDepth: counts.maxDepth,
      length: counts.length,
    }).toEqual({
      values: 5,
      arrays: 2,
      objects: 2,
      keys: 4,
      maxDepth: 4,
      length: text.length,
    });
  });

  it('a string that ends the text counts no key, and nothing after an unterminated string counts', () => {
    expect(scan('["a"').keys).toBe(0);
    const counts = scan('{"a": "[[[{{');
    expect([counts.arrays, counts.objects, counts.keys, counts.maxDepth]).toEqual([0, 1, 1, 1]);
  });

  it(`takes nesting of exactly ${MAX_JSON_DEPTH} levels and refuses one more (400 too_deep)`, () => {
    expect(MAX_JSON_DEPTH).toBe(32);
    const deepest = `${'[{"a":'.repeat(16)}0${'}]'.repeat(16)}`;
    expect(scan(deepest).maxDepth).toBe(32);
    const error = httpErrorOf(() => scan(`[${deepest}]`));
    expect([error.statusCode, error.code, error.field, error.message]).toEqual([
      400,
      'too_deep',
      'body',
      'body: nested deeper than 32 levels',
    ]);
  });

  it('depth falls on each closing bracket and brace: siblings do not add up', () => {
    expect(scan(`[${'[{}],'.repeat(40)}0]`).maxDepth).toBe(3);
  });

  it('literals and letters between brackets change no count: they hide no nesting', () => {
    expect(scan('[true,[false,[null,{"a":nullx}]]]').maxDepth).toBe(4);
    expect(() => scan(`${'[true,'.repeat(33)}0${']'.repeat(33)}`)).toThrow(/nested deeper than 32 levels/);
  });

  // Each bound checked in dense text and in text with padding between the values.
  it.each(['', ' '.repeat(200)])(
    `a job body takes exactly ${MAX_JOB_OBJECTS} objects and ${MAX_JOB_KEYS} keys, and refuses one more of each (413 too_complex_json; padding %j)`,
    (pad) => {
      expect([MAX_JOB_OBJECTS, MAX_JOB_KEYS]).toEqual([1024, 4096]);
      const objects = (n: number): string => `[${Array.from({ length: n }, () => '{}').join(`,${pad}`)}]`;
      expect(scan(objects(1024), JOB_BOUNDS).objects).toBe(1024);
      const tooManyObjects = httpErrorOf(() => scan(objects(1025), JOB_BOUNDS));
      expect([tooManyObjects.statusCode, tooManyObjects.code, tooManyObjects.field]).toEqual([
        413,
        'too_complex_json',
        'body',
      ]);
      expect(tooManyObjects.message).toMatch(/^body: more than 1024 JSON objects \(at least 1025\)/);
      const keys = (n: number): string => `{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(`,${pad}`)}}`;
      expect(scan(keys(4096), JOB_BOUNDS).keys).toBe(4096);
      expect(httpErrorOf(() => scan(keys(4097), JOB_BOUNDS)).message).toMatch(
        /^body: more than 4096 JSON keys \(at least 4097\)/,
      );
    },
  );

  it.each(['', ' '.repeat(200)])(
    'a batch of 10 items takes 22 arrays, 26 objects and 46 keys, and refuses one more of each (padding %j)',
    (pad) => {
      const bounds = batchBounds(10);
      const arrays = (n: number): string => `{"items":[${Array.from({ length: n - 1 }, () => '[1]').join(`,${pad}`)}]}`;
      expect(scan(arrays(22), bounds).arrays).toBe(22);
      const items = httpErrorOf(() => scan(arrays(23), bounds));
      expect([items.statusCode, items.code, items.field, items.message]).toEqual([
        413,
        'too_many_items',
        'items',
        'items: about 23 arrays, more than 10 items can hold',
      ]);
      const objects = (n: number): string => `[${Array.from({ length: n }, () => '{}').join(`,${pad}`)}]`;
      expect(scan(objects(26), bounds).objects).toBe(26);
      expect(httpErrorOf(() => scan(objects(27), bounds)).message).toMatch(/more than 26 JSON objects/);
      const keys = (n: number): string => `{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(`,${pad}`)}}`;
      expect(scan(keys(46), bounds).keys).toBe(46);
      expect(httpErrorOf(() => scan(keys(47), bounds)).message).toMatch(/more than 46 JSON keys/);
    },
  );

  it.each(['', ' '.repeat(200)])('without bounds, counts past every job bound are only counted (padding %j)', (pad) => {
    const text = `[${Array.from({ length: 2000 }, (_, i) => `{"k${i}":[0]}`).join(`,${pad}`)}]`;
    const counts = scan(text);
    expect([counts.arrays, counts.objects, counts.keys, counts.values]).toEqual([2001, 2000, 2000, 2000]);
  });
});

describe('the array allowance: 1024 arrays free, each one beyond needs 4 values', { timeout: 10_000 }, () => {
  // rowsOf(k): k + 1 arrays, k values; refused once k + 1 > 1024 + k / 4, that is from k = 1365.
  it('checkJobCounts takes 1364 one-sample rows and refuses 1365 (400 naming signal)', () => {
    expect(() => checkJobCounts(scanJson(rowsOf(1364)), 1 << 20)).not.toThrow();
    const error = httpErrorOf(() => checkJobCounts(scanJson(rowsOf(1365)), 1 << 20));
    expect([error.statusCode, error.code, error.field]).toEqual([400, 'invalid_field', 'signal']);
    expect(error.message).toBe(
      'signal: 1366 arrays for 1365 values: rows of a 2-D signal need at least 4 samples each',
    );
  });

  it('up to 1024 arrays need no values at all', () => {
    const empty = `[${Array.from({ length: 1023 }, () => '[]').join(',')}]`;
    expect(() => checkJobCounts(scanJson(empty), 1 << 20)).not.toThrow();
  });

  it('the scan with the job bounds refuses a flood of short rows as it reads them, with the same message', () => {
    expect(() => scanJson(rowsOf(1364), JOB_BOUNDS)).not.toThrow();
    const error = httpErrorOf(() => scanJson(`${rowsOf(1365)}`, JOB_BOUNDS));
    expect([error.statusCode, error.field]).toEqual([400, 'signal']);
    // Refused at the 1365th row's bracket: 1366 arrays (the outer one too) for 1365 values so far.
    expect(error.message).toBe(
      'signal: 1366 arrays for 1365 values: rows of a 2-D signal need at least 4 samples each',
    );
  });
});

describe('checkJobCounts: the sample limit on its own', { timeout: 10_000 }, () => {
  // A body may carry maxSamples numbers and 65536 more (1024 arrays' worth of parameters).
  it('takes maxSamples + 65536 values and refuses one more (413 too_many_samples naming signal)', () => {
    const maxSamples = 1000;
    expect(() => checkJobCounts(scanJson(numbersOf(maxSamples + 65_536)), maxSamples)).not.toThrow();
    const error = httpErrorOf(() => checkJobCounts(scanJson(numbersOf(maxSamples + 65_537)), maxSamples));
    expect([error.statusCode, error.code, error.field]).toEqual([413, 'too_many_samples', 'signal']);
    expect(error.message).toBe('body: about 66537 values, more than the 1000 samples a request may carry');
  });

  it('a long text of few values (long strings, spaces) is not refused for its length', () => {
    const counts: JsonCounts = { values: 10, arrays: 1, objects: 1, keys: 1, maxDepth: 2, length: 1 << 22 };
    expect(() => checkJobCounts(counts, 16)).not.toThrow();
  });
});

describe('checkBatchCounts on its own', { timeout: 5_000 }, () => {
  it('takes two arrays per item and two more, refuses one more (413 too_many_items naming items)', () => {
    const counts = (arrays: number): JsonCounts => ({
      values: arrays,
      arrays,
      objects: 1,
      keys: 1,
      maxDepth: 3,
      length: 4 * arrays,
    });
    expect(() => checkBatchCounts(counts(22), 10)).not.toThrow();
    const error = httpErrorOf(() => checkBatchCounts(counts(23), 10));
    expect([error.statusCode, error.code, error.field, error.message]).toEqual([
      413,
      'too_many_items',
      'items',
      'items: about 23 arrays, more than 10 items can hold',
    ]);
  });
});
