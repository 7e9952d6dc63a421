/**
 * Request parameters -> a JobSpec, with a 400 naming the field for anything wrong. Transport
 * only: which names a request may carry, and how a query or `x-tscuda-*` header string becomes a
 * value, both read from the engine's table of job parameters (engine/parameters.ts); every check
 * of a value is the engine's own validation, run here before anything needs a GPU, so JSON and
 * binary requests, and the engine, refuse the same inputs with the same messages. Pure: no CUDA,
 * no fastify.
 */
import { JobValidationError } from '../engine/errors.js';
import {
  BUILTIN_FLAGS,
  JOB_PARAMETER_NAMES,
  JOB_PARAMETER_TABLE,
  parameterDef,
  type JobParameterName,
  type ParameterDef,
} from '../engine/parameters.js';
import type { BuiltinJobFlag, JobFlag, JobSpec } from '../engine/types.js';
import { validateJobParameters, type NormalizedParameters } from '../engine/validate.js';
import { clip } from '../runtime/value-checks.js';
import { HttpError, invalidField, toHttpError } from './errors.js';

export { BUILTIN_FLAGS };

/** Every parameter a job request may carry besides the signal (the table's names); any other name is refused. */
export const JOB_PARAMETERS: readonly JobParameterName[] = JOB_PARAMETER_NAMES;

/** A parameter name of JOB_PARAMETERS. */
export type JobParameter = JobParameterName;

/** Parameters as they arrive: typed from JSON, strings from the query and headers. */
export type RawParams = Partial<Record<JobParameter, unknown>>;

/**
 * Element type of a signal: 32- or 64-bit IEEE floats, little-endian in binary bodies; binary
 * bodies also take 16-bit samples: `i16` (integers, times `scale`), `f16` and `bf16` (raw bits).
 * Result arrays are f32/f64, or f16/bf16 waves when `outputDtype` asks for them.
 */
export type SampleDtype = 'f32' | 'f64' | 'i16' | 'f16' | 'bf16';

/** The 16-bit sample types, which travel in binary bodies only (JSON numbers are floats). */
export const SIXTEEN_BIT_DTYPES: readonly SampleDtype[] = ['i16', 'f16', 'bf16'];

/** What the server needs to check a request beyond its own values. */
export interface ParamContext {
  /** Flags besides the built-in ones that this server's engine runs (registered stages). */
  extraFlags: readonly string[];
  /** The largest `timeout` a client may ask for, ms. */
  maxTimeoutMs: number;
  /** The `timeout` of a request that gives none, ms. */
  defaultTimeoutMs: number;
}

/** A validated request: the engine's spec (without data; its `timeoutMs` set) and that deadline. */
export interface ParsedJob {
  spec: Omit<JobSpec, 'data'>;
  timeoutMs: number;
}

function unknownParameter(key: string): HttpError {
  return new HttpError(
    400,
    'unknown_field',
    `${clip(key)}: unknown parameter (known: signal, ${JOB_PARAMETERS.join(', ')})`,
    { field: clip(key) },
  );
}

/**
 * Checks the parameters of one job over a signal of `length` samples in all and returns the
 * spec. `endpointFlag` is the flag a synchronous endpoint implies (it is added to `flags`).
 * The engine's validation (validateJobParameters) decides what is valid; this adds the server's
 * own bounds (`timeout` at most `maxTimeoutMs`) and names fields as requests spell them.
 */
export function parseJobParams(
  raw: RawParams,
  length: number,
  context: ParamContext,
  endpointFlag?: BuiltinJobFlag,
): ParsedJob {
  return checkJobParams(raw, length, context, endpointFlag).parsed;
}

/** The registered stages of a context's `extraFlags`, built once per list rather than once per request. */
const stageSets = new WeakMap<readonly string[], ReadonlySet<string>>();
function stagesOf(extraFlags: readonly string[]): ReadonlySet<string> {
  const known = stageSets.get(extraFlags);
  // Still the list's names (a caller's array may have changed since): no allocation on the way.
  if (known !== undefined && known.size === extraFlags.length && extraFlags.every((f) => known.has(f))) return known;
  const stages = new Set(extraFlags);
  stageSets.set(extraFlags, stages);
  return stages;
}

/**
 * parseJobParams, and what the engine's validation made of the parameters (validated as f32
 * samples: the door's check; see fusion/checked-specs.ts for who reuses it).
 */
