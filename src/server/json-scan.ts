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
  readonly values: number;
  readonly arrays: number;
  readonly maxDepth: number;
  /** Characters scanned: `values` is at most this + 1, so a check can often do without it. */
  readonly length: number;
}

/** The structural characters of JSON but the commas: what scanJsonText looks for. */
const STRUCTURE = /["[\]{}]/g;
/** Structural characters scanJsonText finds one by one before it weighs their density. */
const SPARSE_AFTER = 1024;
/** Fewer structural characters than one per this many, and finding them one by one beats reading every character. */
const SPARSE_SPAN = 64;

/**
 * scanJson's counts and refusal, found faster on the bodies that
 * come (numbers between a few brackets): arrays and depth from the structural characters alone
 * (a regular expression skips the numbers in native code), and `values`, which costs a look at
 * every character, counted only when read: checkJobCounts reads it only when the text is long
 * enough or has arrays enough for it to matter, checkBatchCounts never. Dense texts (more than
 * one structural character in SPARSE_SPAN) are read character by character, as scanJson does.
 */
export function scanJsonText(text: string): JsonCounts {
  const structure = sparseStructure(text);
  if (structure === undefined) return scanJson(text);
  return new LazyCounts(text, structure.arrays, structure.maxDepth);
}

/** Counts whose `values` is counted on first read (a class: an object literal with a getter per call measured 8x slower). */
class LazyCounts implements JsonCounts {
  readonly #text: string;
  #values: number | undefined;
  readonly arrays: number;
  readonly maxDepth: number;
  readonly length: number;

  constructor(text: string, arrays: number, maxDepth: number) {
    this.#text = text;
    this.arrays = arrays;
    this.maxDepth = maxDepth;
    this.length = text.length;
  }

  get values(): number {
    return (this.#values ??= scanJson(this.#text).values);
  }
}

/** Arrays and depth of `text` from its structural characters, or undefined once they turn out dense. */
function sparseStructure(text: string): { arrays: number; maxDepth: number } | undefined {
  let depth = 0;
  let maxDepth = 0;
  let arrays = 0;
  let found = 0;
  STRUCTURE.lastIndex = 0;
  while (STRUCTURE.test(text)) {
    const at = STRUCTURE.lastIndex - 1;
    if (++found > SPARSE_AFTER && found * SPARSE_SPAN > at) return undefined;
    const c = text.charCodeAt(at);
    if (c === QUOTE) {
      // To the closing quote: one not escaped by an odd run of backslashes (none: the text ends in the string).
      let end = text.indexOf('"', at + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) break;
      STRUCTURE.lastIndex = end + 1;
    } else if (c === OPEN_SQUARE || c === OPEN_CURLY) {
      if (c === OPEN_SQUARE) arrays++;
      if (++depth > maxDepth) {
        maxDepth = depth;
        if (depth > MAX_JSON_DEPTH) throw tooDeep();
      }
    } else depth--;
  }
  return { arrays, maxDepth };
}

/** Whether the quote at `at` is escaped: an odd number of backslashes right before it. */
function escaped(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && text.charCodeAt(i) === BACKSLASH) i--;
  return (at - 1 - i) % 2 === 1;
}

/**
 * The exact pass: counts `text`'s values, arrays and depth outside strings, character by
 * character; throws a 400 as soon as it nests deeper than MAX_JSON_DEPTH.
 */
export function scanJson(text: string): JsonCounts {
  let depth = 0;
  let maxDepth = 0;
  let commas = 0;
  let arrays = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
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
        if (depth > MAX_JSON_DEPTH) throw tooDeep();
      }
    } else if (c === CLOSE_SQUARE || c === CLOSE_CURLY) depth--;
  }
  return { values: commas + 1, arrays, maxDepth, length: text.length };
}

function tooDeep(): HttpError {
  return new HttpError(400, 'too_deep', `body: nested deeper than ${MAX_JSON_DEPTH} levels`, { field: 'body' });
}

/** A job body's counts: at most `maxSamples` numbers (and room for parameters), and no more arrays than its values can fill as rows of at least a few samples. */
export function checkJobCounts(counts: JsonCounts, maxSamples: number): void {
  const { arrays } = counts;
  const maxValues = maxSamples + ARRAY_ALLOWANCE * 64;
  // `values` (at most length + 1, and at least 1) is read only where it can decide: scanJsonText counts it on demand.
  if (counts.length + 1 > maxValues && counts.values > maxValues)
    throw new HttpError(413, 'too_many_samples', `body: about ${counts.values} values, more than the ${maxSamples} samples a request may carry`, { field: 'signal' });
  if (arrays > ARRAY_ALLOWANCE && arrays > ARRAY_ALLOWANCE + counts.values / 2)
    throw new HttpError(400, 'invalid_field', `signal: ${arrays} arrays for ${counts.values} values: rows of a 2-D signal need at least 4 samples each`, { field: 'signal' });
}

/** A batch body's counts: at most two arrays per item (lerp and slerp items carry two vectors). */
export function checkBatchCounts(counts: JsonCounts, maxItems: number): void {
  if (counts.arrays > 2 * maxItems + 2)
    throw new HttpError(413, 'too_many_items', `items: about ${counts.arrays} arrays, more than ${maxItems} items can hold`, { field: 'items' });
}
