/**
 * Job validation at submit: a bad job is refused with a JobValidationError naming its field, and
 * nothing is queued. A good one comes out normalized (defaults filled in, N computed), so lanes
 * never re-check. CUDA-free.
 */
import { fail, finite, show } from './field-checks.js';
import { JobValidationError } from './errors.js';
import { checkSampleTypes } from './sample-types.js';
import { timeoutMsProblem } from '../runtime/timeout.js';
import { checkNOLA } from '../signal/inverse-geometry.js';
import { resolveWindow, type ResolvedWindow, type WindowSpec } from '../signal/window.js';
import {
  BUILTIN_FLAGS,
  JOB_PARAMETER_TABLE,
  JOB_SPEC_FIELDS,
  RESULT_ARRAY_FIELDS,
  parameterOfField,
  type ParameterDef,
} from './parameters.js';
import type { Band, JobData, JobDataType, JobFlag, JobHalfType, JobOutputArrays, JobSpec } from './types.js';
import type { Precision } from '../runtime/fft/precision.js';
import { resultArrayClass, resultArrays } from './result-arrays.js';
import { withArticle } from '../runtime/article.js';

export type { ResolvedWindow };
export { BUILTIN_FLAGS, checkSampleTypes };

/** Smallest series the engine takes (a linear detrend and a spectrum need a few samples). */
export const MIN_SERIES_LENGTH = 4;

/** A validated job with every default filled in. */
export interface NormalizedJob {
  /** The samples; f16 data given as a Float16Array (Node 24+) is seen here as its raw bits (a Uint16Array). */
  data: JobData;
  /** The samples' type (from the array, or `dtype` for raw f16/bf16 bits). */
  dtype: JobDataType;
  /** 16-bit input: the factor each sample is read with (1 for f32/f64 data). */
  scale: number;
  /** 'f16'/'bf16': the waves returned are rounded on the GPU; undefined: the engine's precision. */
  outputDtype: JobHalfType | undefined;
  /** outputDtype 'f32'/'f64' named explicitly (checkInto checks it is the engine's precision). */
  outputFloat: Precision | undefined;
  batch: number;
  /** N, samples per series. */
  length: number;
  fs: number;
  flags: readonly JobFlag[];
  /** The built-in flags asked for. */
  stft: boolean;
  cycles: boolean;
  wavelet: boolean;
  /** Registered stages asked for, in flag order. */
  stages: readonly string[];
  detrend: 'constant' | 'linear' | false;
  window: ResolvedWindow;
  /** Framed stft (nperseg given): scipy's framing of each series (boundary 'zeros', padded). */
  framing: JobFraming | undefined;
  /** The stft pass band; [0, fs/2] when not given. */
  passBand: Band;
  previewBins: number;
  bands: readonly Band[];
  freqs: readonly number[];
  nCycles: number;
  waveletBands: boolean;
  /** `cycles`: return the band waves. */
  bandWaves: boolean;
  /** Caller-provided result arrays (checked against the engine's precision by checkInto). */
  into: JobOutputArrays;
  stageParams: Readonly<Record<string, unknown>>;
  label: string | undefined;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
}

/** The framing of a framed-stft job: each series zero-extended by `extension` on both sides and padded to `paddedLength`, cut in `frames` frames. */
export interface JobFraming {
  nperseg: number;
  noverlap: number;
  /** nperseg - noverlap. */
  step: number;
  /** nperseg / 2 (floored): zeros before and after the series (scipy's boundary 'zeros'). */
  extension: number;
  /** Samples of the extended, padded series: (frames - 1) * step + nperseg. */
  paddedLength: number;
  frames: number;
  /** Frequency bins per frame: nperseg / 2 + 1. */
  freqs: number;
}

/** What validation needs to know about the engine. */
export interface ValidationContext {
  /** Names of the registered stages. */
  stages: ReadonlySet<string>;
}

/** The range of a number or integer parameter of the table, in words. */
function rangeText(field: string): string {
  const def = parameterOfField(field);
  const parts: string[] = [];
  if (def?.min !== undefined) parts.push(def.exclusiveMin === true ? `> ${def.min}` : `>= ${def.min}`);
  if (def?.max !== undefined) parts.push(`<= ${def.max}`);
  const positive =
    def?.min !== undefined &&
    ((def.exclusiveMin === true && def.min === 0) || (def.type === 'integer' && def.min === 1));
  return parts.length === 0 ? '' : ` ${parts.join(' and ')}${positive ? ' (positive)' : ''}`;
}

