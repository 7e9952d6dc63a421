/**
 * Dtype names checked as own keys of DTYPES: `'toString'` or `'__proto__'` is not a dtype, though
 * `DTYPES[name]` finds something for them on Object.prototype.
 */
import { DTYPES, type DType } from './dtype.js';

/** True when `name` is one of the dtypes (an own key of DTYPES). */
export function isDType(name: unknown): name is DType {
  return typeof name === 'string' && Object.hasOwn(DTYPES, name);
}

/** Throws TypeError naming `what` and the valid dtypes unless `name` is one. */
export function checkDType(name: unknown, what: string): asserts name is DType {
  if (!isDType(name))
    throw new TypeError(
      `${what}: unknown dtype ${typeof name === 'string' ? JSON.stringify(name) : String(name)}; expected one of ${Object.keys(DTYPES).join(', ')}`,
    );
}
