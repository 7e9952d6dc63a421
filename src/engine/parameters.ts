/**
 * Lookups over the job schema's rows (job-schema.ts): the flag names, the result-array fields, the
 * parameter names, a parameter's row by wire name or JobSpec field, a flag's and an output's row,
 * and every JobSpec field validation accepts. Derived from the rows, never listed again. CUDA-free.
 */
import { JOB_FLAGS, JOB_OUTPUTS, JOB_PARAMETER_TABLE } from './job-schema.js';
import type { FlagDef, OutputDef, ParameterDef } from './schema-rows.js';
import type { BuiltinJobFlag } from './types.js';

export { JOB_FLAGS, JOB_OUTPUTS, JOB_PARAMETER_TABLE };
export type {
  FlagDef,
  NormalForm,
  OutputDef,
  OutputElement,
  OutputLayout,
  ParameterDef,
  ParameterSource,
  ParameterType,
  ResultShapeOf,
} from './schema-rows.js';

/** The built-in flags, in the order the seed's flow runs them; also the names of the synchronous endpoints. */
export const BUILTIN_FLAGS: readonly BuiltinJobFlag[] = JOB_FLAGS.map((f) => f.name);

/** A result-array field of JobResult (and of `JobSpec.into`). */
export type ResultArrayField = (typeof JOB_OUTPUTS)[number]['field'];

/** The array fields of a JobResult (and of `JobSpec.into`), in the order a binary response lays them out. */
export const RESULT_ARRAY_FIELDS: readonly ResultArrayField[] = JOB_OUTPUTS.map((o) => o.field);

/** A parameter name of the table. */
export type JobParameterName = (typeof JOB_PARAMETER_TABLE)[number]['name'];

/** The wire names of the table, in its order. */
export const JOB_PARAMETER_NAMES: readonly JobParameterName[] = JOB_PARAMETER_TABLE.map((p) => p.name);

/** The row of a wire name, or undefined. */
export function parameterDef(name: string): ParameterDef | undefined {
  return BY_NAME.get(name);
}

/** The row filling a JobSpec field, or undefined (data, into, signal have none: they are not request parameters). */
export function parameterOfField(field: string): ParameterDef | undefined {
  return BY_FIELD.get(field);
}

/** The row of a built-in flag, or undefined (a registered stage, or no flag). */
export function flagDef(name: string): FlagDef | undefined {
  return FLAG_BY_NAME.get(name);
}

/** The row of a result-array field, or undefined. */
export function outputDef(field: string): OutputDef | undefined {
  return OUTPUT_BY_FIELD.get(field);
}

const BY_NAME = new Map<string, ParameterDef>(JOB_PARAMETER_TABLE.map((p) => [p.name, p]));
const BY_FIELD = new Map<string, ParameterDef>(
  JOB_PARAMETER_TABLE.filter((p) => p.field !== null).map((p) => [p.field!, p]),
);
const FLAG_BY_NAME = new Map<string, FlagDef>(JOB_FLAGS.map((f) => [f.name, f]));
const OUTPUT_BY_FIELD = new Map<string, OutputDef>(JOB_OUTPUTS.map((o) => [o.field, o]));

/**
 * JobSpec fields that are not table rows: the samples and their element type (checked together by
 * sample-types.ts checkSampleTypes: a Uint16Array needs dtype 'f16' or 'bf16'), caller-provided result
 * arrays, an AbortSignal. A request's `dtype` is the transport row above (how its body is read).
 */
export const ENGINE_ONLY_FIELDS = ['data', 'dtype', 'into', 'signal'] as const;

/** Every JobSpec field validateJob accepts. */
export const JOB_SPEC_FIELDS: ReadonlySet<string> = new Set<string>([...ENGINE_ONLY_FIELDS, ...BY_FIELD.keys()]);
