/**
 * The one table of job parameters: every parameter a job takes besides its samples, with its
 * type, range, default, what it means and where a request may carry it. The engine's validation
 * (validate.ts), the server's JSON schema (server/schemas.ts) and the server's coercion of query
 * and header strings (server/params.ts) are all derived from it, so adding a parameter is adding
 * one row here (plus the code that uses its value). CUDA-free.
 */
import type { BuiltinJobFlag, JobSpec } from './types.js';

/** The built-in flags, in the order the seed's flow runs them; also the names of the synchronous endpoints. */
export const BUILTIN_FLAGS: readonly BuiltinJobFlag[] = ['stft', 'cycles', 'wavelet'];

/** The array fields of a JobResult (and of `JobSpec.into`), in the order a binary response lays them out. */
export const RESULT_ARRAY_FIELDS = ['filtered', 'spectrum', 'bandPowers', 'bandWaves', 'waveletPower'] as const;

/**
 * How a parameter's value is read and checked:
 * - `number`: a finite number within `min`/`max` (`exclusiveMin`: strictly above `min`);
 * - `integer`: a safe integer within `min`/`max`;
 * - `boolean`: true or false (strings: `true|false|1|0`);
 * - `enum`: one of `values` (strings: the value itself, `false`/`none` for false);
 * - `string`: text of at most `maxLength` characters;
 * - `band`: a `[low, high]` pair in Hz (strings: `low,high` or JSON);
 * - `bands`: an array of bands (strings: `low:high,low:high` or JSON);
 * - `numbers`: an array of numbers (strings: `a,b,c` or JSON);
 * - `flags`: an array of flag names (strings: `stft,cycles`);
 * - `window`: a window name or `[name, parameter]` (strings: `hann` or `kaiser,8.6`);
 * - `object`: a JSON object (strings: JSON).
 */
export type ParameterType =
  'number' | 'integer' | 'boolean' | 'enum' | 'string' | 'band' | 'bands' | 'numbers' | 'flags' | 'window' | 'object';

/** Where a request may carry a parameter: the JSON body, the query string, an `x-tscuda-<name>` header. */
export type ParameterSource = 'body' | 'query' | 'header';

/** One row of the table. */
export interface ParameterDef {
  /** The name on the wire (JSON property, query parameter, `x-tscuda-<lower-case name>` header). */
  readonly name: string;
  /** The JobSpec field it fills; null for a transport-only parameter (the server reads it itself). */
  readonly field: keyof JobSpec | null;
  readonly type: ParameterType;
  /** `number`/`integer`: the smallest value allowed (or the bound, with `exclusiveMin`). */
  readonly min?: number | undefined;
  readonly exclusiveMin?: boolean | undefined;
  /** `number`/`integer`: the largest value allowed. */
  readonly max?: number | undefined;
  /** `enum`: the values allowed. */
  readonly values?: readonly (string | boolean)[] | undefined;
  /** `string`: its longest length. */
  readonly maxLength?: number | undefined;
  /** The default, as documentation says it. */
  readonly default: string;
  /** What it means. */
  readonly help: string;
  /** Where a request may carry it. */
  readonly from: readonly ParameterSource[];
}

const ANYWHERE: readonly ParameterSource[] = ['body', 'query', 'header'];

