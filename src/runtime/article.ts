/**
 * How messages name a type: "a" or "an" before its name ("an Int16Array", "a Uint16Array": by the
 * sound, so a leading U, said "you", takes "a").
 */

/** `name` with its indefinite article. */
export function withArticle(name: string): string {
  return `${/^[AEIOaeio]/.test(name) ? 'an' : 'a'} ${name}`;
}

/** A value's type as a message names it: `null`, `an Array`, `a Float32Array`, or its typeof. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object')
    return withArticle((value as { constructor?: { name?: string } }).constructor?.name ?? 'object');
  return typeof value;
}
