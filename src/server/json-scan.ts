/**
 * One linear pass over a JSON body's bytes as they arrive, before anything parses it: counts its
 * values (commas + 1), arrays, objects and keys, and its nesting depth, outside strings.
 * JSON.parse builds an object per value, and a body within its byte limit can ask for far more
 * heap and time than its size (measured on 16 MiB: five million `{}` 5 s, 1.4 million keys 2 s,
 * 1.6 million `[lo, hi]` bands 1.3 s, against 0.1-0.2 s for as many bytes of numbers) or for more
 * samples than a request may carry. The counts a route allows (`ScanBounds`) are checked as the
 * scan goes, chunk by chunk: a flood of objects, keys or short arrays is refused within its first
 * kilobytes, before the rest of it is read, and no chunk's scan holds the event loop long.
 */
import { MIN_SERIES_LENGTH } from '../engine/validate.js';
import { HttpError } from './errors.js';

/** Deepest nesting a job or batch body needs (a 2-D signal, bands, stage parameters) with room to spare. */
export const MAX_JSON_DEPTH = 32;
/** Arrays a body may have beyond one per `valuesPerArray` values (a few bands, short vectors). */
const ARRAY_ALLOWANCE = 1024;
/** Objects a job body may hold: the body, `stageParams` and what registered stages take, with room to spare. */
export const MAX_JOB_OBJECTS = 1024;
/** Keys a job body may hold (its parameters and the stages' own), with room to spare: 4096 keys parse in a few ms. */
export const MAX_JOB_KEYS = 4096;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_SQUARE = 0x5b;
const CLOSE_SQUARE = 0x5d;
const OPEN_CURLY = 0x7b;
const CLOSE_CURLY = 0x7d;

/** What a route's body may hold, checked while the scan runs: a count past its bound throws at once. */
export interface ScanBounds {
  /** Most objects (`{`). */
  readonly objects: number;
  /** Most keys (`"name":`). */
  readonly keys: number;
  /** Most arrays, absolutely. */
  readonly arrays: number;
  /** The refusal past `arrays` (default: a 413 naming the count). */
  readonly tooManyArrays?: ((arrays: number) => HttpError) | undefined;
  /**
   * Arrays beyond ARRAY_ALLOWANCE need this many values each (0: no such rule). True of every
   * prefix of a body whose rows hold at least so many samples, so a flood of short arrays is
   * refused as it starts.
   */
  readonly valuesPerArray: number;
}

/** The bounds of a job body: rows of a 2-D signal hold at least MIN_SERIES_LENGTH samples. */
export const JOB_BOUNDS: ScanBounds = {
  objects: MAX_JOB_OBJECTS,
  keys: MAX_JOB_KEYS,
  arrays: Number.POSITIVE_INFINITY,
  valuesPerArray: MIN_SERIES_LENGTH,
};

/** The bounds of a batch body of at most `maxItems` items: an item is an array, or an object of at most two arrays and three keys (lerp, slerp). */
export function batchBounds(maxItems: number): ScanBounds {
  return {
    objects: maxItems + 16,
    keys: 3 * maxItems + 16,
    arrays: 2 * maxItems + 2,
    tooManyArrays: (arrays) => tooManyItems(arrays, maxItems),
    valuesPerArray: 0,
  };
}

/** No bound but the depth: the counts alone. */
const UNBOUNDED: ScanBounds = {
  objects: Number.POSITIVE_INFINITY,
  keys: Number.POSITIVE_INFINITY,
  arrays: Number.POSITIVE_INFINITY,
  valuesPerArray: 0,
};

/** What a scan counted. */
export interface JsonCounts {
  /** Values between separators (commas + 1): an upper bound of the numbers. */
  readonly values: number;
  readonly arrays: number;
  readonly objects: number;
  /** Keys (colons outside strings). */
  readonly keys: number;
  readonly maxDepth: number;
  /** Bytes scanned. */
  readonly length: number;
}

/**
 * The scan, fed a body's chunks in order. Structural characters are ASCII, which UTF-8 never uses
 * inside a multi-byte character, so the bytes are scanned as they come, never decoded.
 */
export class JsonScanner {
  readonly #bounds: ScanBounds;
  #depth = 0;
  #maxDepth = 0;
  #commas = 0;
  #arrays = 0;
  #objects = 0;
  #keys = 0;
  #length = 0;
  /** Inside a string, as the previous chunk ended. */
  #inString = false;
  /** The previous chunk ended inside a string on a backslash: this chunk's first byte is escaped. */
  #escapeNext = false;

  constructor(bounds: ScanBounds = UNBOUNDED) {
    this.#bounds = bounds;
  }