export function checkJobParams(
  raw: RawParams,
  length: number,
  context: ParamContext,
  endpointFlag?: BuiltinJobFlag,
): { parsed: ParsedJob; parameters: NormalizedParameters } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalidField(
      'body',
      `parameters must be an object, got ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}`,
    );
  const spec: Record<string, unknown> = {};
  for (const key of Object.keys(raw)) {
    const def = parameterDef(key);
    if (def === undefined) throw unknownParameter(key);
    const value = raw[key as JobParameter];
    if (def.field !== null && value !== undefined) spec[def.field] = value;
  }
  if (endpointFlag !== undefined) {
    const given = spec.flags;
    // The endpoint's flag goes last, so a refusal's `flags[i]` is the client's own index; naming it again in `flags` is not an error.
    spec.flags = Array.isArray(given)
      ? given.includes(endpointFlag)
        ? given
        : [...given, endpointFlag]
      : given === undefined
        ? [endpointFlag]
        : given;
  } else if (spec.flags === undefined) {
    throw invalidField(
      'flags',
      `at least one flag is needed (${[...BUILTIN_FLAGS, ...context.extraFlags].join(', ')})`,
    );
  }
  if (spec.timeoutMs === undefined) spec.timeoutMs = context.defaultTimeoutMs;
  else if (typeof spec.timeoutMs === 'number' && spec.timeoutMs > context.maxTimeoutMs)
    throw invalidField('timeout', `must be at most ${context.maxTimeoutMs} ms, got ${spec.timeoutMs}`);
  if (raw.dtype !== undefined) sampleDtype(raw.dtype);
  let parameters: NormalizedParameters;
  try {
    parameters = validateJobParameters(spec as unknown as Omit<JobSpec, 'data'>, length, {
      stages: stagesOf(context.extraFlags),
    });
  } catch (error) {
    if (error instanceof JobValidationError) throw toHttpError(error, 1);
    throw error;
  }
  const typed = spec as unknown as Omit<JobSpec, 'data'> & { flags: readonly JobFlag[]; timeoutMs: number };
  return { parsed: { spec: typed, timeoutMs: typed.timeoutMs }, parameters };
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(clip(v));
  if (typeof v === 'number') return String(v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

/** The long spellings of the dtypes (numpy's names). */
const DTYPE_ALIASES: Readonly<Record<string, SampleDtype>> = {
  float32: 'f32',
  float64: 'f64',
  int16: 'i16',
  float16: 'f16',
  bfloat16: 'bf16',
};

/** Checks a dtype parameter: f32, f64, i16, f16 or bf16 (or numpy's float32, ..., bfloat16). */
export function sampleDtype(v: unknown, field = 'dtype'): SampleDtype {
  if (v === 'f32' || v === 'f64' || v === 'i16' || v === 'f16' || v === 'bf16') return v;
  if (typeof v === 'string' && Object.hasOwn(DTYPE_ALIASES, v)) return DTYPE_ALIASES[v]!;
  throw invalidField(field, `must be one of f32, f64, i16, f16, bf16, got ${describe(v)}`);
}

/**
 * Longest number a query or header value may spell, characters: a double needs at most 17
 * significant digits and an exponent; anything longer is refused before it is parsed, so a
 * megabyte of digits costs microseconds, not a quadratic regular-expression scan.
 */
export const MAX_NUMBER_CHARS = 32;

/** Decimal notation only (Number('') is 0 and Number('0x10') is 16); no nested quantifier can backtrack. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A number from a query or header string, bounded in length and parsed in linear time. */
export function numberFromString(field: string, s: string): number {
  if (s.length > MAX_NUMBER_CHARS + 8)
    throw invalidField(
      field,
      `must be a finite number of at most ${MAX_NUMBER_CHARS} characters, got ${s.length} characters`,
    );
  const t = s.trim();
  if (t.length > MAX_NUMBER_CHARS || !DECIMAL.test(t))
    throw invalidField(field, `must be a finite number, got ${JSON.stringify(clip(s))}`);
  return Number(t);
}

function numberList(field: string, s: string): number[] {
  return s.split(',').map((part, i) => numberFromString(`${field}[${i}]`, part));
}

function jsonOr(field: string, s: string, parse: (s: string) => unknown): unknown {
  const t = s.trim();
  if (t.startsWith('[') || t.startsWith('{')) {
    try {
      return JSON.parse(t) as unknown;
    } catch {
      throw invalidField(field, `is not valid JSON: ${JSON.stringify(clip(s))}`);
    }
  }
  return parse(s);
}

/** How a string of each parameter type becomes a value (query and header formats). */
const FROM_STRING: Record<ParameterDef['type'], (name: string, value: string, def: ParameterDef) => unknown> = {
  number: (name, value) => numberFromString(name, value),
  integer: (name, value) => numberFromString(name, value),
  boolean: (name, value) => {
    if (value !== 'true' && value !== 'false' && value !== '1' && value !== '0')
      throw invalidField(name, `must be true or false, got ${JSON.stringify(clip(value))}`);
    return value === 'true' || value === '1';
  },
  enum: (_name, value, def) =>
    def.values?.includes(false) === true && (value === 'false' || value === 'none') ? false : value,
  string: (_name, value) => value,
  band: (name, value) => jsonOr(name, value, (s) => numberList(name, s)),
  bands: (name, value) =>
    jsonOr(name, value, (s) =>
      s.split(',').map((pair, i) => {
        const parts = pair.split(':');
        if (parts.length !== 2)
          throw invalidField(`${name}[${i}]`, `must be low:high, got ${JSON.stringify(clip(pair))}`);
        return [numberFromString(`${name}[${i}][0]`, parts[0]!), numberFromString(`${name}[${i}][1]`, parts[1]!)];
      }),
    ),
  numbers: (name, value) => jsonOr(name, value, (s) => numberList(name, s)),
  flags: (_name, value) =>
    value
      .split(',')
      .map((f) => f.trim())
      .filter((f) => f.length > 0),
  window: (name, value) => {
    const parts = value.split(',');
    return parts.length === 2 ? [parts[0]!, numberFromString(`${name}[1]`, parts[1]!)] : value;
  },
  object: (name, value) =>
    jsonOr(name, value, () => {
      throw invalidField(name, 'must be a JSON object');
    }),
  filter: (name, value) =>
    jsonOr(name, value, () => {
      throw invalidField(name, 'must be a JSON object: {"sos": ...}, {"taps": ...} or {"btype": ..., "cutoff": ...}');
    }),
};

/**
 * Converts query/header strings into typed parameters, by each parameter's type in the table.
 * Formats: `flags=stft,cycles`, `passBand=1,40`, `bands=1:4,4:8` (or JSON `[[1,4],[4,8]]`),
 * `freqs=5,10,20`, `window=hann` or `window=kaiser,8.6`, `detrend=linear|constant|false`,
 * `waveletBands=true|false`. Unknown names are refused with the name as field.
 */
export function paramsFromStrings(strings: Readonly<Record<string, string>>): RawParams {
  const raw: RawParams = {};
  for (const [key, value] of Object.entries(strings)) {
    const def = parameterDef(key);
    if (def === undefined) throw unknownParameter(key);
    raw[key as JobParameter] = FROM_STRING[def.type](key, value, def);
  }
  return raw;
}

/**
 * The `x-tscuda-<param>` headers as a parameter map (lower-case names). Given Node's
 * `headersDistinct` (every value a header line gave), a parameter sent twice is refused, as in a query.
 */
export function headerParams(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, param] of HEADER_PARAMS) {
    const given = headers[name];
    if (given === undefined) continue;
    const values = typeof given === 'string' ? [given] : given;
    if (values.length !== 1) throw invalidField(name, 'is given more than once');
    out[param] = values[0]!;
  }
  // An x-tscuda-* header that names no parameter is a typo, refused as an unknown query parameter is
  // (silently ignored, `x-tscuda-npersg` would run the job without its framing).
  for (const name of Object.keys(headers))
    if (name.startsWith('x-tscuda-') && !HEADER_PARAMS.has(name))
      throw new HttpError(
        400,
        'unknown_field',
        `${clip(name)}: not a job parameter (x-tscuda-<parameter>: ${[...HEADER_PARAMS.keys()].join(', ')})`,
        { field: clip(name) },
      );
  return out;
}

/** Each `x-tscuda-<param>` header name and its parameter, of the parameters a header may carry (named once, not per request). */
const HEADER_PARAMS: ReadonlyMap<string, string> = new Map(
  JOB_PARAMETER_TABLE.filter((def) => (def.from as readonly string[]).includes('header')).map((def) => [
    `x-tscuda-${def.name.toLowerCase()}`,
    def.name,
  ]),
);
