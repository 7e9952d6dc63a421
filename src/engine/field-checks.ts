/**
 * How job validation refuses a field: a JobValidationError naming it, and values shown in words.
 * Shared by validate.ts and sample-types.ts. CUDA-free.
 */
import { JobValidationError } from './errors.js';
import { shownValue } from '../runtime/value-checks.js';

/** Throws a JobValidationError naming `field`. */
export const fail = (field: string, message: string): never => {
  throw new JobValidationError(field, message);
};

/** A value as an error message shows it: runtime/value-checks.ts's shownValue (strings quoted and clipped; arrays and objects by kind, never dumped). */
export const show = shownValue;

/** `v` as a finite number, or a JobValidationError naming `field`. */
export function finite(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(field, `must be a finite number, got ${show(v)}`);
  return v as number;
}
