/**
 * A job's window checked by the signal layer's rules (scipy names and aliases), refusals naming
 * the field or its parameter. CUDA-free.
 */
import { fail, show } from './field-checks.js';
import { JobValidationError } from './errors.js';
import { resolveWindow, type ResolvedWindow, type WindowSpec } from '../signal/window.js';

/** The narrowest gaussian window a job takes, in samples. */
const MIN_GAUSSIAN_STD = 0.1;

/** Resolves a WindowSpec with the signal layer's rules (scipy names and aliases), or throws naming `field`. */
export function resolveJobWindow(spec: unknown, field = 'window'): ResolvedWindow {
  if (typeof spec !== 'string' && !Array.isArray(spec))
    fail(field, `must be a window name or [name, parameter], got ${show(spec)}`);
  if (Array.isArray(spec) && spec.length === 2 && typeof spec[1] !== 'number')
    fail(`${field}[1]`, `must be a finite number, got ${show(spec[1])}`);
  try {
    const resolved = resolveWindow(spec as WindowSpec);
    // Narrower, the window is zero but for its centre, or zero everywhere at an even length: the spectrum's scaling divides by its sum.
    if (resolved.name === 'gaussian' && resolved.parameter! < MIN_GAUSSIAN_STD)
      fail(
        `${field}[1]`,
        `a gaussian window's std must be at least ${MIN_GAUSSIAN_STD} samples, got ${resolved.parameter}`,
      );
    return resolved;
  } catch (e) {
    if (e instanceof JobValidationError) throw e;
    const at =
      Array.isArray(spec) &&
      spec.length === 2 &&
      /parameter|std|alpha|beta/.test((e as Error).message) &&
      !/takes no parameter|needs its parameter/.test((e as Error).message)
        ? `${field}[1]`
        : field;
    return fail(at, (e as Error).message);
  }
}
