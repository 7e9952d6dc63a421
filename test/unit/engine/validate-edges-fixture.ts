/**
 * The shared setup of the validateJob edge tests (validate-*-edges.test.ts): a context with one
 * registered stage, a test series, and the refusal or the normalized job of a spec of 64 samples
 * with the stft flag unless it says otherwise.
 */
import { expect } from 'vitest';
import { JobValidationError } from '../../../src/engine/errors.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';

/** A validation context with one registered stage, 'supdem'. */
export const ctx = { stages: new Set(['supdem']) };
/** A series of `n` samples (a sine and a ramp). */
export const data = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => Math.sin(i / 3) + 0.01 * i);

/** The JobValidationError of `spec` (with 64 samples and the stft flag unless it says otherwise). */
export function refusal(spec: Partial<JobSpec>): { field: string; detail: string } {
  try {
    validateJob({ data: data(64), flags: ['stft'], ...spec } as JobSpec, ctx);
  } catch (error) {
    expect(error).toBeInstanceOf(JobValidationError);
    const { field, detail } = error as JobValidationError;
    return { field, detail };
  }
  return expect.unreachable('expected a JobValidationError');
}

/** The normalized job of `spec` (with 64 samples and the stft flag unless it says otherwise). */
export const job = (spec: Partial<JobSpec>) =>
  validateJob({ data: data(64), flags: ['stft'], ...spec } as JobSpec, ctx);
