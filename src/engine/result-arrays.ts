/**
 * The result arrays a job returns, from the output rows of the job schema (job-schema.ts): which
 * its flags produce, how many values each holds, and of what element type at an engine precision.
 * The engine checks `into` against it and allocates from it; the queue lays results out on the
 * wire and estimates their size at submit from it.
 */
import type { Precision } from '../runtime/fft/precision.js';
import { JOB_OUTPUTS, type ResultArrayField, type ResultShapeOf } from './parameters.js';

export type { ResultArrayField, ResultShapeOf };

/** Element type of a result array: the engine's precision, float64 (band powers) or raw 16-bit bits (waves asked for in f16/bf16). */
export type ResultElement = Precision | 'u16';

/** One result array of a job. */
export interface ResultArray {
  readonly field: ResultArrayField;
  readonly length: number;
  readonly element: ResultElement;
}

/** The result arrays of `job` at `precision`, in the schema's order (a binary response's). */
export function resultArrays(job: ResultShapeOf, precision: Precision): ResultArray[] {
  const out: ResultArray[] = [];
  for (const row of JOB_OUTPUTS) {
    if (!job.flags.includes(row.flag)) continue;
    const perSeries = row.perSeries(job);
    if (perSeries === 0) continue;
    const element: ResultElement =
      row.element === 'f64' ? 'f64' : row.element === 'wave' && job.outputDtype ? 'u16' : precision;
    out.push({ field: row.field, length: job.batch * perSeries, element });
  }
  return out;
}

/** The typed-array class of a result element type. */
export function resultArrayClass(
  element: ResultElement,
): Float32ArrayConstructor | Float64ArrayConstructor | Uint16ArrayConstructor {
  return element === 'u16' ? Uint16Array : element === 'f64' ? Float64Array : Float32Array;
}
