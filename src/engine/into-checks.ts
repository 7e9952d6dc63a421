/**
 * A job's `into` (caller-provided result arrays) checked: at validation, each is a result field of
 * the schema holding a typed array its row's element type allows; once the engine's precision is
 * known (checkInto), each is a result the flags produce, of exactly its length and type. CUDA-free.
 */
import { fail, show } from './field-checks.js';
import { outputDef, RESULT_ARRAY_FIELDS } from './parameters.js';
import { resultArrayClass, resultArrays } from './result-arrays.js';
import type { NormalizedJob } from './normalized-job.js';
import type { JobOutputArrays } from './types.js';
import type { Precision } from '../runtime/fft/precision.js';
import { withArticle } from '../runtime/article.js';

/** `into` as a job gives it: an object of result arrays, each a field of the schema of an allowed array type. */
export function checkIntoFields(given: unknown): JobOutputArrays {
  const into = given ?? {};
  if (typeof into !== 'object' || into === null || Array.isArray(into))
    return fail('into', `must be an object of result arrays, got ${show(into)}`);
  for (const [key, value] of Object.entries(into)) {
    const row = outputDef(key);
    if (row === undefined) fail(`into.${key}`, `is not a result array (known: ${RESULT_ARRAY_FIELDS.join(', ')})`);
    const wave = row!.element === 'wave';
    const f64Only = row!.element === 'f64';
    if (
      value !== undefined &&
      !(value instanceof Float64Array) &&
      !(!f64Only && value instanceof Float32Array) &&
      !(wave && value instanceof Uint16Array)
    )
      fail(
        `into.${key}`,
        `must be ${f64Only ? 'a Float64Array' : 'a Float32Array or Float64Array'}${wave ? ' (a Uint16Array with outputDtype f16/bf16)' : ''}, got ${show(value)}`,
      );
  }
  return into as JobOutputArrays;
}

/**
 * Checks `job.into` against what the job returns at `precision`: each array is a result the flags
 * produce, of exactly its length and element type (bandPowers: Float64Array). Throws JobValidationError.
 */
export function checkInto(job: NormalizedJob, precision: Precision): void {
  if (job.outputFloat !== undefined && job.outputFloat !== precision)
    fail(
      'outputDtype',
      `${job.outputFloat} is not this engine's precision (${precision}); ask for ${precision}, f16 or bf16`,
    );
  const expected = resultArrays(job, precision);
  for (const [key, array] of Object.entries(job.into)) {
    if (array === undefined) continue;
    const want = expected.find((r) => r.field === key);
    if (want === undefined) return fail(`into.${key}`, "this job's flags do not produce it");
    const type = resultArrayClass(want.element);
    if (!(array instanceof type))
      fail(
        `into.${key}`,
        `must be ${withArticle(type.name)} (${want.element === 'u16' ? `outputDtype ${job.outputDtype} bits` : `engine precision ${precision}`}), got ${array.constructor.name}`,
      );
    if (array.length !== want.length)
      fail(`into.${key}`, `holds ${array.length} values, the result has ${want.length}`);
  }
}