  /** Scans the next chunk; throws a 400 past MAX_JSON_DEPTH and a 413 (or the bound's own refusal) past a bound. */
  feed(chunk: Uint8Array): void {
    const bounds = this.#bounds;
    const perArray = bounds.valuesPerArray;
    let inString = this.#inString;
    let i = 0;
    if (this.#escapeNext) {
      this.#escapeNext = false;
      i = 1;
    }
    const n = chunk.length;
    for (; i < n; i++) {
      const c = chunk[i]!;
      if (inString) {
        if (c === BACKSLASH) {
          if (i + 1 === n) this.#escapeNext = true;
          i++;
        } else if (c === QUOTE) inString = false;
        continue;
      }
      // Numbers and white space, nearly every byte of a signal: one comparison each.
      if (c < QUOTE || (c > QUOTE && c < COMMA) || (c > COMMA && c < COLON)) continue;
      if (c === QUOTE) inString = true;
      else if (c === COMMA) this.#commas++;
      else if (c === COLON) {
        if (++this.#keys > bounds.keys) throw tooMany('keys', this.#keys, bounds.keys);
      } else if (c === OPEN_SQUARE || c === OPEN_CURLY) {
        if (c === OPEN_SQUARE) {
          const arrays = ++this.#arrays;
          if (arrays > bounds.arrays) throw bounds.tooManyArrays?.(arrays) ?? tooMany('arrays', arrays, bounds.arrays);
          if (perArray > 0 && arrays > ARRAY_ALLOWANCE && arrays > ARRAY_ALLOWANCE + (this.#commas + 1) / perArray)
            throw shortArrays(arrays, this.#commas + 1, perArray);
        } else if (++this.#objects > bounds.objects) throw tooMany('objects', this.#objects, bounds.objects);
        if (++this.#depth > this.#maxDepth) {
          this.#maxDepth = this.#depth;
          if (this.#depth > MAX_JSON_DEPTH) throw tooDeep();
        }
      } else if (c === CLOSE_SQUARE || c === CLOSE_CURLY) this.#depth--;
    }
    this.#inString = inString;
    this.#length += n;
  }

  /** The counts so far (all of them once the last chunk is fed). */
  counts(): JsonCounts {
    return {
      values: this.#commas + 1,
      arrays: this.#arrays,
      objects: this.#objects,
      keys: this.#keys,
      maxDepth: this.#maxDepth,
      length: this.#length,
    };
  }
}

/** The scan of a whole text at once (tests, and callers that hold the text): its counts, or the scan's refusal. */
export function scanJson(text: string | Uint8Array, bounds: ScanBounds = UNBOUNDED): JsonCounts {
  const scanner = new JsonScanner(bounds);
  scanner.feed(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
  return scanner.counts();
}

/** A 413 for a body with more of `what` than its route takes, naming binary bodies for large signals. */
function tooMany(what: string, count: number, bound: number): HttpError {
  return new HttpError(
    413,
    'too_complex_json',
    `body: more than ${bound} JSON ${what} (at least ${count}), more than a request of this route holds; send large signals as binary bodies (application/octet-stream)`,
    { field: 'body' },
  );
}

/** A 400 for more arrays than their values can fill as rows of `perArray` samples. */
function shortArrays(arrays: number, values: number, perArray: number): HttpError {
  return new HttpError(
    400,
    'invalid_field',
    `signal: ${arrays} arrays for ${values} values: rows of a 2-D signal need at least ${perArray} samples each`,
    { field: 'signal' },
  );
}

function tooDeep(): HttpError {
  return new HttpError(400, 'too_deep', `body: nested deeper than ${MAX_JSON_DEPTH} levels`, { field: 'body' });
}

function tooManyItems(arrays: number, maxItems: number): HttpError {
  return new HttpError(413, 'too_many_items', `items: about ${arrays} arrays, more than ${maxItems} items can hold`, {
    field: 'items',
  });
}

/** A job body's counts: at most `maxSamples` numbers (and room for parameters), and no more arrays than its values can fill as rows of MIN_SERIES_LENGTH samples. */
export function checkJobCounts(counts: JsonCounts, maxSamples: number): void {
  const { arrays, values } = counts;
  const maxValues = maxSamples + ARRAY_ALLOWANCE * 64;
  if (values > maxValues)
    throw new HttpError(
      413,
      'too_many_samples',
      `body: about ${values} values, more than the ${maxSamples} samples a request may carry`,
      { field: 'signal' },
    );
  if (arrays > ARRAY_ALLOWANCE && arrays > ARRAY_ALLOWANCE + values / MIN_SERIES_LENGTH)
    throw shortArrays(arrays, values, MIN_SERIES_LENGTH);
}

/** A batch body's counts: at most two arrays per item (lerp and slerp items carry two vectors). */
export function checkBatchCounts(counts: JsonCounts, maxItems: number): void {
  if (counts.arrays > 2 * maxItems + 2) throw tooManyItems(counts.arrays, maxItems);
}
