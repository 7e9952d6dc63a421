/**
 * A job's sample types (issue 26): the data array and its sample type, the scale of 16-bit
 * samples and the type the waves come back in, checked at submit (validateJob calls it), and for
 * the doors that scan samples on the CPU, that every one is finite. CUDA-free.
 */
import { Float16ArrayConstructor } from '../runtime/memory/dtype.js';
import { fail, finite, show } from './field-checks.js';
import type { JobData, JobDataType, JobHalfType, JobSpec } from './types.js';
import type { Precision } from '../runtime/fft/precision.js';
import { withArticle } from '../runtime/article.js';
import { checkFiniteSamples } from './finite-samples.js';

const DATA_TYPES: readonly JobDataType[] = ['f32', 'f64', 'i16', 'f16', 'bf16'];

const arrayName = (v: unknown): string =>
  v === null || v === undefined ? String(v) : ((v as object).constructor?.name ?? typeof v);

/** The sample type an array holds by itself (undefined for a Uint16Array: f16 or bf16 bits, `dtype` must say). */
function arrayDataType(data: unknown): JobDataType | undefined {
  if (data instanceof Float32Array) return 'f32';
  if (data instanceof Float64Array) return 'f64';
  if (data instanceof Int16Array) return 'i16';
  if (Float16ArrayConstructor && data instanceof (Float16ArrayConstructor as unknown as typeof Uint16Array))
    return 'f16';
  return undefined;
}

/**
 * `data`, `dtype`, `scale` and `outputDtype` of a job: the data array and its sample type agree,
 * the scale is a finite non-zero number given only for 16-bit data (default 1/32768 for i16, 1 for
 * f16/bf16), and outputDtype names a type (f32/f64 are checked against the engine's precision by
 * checkInto). With `finite` (the doors: the server's binary bodies, the request fuser), every
 * sample is finite too, in the engine's `precision` (f64 samples beyond the f32 range are infinite
 * to an f32 engine; finite-samples.ts says where else the rule is enforced). Throws
 * JobValidationError naming the field.
 */
export function checkSampleTypes(
  spec: Pick<JobSpec, 'data' | 'dtype' | 'scale' | 'outputDtype'>,
  rules: { finite?: boolean; precision?: Precision | undefined } = {},
): {
  data: JobData;
  dtype: JobDataType;
  scale: number;
  outputDtype: JobHalfType | undefined;
  outputFloat: Precision | undefined;
} {
  const data = spec.data as unknown;
  const given = spec.dtype as unknown;
  if (given !== undefined && !(DATA_TYPES as readonly unknown[]).includes(given))
    fail('dtype', `must be one of ${DATA_TYPES.join(', ')}, got ${show(given)}`);
  const own = arrayDataType(data);
  let dtype: JobDataType;
  let array: JobData;
  if (data instanceof Uint16Array) {
    if (given !== 'f16' && given !== 'bf16')
      return fail(
        'dtype',
        `a Uint16Array holds raw 16-bit float bits: name them with dtype 'f16' or 'bf16'${given === undefined ? '' : `, got ${show(given)}`}`,
      );
    dtype = given;
    array = data;
  } else if (own !== undefined) {
    if (given !== undefined && given !== own)
      fail('dtype', `is ${show(given)} but data is ${withArticle(arrayName(data))} (${own})`);
    dtype = own;
    // A Float16Array (Node 24+) travels as its raw bits.
    array =
      own === 'f16'
        ? new Uint16Array(
            (data as ArrayBufferView).buffer,
            (data as ArrayBufferView).byteOffset,
            (data as { length: number }).length,
          )
        : (data as JobData);
  } else
    return fail(
      'data',
      `must be an Int16Array (i16), a Uint16Array (f16/bf16 bits, with dtype), a Float32Array or Float64Array, got ${arrayName(data)}`,
    );
  const sixteen = dtype === 'i16' || dtype === 'f16' || dtype === 'bf16';
  let scale = 1;
  if (spec.scale !== undefined) {
    if (!sixteen) fail('scale', `applies to 16-bit data (i16, f16, bf16); this data is ${dtype}`);
    scale = finite(spec.scale, 'scale');
    if (scale === 0) fail('scale', 'must not be 0');
  } else if (dtype === 'i16') scale = 1 / 32768;
  const out = spec.outputDtype as unknown;
  if (out !== undefined && !(DATA_TYPES as readonly unknown[]).includes(out))
    fail('outputDtype', `must be one of f32, f64, f16, bf16, got ${show(out)}`);
  if (out === 'i16') fail('outputDtype', 'i16 is an input type; results come back as f32, f64, f16 or bf16');
  if (rules.finite === true) checkFiniteSamples(array, dtype, rules.precision);
  return {
    data: array,
    dtype,
    scale,
    outputDtype: out === 'f16' || out === 'bf16' ? out : undefined,
    outputFloat: out === 'f32' || out === 'f64' ? out : undefined,
  };
}
