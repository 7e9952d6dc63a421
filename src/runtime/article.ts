/**
 * "a" or "an" before a type's name in messages ("an Int16Array", "a Uint16Array": by the sound,
 * so a leading U, said "you", takes "a").
 */

/** `name` with its indefinite article. */
export function withArticle(name: string): string {
  return `${/^[AEIOaeio]/.test(name) ? 'an' : 'a'} ${name}`;
}