/** A number or integer parameter checked against its row of the table (type, min, max). */
function tableNumber(v: unknown, field: string): number {
  const def = parameterOfField(field);
  const integer = def?.type === 'integer';
  const what = integer ? 'an integer' : 'a finite number';
  if (typeof v !== 'number' || !(integer ? Number.isSafeInteger(v) : Number.isFinite(v)))
    return fail(field, `must be ${what}${rangeText(field)}, got ${show(v)}`);
  const low = def?.min !== undefined && (def.exclusiveMin === true ? !(v > def.min) : v < def.min);
  if (low || (def?.max !== undefined && v > def.max)) fail(field, `must be ${what}${rangeText(field)}, got ${v}`);
  return v;
}

/** A `[low, high]` band in Hz within [0, fs/2], or a JobValidationError naming the edge at fault. */
export function band(v: unknown, field: string, nyquist: number): Band {
  if (!Array.isArray(v) || v.length !== 2) fail(field, `must be a [low, high] pair in Hz, got ${show(v)}`);
  const [lo, hi] = v as unknown[];
  const low = finite(lo, `${field}[0]`);
  const high = finite(hi, `${field}[1]`);
  if (low < 0) fail(`${field}[0]`, `low edge ${low} Hz is below 0`);
  if (high > nyquist) fail(`${field}[1]`, `high edge ${high} Hz is above fs/2 = ${nyquist} Hz`);
  if (!(low < high)) fail(field, `low edge ${low} Hz must be below the high edge ${high} Hz`);
  return [low, high];
}

/**
 * Checks every scalar parameter given (number, integer, boolean, enum, string) against its row of
 * the table: a new scalar parameter is checked by its row alone. Checks that need other fields
 * (ranges against N or fs/2, arrays, windows) follow in validateJobParameters.
 */
function checkByTable(spec: Omit<JobSpec, 'data'>): void {
  for (const def of JOB_PARAMETER_TABLE) {
    if (def.field === null) continue;
    const v = (spec as Record<string, unknown>)[def.field];
    if (v === undefined) continue;
    const d: ParameterDef = def;
    switch (d.type) {
      case 'number':
      case 'integer':
        tableNumber(v, def.field);
        break;
      case 'boolean':
        if (typeof v !== 'boolean') fail(def.field, `must be true or false, got ${show(v)}`);
        break;
      case 'enum':
        if (!(d.values ?? []).includes(v as string | boolean))
          fail(
            def.field,
            `must be one of ${(d.values ?? []).map((x) => JSON.stringify(x)).join(', ')}, got ${show(v)}`,
          );
        break;
      case 'string':
        if (typeof v !== 'string' || v.length > (d.maxLength ?? Infinity))
          fail(
            def.field,
            `must be a string${d.maxLength === undefined ? '' : ` of at most ${d.maxLength} characters`}, got ${typeof v === 'string' ? `${v.length} characters` : show(v)}`,
          );
        break;
      default:
        break;
    }
  }
}

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

const INTO_FIELDS: ReadonlySet<string> = new Set(RESULT_ARRAY_FIELDS);

/** Validates `spec` and fills in its defaults; throws JobValidationError naming the first bad field. */
export function validateJob(spec: JobSpec, context: ValidationContext): NormalizedJob {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    return fail('(job)', `a job must be an object, got ${Array.isArray(spec) ? 'an array' : show(spec)}`);
  checkKnownFields(spec);
  if (typeof (context as Partial<ValidationContext> | null)?.stages?.has !== 'function')
    throw new TypeError(
      'validateJob needs a context { stages: a Set of registered stage names } (an engine passes its own)',
    );
  // The samples and their type (f32/f64, or 16-bit: i16 with a scale, f16, bf16) come first: the
  // rest of the rules (which flags 16-bit data takes) depend on them.
  const types = checkSampleTypes(spec); // NaN: not scanned here; the doors and the lanes' GPU search (finite-samples.ts)
  return {
    data: types.data,
    dtype: types.dtype,
    scale: types.scale,
    outputDtype: types.outputDtype,
    outputFloat: types.outputFloat,
    ...parametersOf(spec, types.data.length, context, types.dtype),
  };
}

function checkKnownFields(spec: object): void {
  for (const key of Object.keys(spec))
    if (!JOB_SPEC_FIELDS.has(key)) fail(key, `unknown field (known: ${[...JOB_SPEC_FIELDS].join(', ')})`);
}

/**
 * Validates everything of `spec` but its samples, for `samples` samples in all (a server checks a
 * request with it before it needs a GPU); throws JobValidationError naming the first bad field.
 */
export function validateJobParameters(
  spec: Omit<JobSpec, 'data'>,
  samples: number,
  context: ValidationContext,
  dtype: JobDataType = 'f32',
): Omit<NormalizedJob, 'data' | 'dtype' | 'scale' | 'outputDtype' | 'outputFloat'> {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    return fail('(job)', `a job must be an object, got ${Array.isArray(spec) ? 'an array' : show(spec)}`);
  checkKnownFields(spec);
  return parametersOf(spec, samples, context, dtype);
}

