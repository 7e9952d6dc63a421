/**
 * One linear pass over a JSON text before it is parsed: counts its numbers (values between
 * separators) and arrays, and its nesting depth, outside strings. JSON.parse builds an object per
 * value; a body within its byte limit can still ask for far more heap than its size (a million
 * one-sample rows: an array each) or for more samples than a request may carry. Those are
 * refused here, in about a millisecond per megabyte, before anything is built.
 */
import { HttpError } from './errors.js';

/** Deepest nesting a job or batch body needs (a 2-D signal, bands, stage parameters) with room to spare. */
export const MAX_JSON_DEPTH = 32;
/** Arrays a body may have beyond one per two values (bands are pairs; a row of a signal has at least 4 samples). */
const ARRAY_ALLOWANCE = 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_SQUARE = 0x5b;
const CLOSE_SQUARE = 0x5d;
const OPEN_CURLY = 0x7b;
const CLOSE_CURLY = 0x7d;

/** What a scan counted. */
export interface JsonCounts {
  /** Values between separators (commas + 1): an upper bound of the numbers. */
  values: number;
  arrays: number;
  maxDepth: number;
}

/** Counts `text`'s values, arrays and depth outside strings; throws a 400 as soon as it nests deeper than MAX_JSON_DEPTH. */
export function scanJson(text: Uint8Array): JsonCounts {
  let depth = 0;
  let maxDepth = 0;
  let commas = 0;
  let arrays = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === COMMA) commas++;
    else if (c === OPEN_SQUARE || c === OPEN_CURLY) {
      if (c === OPEN_SQUARE) arrays++;
      if (++depth > maxDepth) {
        maxDepth = depth;
        if (depth > MAX_JSON_DEPTH) throw new HttpError(400, 'too_deep', `body: nested deeper than ${MAX_JSON_DEPTH} levels`, { field: 'body' });
      }
    } else if (c === CLOSE_SQUARE || c === CLOSE_CURLY) depth--;
  }
  return { values: commas + 1, arrays, maxDepth };
}

/** A job body's counts: at most `maxSamples` numbers (and room for parameters), and no more arrays than its values can fill as rows of at least a few samples. */
export function checkJobCounts(counts: JsonCounts, maxSamples: number): void {
  const { values, arrays } = counts;
  if (values > maxSamples + ARRAY_ALLOWANCE * 64)
    throw new HttpError(413, 'too_many_samples', `body: about ${values} values, more than the ${maxSamples} samples a request may carry`, { field: 'signal' });
  if (arrays > ARRAY_ALLOWANCE + values / 2)
    throw new HttpError(400, 'invalid_field', `signal: ${arrays} arrays for ${values} values: rows of a 2-D signal need at least 4 samples each`, { field: 'signal' });
}

/** A batch body's counts: at most two arrays per item (lerp and slerp items carry two vectors). */
export function checkBatchCounts(counts: JsonCounts, maxItems: number): void {
  if (counts.arrays > 2 * maxItems + 2)
    throw new HttpError(413, 'too_many_items', `items: about ${counts.arrays} arrays, more than ${maxItems} items can hold`, { field: 'items' });
}
