/**
 * Job validation at submit: a bad job is refused with a JobValidationError naming its field, and
 * nothing is queued. A good one comes out normalized (defaults filled in, N computed), so lanes
 * never re-check. Each kind of check lives with its concept: scalars by their rows of the job
 * schema (table-checks.ts), flags (flag-checks.ts), the window (window-checks.ts), the framing
 * (framing-checks.ts), the filter (job-filter.ts), `into` (into-checks.ts); this file runs them in
 * order and checks what spans fields (bands and frequencies against fs/2). CUDA-free.
 */
import { fail, finite, show } from './field-checks.js';
import { checkSampleTypes } from './sample-types.js';
import { timeoutMsProblem } from '../runtime/timeout.js';
import { BUILTIN_FLAGS, JOB_SPEC_FIELDS } from './parameters.js';
import type { Band, JobDataType, JobSpec } from './types.js';
import { checkByTable, tableValues } from './table-checks.js';
import { checkFlags } from './flag-checks.js';
import { resolveJobWindow } from './window-checks.js';
import { jobFraming } from './framing-checks.js';
import { normalizeFilter } from './job-filter.js';
import { checkInto, checkIntoFields } from './into-checks.js';
import type { NormalizedJob } from './normalized-job.js';
import type { ResolvedWindow } from '../signal/window.js';

export type { ResolvedWindow };
export type { JobFraming, NormalizedFilter, NormalizedJob } from './normalized-job.js';
export { BUILTIN_FLAGS, checkInto, checkSampleTypes, resolveJobWindow };

/** Smallest series the engine takes (a linear detrend and a spectrum need a few samples). */
export const MIN_SERIES_LENGTH = 4;

/** What validation needs to know about the engine. */
export interface ValidationContext {
  /** Names of the registered stages. */
  stages: ReadonlySet<string>;
}

/** What validateJobParameters returns: the normalized job but its samples and their types. */
export type NormalizedParameters = Omit<NormalizedJob, 'data' | 'dtype' | 'scale' | 'outputDtype' | 'outputFloat'>;

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
): NormalizedParameters {
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
): NormalizedParameters {
  if (samples === 0) fail('data', 'is empty');
  // Every scalar is checked here by its row of the table, once: below, a scalar given is valid.
  checkByTable(spec);
  const values = tableValues(spec);
  const { batch, fs } = values;
  if (samples % batch !== 0) fail('batch', `${samples} samples do not split into ${batch} series of equal length`);
  const length = samples / batch;
  if (length < MIN_SERIES_LENGTH)
    fail('data', `series of ${length} samples are too short (at least ${MIN_SERIES_LENGTH})`);
  const nyquist = fs / 2;

  const flags = checkFlags(spec, context.stages, dtype);
  const window = resolveJobWindow(spec.window === undefined ? 'hann' : spec.window);
  const passBand = spec.passBand === undefined ? ([0, nyquist] as Band) : band(spec.passBand, 'passBand', nyquist);
  const framed = { nperseg: spec.nperseg, noverlap: spec.noverlap, fs, detrend: values.detrend };
  const framing = jobFraming(framed, length, flags.seen, window);
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
  if (flags.set.cycles && bands.length === 0) fail('bands', 'the cycles flag needs at least one band');
  if (values.waveletBands && bands.length === 0) fail('bands', 'waveletBands needs at least one band');

  let freqs: number[] = [];
  if (spec.freqs !== undefined) {
    if (!Array.isArray(spec.freqs)) fail('freqs', `must be an array of frequencies in Hz, got ${show(spec.freqs)}`);
    freqs = Array.from(spec.freqs, (f: unknown, i) => {
      const v = finite(f, `freqs[${i}]`);
      if (!(v > 0) || v > nyquist) fail(`freqs[${i}]`, `${v} Hz is outside (0, fs/2 = ${nyquist}]`);
      return v;
    });
  }
  if (flags.set.wavelet && freqs.length === 0) fail('freqs', 'the wavelet flag needs at least one frequency');
  const nCycles = values.nCycles;
  // A Morlet wavelet's width in samples: infinite (a frequency far below fs) or zero (a tiny nCycles) gives zero or NaN powers.
  freqs.forEach((f, i) => {
    const sigma = (nCycles * fs) / (2 * Math.PI * f);
    if (!Number.isFinite(sigma))
      fail(`freqs[${i}]`, `${f} Hz with nCycles = ${nCycles} at fs = ${fs} Hz makes an infinitely wide wavelet`);
    if (!(sigma * sigma > 0)) fail('nCycles', `${nCycles} cycles make a wavelet of width 0 at ${f} Hz`);
  });

  if (spec.filter !== undefined) {
    if (dtype !== 'f32' && dtype !== 'f64') fail('filter', `${dtype} data takes no filter; filter f32 or f64 data`);
    if (framing) fail('filter', 'a framed stft (nperseg) takes no filter; filter whole-series jobs');
  }
  const filter = normalizeFilter(spec.filter, fs, length);
  if (values.q !== undefined && !flags.set.decimate)
    fail('q', "is the decimate flag's factor; ask for the decimate flag");

  const into = checkIntoFields(spec.into);
  const stageParams = spec.stageParams ?? {};
  if (typeof stageParams !== 'object' || stageParams === null || Array.isArray(stageParams))
    fail('stageParams', `must be an object keyed by stage name, got ${show(stageParams)}`);
  for (const key of Object.keys(stageParams))
    if (!context.stages.has(key)) fail(`stageParams.${key}`, `no stage "${key}" is registered`);

  // The library's one timeout rule (runtime/timeout.ts): past 2^31-1 ms a Node timer fires at once.
  const problem = values.timeoutMs === undefined ? undefined : timeoutMsProblem(values.timeoutMs);
  if (problem !== undefined) fail('timeoutMs', problem);
  const signal = spec.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) fail('signal', 'must be an AbortSignal');

  return {
    ...values,
    ...flags.set,
    length,
    flags: [...spec.flags],
    stages: flags.stages,
    window,
    framing,
    passBand,
    previewBins,
    bands,
    freqs,
    filter,
    into,
    stageParams,
    signal,
  };
}

/** Samples of one series and the row count, as a job's statistics count them. */
export function jobSamples(job: NormalizedJob): number {
  return job.batch * job.length;
}