/** validateJobParameters past the shape and field-name checks (validateJob made them already, once per job). */
function parametersOf(
  spec: Omit<JobSpec, 'data'>,
  samples: number,
  context: ValidationContext,
  dtype: JobDataType,
): Omit<NormalizedJob, 'data' | 'dtype' | 'scale' | 'outputDtype' | 'outputFloat'> {
  if (samples === 0) fail('data', 'is empty');
  // Every scalar is checked here by its row of the table, once: below, a scalar given is valid.
  checkByTable(spec);
  const batch = spec.batch ?? 1;
  if (samples % batch !== 0) fail('batch', `${samples} samples do not split into ${batch} series of equal length`);
  const length = samples / batch;
  if (length < MIN_SERIES_LENGTH)
    fail('data', `series of ${length} samples are too short (at least ${MIN_SERIES_LENGTH})`);
  const fs = spec.fs ?? 1;
  const nyquist = fs / 2;

  if (!Array.isArray(spec.flags))
    fail(
      'flags',
      `must be an array of flags (${BUILTIN_FLAGS.join(', ')} or a registered stage), got ${show(spec.flags)}`,
    );
  if (spec.flags.length === 0)
    fail('flags', `is empty: ask for at least one of ${BUILTIN_FLAGS.join(', ')} or a registered stage`);
  const seen = new Set<string>();
  const stages: string[] = [];
  // An index loop visits holes (as undefined), which forEach and map skip: `[, 'stft']` is refused, not half read.
  for (let i = 0; i < spec.flags.length; i++) {
    const flag = spec.flags[i] as string;
    if (typeof flag !== 'string') fail(`flags[${i}]`, `must be a string, got ${show(flag)}`);
    if (seen.has(flag)) fail(`flags[${i}]`, `"${flag}" is given twice`);
    seen.add(flag);
    if ((BUILTIN_FLAGS as readonly string[]).includes(flag)) continue;
    if (!context.stages.has(flag))
      fail(
        `flags[${i}]`,
        `unknown flag "${flag}": not one of ${BUILTIN_FLAGS.join(', ')} nor a registered stage${context.stages.size ? ` (${[...context.stages].join(', ')})` : ''}`,
      );
    stages.push(flag);
  }
  const stft = seen.has('stft');
  const cycles = seen.has('cycles');
  const wavelet = seen.has('wavelet');
  if (dtype !== 'f32' && dtype !== 'f64' && (wavelet || stages.length > 0))
    fail(
      'flags',
      `${dtype} data takes the stft and cycles flags; ${wavelet ? 'wavelet' : `registered stages (${stages.join(', ')})`} need f32 or f64 data`,
    );

  const detrend = spec.detrend ?? 'linear';
  const window = resolveJobWindow(spec.window === undefined ? 'hann' : spec.window);

  const passBand = spec.passBand === undefined ? ([0, nyquist] as Band) : band(spec.passBand, 'passBand', nyquist);
  let framing: JobFraming | undefined;
  if (spec.nperseg !== undefined) {
    const nperseg = spec.nperseg;
    if (nperseg > length) fail('nperseg', `${nperseg} is greater than the series length N = ${length}`);
    const noverlap = spec.noverlap === undefined ? Math.floor(nperseg / 2) : spec.noverlap;
    if (noverlap >= nperseg) fail('noverlap', `must be an integer in [0, nperseg = ${nperseg}), got ${noverlap}`);
    const others = [...seen].filter((f) => f !== 'stft');
    if (!stft || others.length > 0)
      fail(
        'flags',
        `a framed job (nperseg) takes only the stft flag${others.length ? `, not ${others.join(', ')}` : ''}; submit those as a separate job`,
      );
    const windowSpec: WindowSpec = window.parameter === undefined ? window.name : [window.name, window.parameter];
    if (!checkNOLA(windowSpec, nperseg, noverlap))
      fail(
        'noverlap',
        `window ${JSON.stringify(windowSpec)} with nperseg = ${nperseg} and noverlap = ${noverlap} violates NOLA: the STFT cannot be inverted`,
      );
    const step = nperseg - noverlap;
    const extension = Math.floor(nperseg / 2);
    const extended = length + 2 * extension;
    const mod = (a: number, m: number): number => ((a % m) + m) % m;
    const paddedLength = extended + mod(mod(-(extended - nperseg), step), nperseg);
    const frames = Math.floor((paddedLength - noverlap) / step);
    framing = { nperseg, noverlap, step, extension, paddedLength, frames, freqs: Math.floor(nperseg / 2) + 1 };
  } else if (spec.noverlap !== undefined) fail('noverlap', 'needs nperseg (a framed stft)');
  const maxBins = framing ? framing.freqs : Math.floor(length / 2) + 1;
  const previewBins = spec.previewBins ?? Math.min(256, maxBins);
  if (previewBins > maxBins)
    fail(
      'previewBins',
      framing
        ? `${previewBins} bins asked, a frame of ${framing.nperseg} samples has ${maxBins} (nperseg/2+1)`
        : `${previewBins} bins asked, a series of ${length} samples has ${maxBins} (N/2+1)`,
    );

  let bands: Band[] = [];
  if (spec.bands !== undefined) {
    if (!Array.isArray(spec.bands)) fail('bands', `must be an array of [low, high] pairs, got ${show(spec.bands)}`);
    bands = Array.from(spec.bands, (b: unknown, i) => band(b, `bands[${i}]`, nyquist));
  }
  if (cycles && bands.length === 0) fail('bands', 'the cycles flag needs at least one band');
  const waveletBands = spec.waveletBands ?? false;
  if (waveletBands && bands.length === 0) fail('bands', 'waveletBands needs at least one band');

  let freqs: number[] = [];
  if (spec.freqs !== undefined) {
    if (!Array.isArray(spec.freqs)) fail('freqs', `must be an array of frequencies in Hz, got ${show(spec.freqs)}`);
    freqs = Array.from(spec.freqs, (f: unknown, i) => {
      const v = finite(f, `freqs[${i}]`);
      if (!(v > 0) || v > nyquist) fail(`freqs[${i}]`, `${v} Hz is outside (0, fs/2 = ${nyquist}]`);
      return v;
    });
  }
  if (wavelet && freqs.length === 0) fail('freqs', 'the wavelet flag needs at least one frequency');
  const nCycles = spec.nCycles ?? 6;
  // A Morlet wavelet's width in samples: infinite (a frequency far below fs) or zero (a tiny nCycles) gives zero or NaN powers.
  freqs.forEach((f, i) => {
    const sigma = (nCycles * fs) / (2 * Math.PI * f);
    if (!Number.isFinite(sigma))
      fail(`freqs[${i}]`, `${f} Hz with nCycles = ${nCycles} at fs = ${fs} Hz makes an infinitely wide wavelet`);
    if (!(sigma * sigma > 0)) fail('nCycles', `${nCycles} cycles make a wavelet of width 0 at ${f} Hz`);
  });

  const bandWaves = spec.bandWaves ?? true;
  const into = spec.into ?? {};
  if (typeof into !== 'object' || into === null || Array.isArray(into))
    fail('into', `must be an object of result arrays, got ${show(into)}`);
  for (const [key, value] of Object.entries(into)) {
    if (!INTO_FIELDS.has(key)) fail(`into.${key}`, `is not a result array (known: ${[...INTO_FIELDS].join(', ')})`);
    const wave = key === 'filtered' || key === 'bandWaves';
    if (
      value !== undefined &&
      !(value instanceof Float32Array) &&
      !(value instanceof Float64Array) &&
      !(wave && value instanceof Uint16Array)
    )
      fail(
        `into.${key}`,
        `must be a Float32Array or Float64Array${wave ? ' (a Uint16Array with outputDtype f16/bf16)' : ''}, got ${show(value)}`,
      );
  }

  const stageParams = spec.stageParams ?? {};
  if (typeof stageParams !== 'object' || stageParams === null || Array.isArray(stageParams))
    fail('stageParams', `must be an object keyed by stage name, got ${show(stageParams)}`);
  for (const key of Object.keys(stageParams))
    if (!context.stages.has(key)) fail(`stageParams.${key}`, `no stage "${key}" is registered`);

  let timeoutMs: number | undefined;
  if (spec.timeoutMs !== undefined) {
    timeoutMs = spec.timeoutMs;
    // The library's one timeout rule (runtime/timeout.ts): past 2^31-1 ms a Node timer fires at once.
    const problem = timeoutMsProblem(timeoutMs);
    if (problem !== undefined) fail('timeoutMs', problem);
  }
  const signal = spec.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) fail('signal', 'must be an AbortSignal');

  return {
    batch,
    length,
    fs,
    flags: [...spec.flags],
    stft,
    cycles,
    wavelet,
    stages,
    detrend,
    window,
    framing,
    passBand,
    previewBins,
    bands,
    freqs,
    nCycles,
    waveletBands,
    bandWaves,
    into,
    stageParams,
    label: spec.label,
    timeoutMs,
    signal,
  };
}

/** Samples of one series and the row count, as a job's statistics count them. */
export function jobSamples(job: NormalizedJob): number {
  return job.batch * job.length;
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