/** The job parameters. A new parameter is a new row (the server's schema and coercion follow). */
export const JOB_PARAMETER_TABLE = [
  {
    name: 'dtype',
    field: null,
    type: 'enum',
    values: ['f32', 'f64', 'i16', 'f16', 'bf16', 'float32', 'float64', 'int16', 'float16', 'bfloat16'],
    default: "the engine's precision",
    help: 'element type of the samples (a binary body: how its bytes are read, i16/f16/bf16 included; JSON: the precision its numbers are stored in, f32 or f64)',
    from: ANYWHERE,
  },
  {
    name: 'batch',
    field: 'batch',
    type: 'integer',
    min: 1,
    default: '1 (a 2-D JSON signal: its rows)',
    help: 'B, the number of series',
    from: ANYWHERE,
  },
  {
    name: 'fs',
    field: 'fs',
    type: 'number',
    min: 0,
    exclusiveMin: true,
    default: '1',
    help: 'sampling frequency in Hz',
    from: ANYWHERE,
  },
  {
    name: 'flags',
    field: 'flags',
    type: 'flags',
    default: "the endpoint's flag",
    help: 'what to compute: stft, cycles, wavelet or a registered stage',
    from: ANYWHERE,
  },
  {
    name: 'detrend',
    field: 'detrend',
    type: 'enum',
    values: ['linear', 'constant', false],
    default: 'linear',
    help: 'detrend before the window',
    from: ANYWHERE,
  },
  {
    name: 'window',
    field: 'window',
    type: 'window',
    default: 'hann',
    help: 'window before the forward FFT (scipy names)',
    from: ANYWHERE,
  },
  {
    name: 'nperseg',
    field: 'nperseg',
    type: 'integer',
    min: 2,
    default: 'none (one frame per series)',
    help: 'framed stft: samples per frame',
    from: ANYWHERE,
  },
  {
    name: 'noverlap',
    field: 'noverlap',
    type: 'integer',
    min: 0,
    default: 'nperseg / 2',
    help: 'framed stft: samples shared by consecutive frames',
    from: ANYWHERE,
  },
  {
    name: 'passBand',
    field: 'passBand',
    type: 'band',
    default: '[0, fs/2]',
    help: 'stft: the band kept before the inverse FFT',
    from: ANYWHERE,
  },
  {
    name: 'previewBins',
    field: 'previewBins',
    type: 'integer',
    min: 1,
    default: 'min(256, N/2+1)',
    help: 'stft: spectrum bins returned per series',
    from: ANYWHERE,
  },
  {
    name: 'bands',
    field: 'bands',
    type: 'bands',
    default: 'none',
    help: 'cycles and wavelet band reduction: the bands in Hz',
    from: ANYWHERE,
  },
  {
    name: 'freqs',
    field: 'freqs',
    type: 'numbers',
    min: 0,
    exclusiveMin: true,
    default: 'none',
    help: 'wavelet: Morlet centre frequencies in Hz',
    from: ANYWHERE,
  },
  {
    name: 'nCycles',
    field: 'nCycles',
    type: 'number',
    min: 0,
    exclusiveMin: true,
    default: '6',
    help: 'wavelet: cycles per Morlet wavelet',
    from: ANYWHERE,
  },
  {
    name: 'waveletBands',
    field: 'waveletBands',
    type: 'boolean',
    default: 'false',
    help: 'wavelet: reduce the power to bands on the GPU',
    from: ANYWHERE,
  },
  {
    name: 'bandWaves',
    field: 'bandWaves',
    type: 'boolean',
    default: 'true',
    help: 'cycles: also return the band-limited waves',
    from: ANYWHERE,
  },
  {
    name: 'timeout',
    field: 'timeoutMs',
    type: 'number',
    min: 0,
    exclusiveMin: true,
    default: "the server's defaultTimeoutMs",
    help: 'ms after submit before the job fails with a timeout (at most the server maxTimeoutMs)',
    from: ANYWHERE,
  },
  {
    name: 'label',
    field: 'label',
    type: 'string',
    maxLength: 200,
    default: 'none',
    help: 'a name for logs and errors',
    from: ANYWHERE,
  },
  {
    name: 'stageParams',
    field: 'stageParams',
    type: 'object',
    default: '{}',
    help: 'parameters of registered stages, by stage name',
    from: ANYWHERE,
  },
  {
    name: 'scale',
    field: 'scale',
    type: 'number',
    default: '1/32768 for i16, 1 for f16/bf16',
    help: '16-bit samples: the factor each sample is multiplied by as the first kernel reads it (f32/f64 data takes none)',
    from: ANYWHERE,
  },
  {
    name: 'outputDtype',
    field: 'outputDtype',
    type: 'enum',
    values: ['f16', 'bf16', 'f32', 'f64'],
    default: "the engine's precision",
    help: 'element type of the waves returned (filtered, bandWaves): f16/bf16 are rounded on the GPU before the copy back',
    from: ANYWHERE,
  },
] as const satisfies readonly ParameterDef[];

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

const BY_NAME = new Map<string, ParameterDef>(JOB_PARAMETER_TABLE.map((p) => [p.name, p]));
const BY_FIELD = new Map<string, ParameterDef>(
  JOB_PARAMETER_TABLE.filter((p) => p.field !== null).map((p) => [p.field!, p]),
);

/**
 * JobSpec fields that are not table rows: the samples and their element type (checked together by
 * sample-types.ts checkSampleTypes: a Uint16Array needs dtype 'f16' or 'bf16'), caller-provided result
 * arrays, an AbortSignal. A request's `dtype` is the transport row above (how its body is read).
 */
export const ENGINE_ONLY_FIELDS = ['data', 'dtype', 'into', 'signal'] as const;

/** Every JobSpec field validateJob accepts. */
export const JOB_SPEC_FIELDS: ReadonlySet<string> = new Set<string>([...ENGINE_ONLY_FIELDS, ...BY_FIELD.keys()]);
