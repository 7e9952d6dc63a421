/**
 * The checks of a count or a size: `positiveInteger` (a safe integer of at least 1) and
 * `integerOption` (a safe integer in a range, with a default). Every layer's options and arguments
 * that must be one (lanes, maxQueued, nperseg, a server limit, a queue's byte limits) go through
 * them, so the rules and the sentences that name a wrong value are decided here once.
 */

/** Longest bad value an error message quotes; longer ones are cut (a 15 KB label is not echoed back). */
export const MAX_QUOTED_CHARS = 100;

/** `text` cut to MAX_QUOTED_CHARS characters, saying how long it was. */
export function clip(text: string): string {
  return text.length <= MAX_QUOTED_CHARS ? text : `${text.slice(0, MAX_QUOTED_CHARS)}... (${text.length} characters)`;
}

/** Longest error message clipMessage() lets through. */
export const MAX_MESSAGE_CHARS = 1000;

/**
 * `message` with every run of more than MAX_QUOTED_CHARS characters without a space cut by clip(),
 * and the whole cut past MAX_MESSAGE_CHARS: a bad value is quoted, never echoed whole. One pass
 * over the text (a regular expression over a 10 MB run overflowed V8's stack).
 */
export function clipMessage(message: string): string {
  if (message.length <= MAX_QUOTED_CHARS) return message;
  // Spaces and control characters separate runs (enough for messages; a char code test per character).
  const isSpace = (i: number): boolean => message.charCodeAt(i) <= 32;
  let out = '';
  let at = 0;
  while (at < message.length && out.length <= MAX_MESSAGE_CHARS) {
    let end = at;
    const space = isSpace(at);
    while (end < message.length && isSpace(end) === space) end++;
    const part = message.slice(at, end);
    out += space ? part : clip(part);
    at = end;
  }
  return out.length <= MAX_MESSAGE_CHARS && at >= message.length ? out : `${out.slice(0, MAX_MESSAGE_CHARS)}... (cut)`;
}

/** A value as an error message shows it: strings quoted (cut past MAX_QUOTED_CHARS), numbers as they print, objects by kind. */
export function shownValue(value: unknown): string {
  if (typeof value === 'string') return clip(JSON.stringify(value));
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** `value` when it is a safe integer >= 1; else a RangeError "`what` must be a positive integer, got …". */
export function positiveInteger(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${what} must be a positive integer, got ${shownValue(value)}`);
  return value;
}

/** `value` when it is a safe integer in [min, max], `fallback` when undefined; else a RangeError naming `name`. */
export function integerOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${shownValue(value)}`);
  return value;
}

/** `path.key`, or `path["key"]` when the key is not an identifier (a label name with a space): how messages name an option. */
export function member(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${clip(JSON.stringify(key))}]`;
}

/**
 * Throws TypeError `<what>.<key>: unknown option (known: …)` for the first key of `options` not in
 * `known`: a misspelt option (`concurent: false`) would otherwise silently mean its default.
 */
export function knownKeys(options: object, known: readonly string[], what: string): void {
  for (const key of Object.keys(options))
    if (!known.includes(key)) throw new TypeError(`${member(what, key)}: unknown option (known: ${known.join(', ')})`);
}
