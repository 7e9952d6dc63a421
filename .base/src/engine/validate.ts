/**
 * Job validation at submit: a bad job is refused with a JobValidationError naming its field, and
 * nothing is queued. A good one comes out normalized (defaults filled in, N computed), so lanes
 * never re-check. CUDA-free.
 */
import { JobValidationError } from './errors.js';
import { checkNOLA } from '../signal/geometry.js';
import { resolveWindow, type ResolvedWindow, type WindowSpec } from '../signal/window.js';
import type { Band, BuiltinJobFlag, JobFlag, JobOutputArrays, JobSpec } from './types.js';

export type { ResolvedWindow };

/** The built-in flags, in the order the seed's flow runs them. */
export const BUILTIN_FLAGS: readonly BuiltinJobFlag[] = ['stft', 'cycles', 'wavelet'];

/** Smallest series the engine takes (a linear detrend and a spectrum need a few samples). */
export const MIN_SERIES_LENGTH = 4;

/** A validated job with every default filled in. */
export interface NormalizedJob {
  data: Float32Array | Float64Array;
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

const fail = (field: string, message: string): never => {
  throw new JobValidationError(field, message);
};

const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' && v !== null ? (Array.isArray(v) ? 'an array' : 'an object') : String(v));

function finite(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(field, `must be a finite number, got ${show(v)}`);
  return v as number;
}

function positiveInteger(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) fail(field, `must be a positive integer, got ${show(v)}`);
  return v as number;
}

function band(v: unknown, field: string, nyquist: number): Band {
  if (!Array.isArray(v) || v.length !== 2) fail(field, `must be a [low, high] pair in Hz, got ${show(v)}`);
  const [lo, hi] = v as unknown[];
  const low = finite(lo, `${field}[0]`);
  const high = finite(hi, `${field}[1]`);
  if (low < 0) fail(`${field}[0]`, `low edge ${low} Hz is below 0`);
  if (high > nyquist) fail(`${field}[1]`, `high edge ${high} Hz is above fs/2 = ${nyquist} Hz`);
  if (!(low < high)) fail(field, `low edge ${low} Hz must be below the high edge ${high} Hz`);
  return [low, high];
}

/** Resolves a WindowSpec with the signal layer's rules (scipy names and aliases), or throws naming `field`. */
export function resolveJobWindow(spec: unknown, field = 'window'): ResolvedWindow {
  if (typeof spec !== 'string' && !Array.isArray(spec)) fail(field, `must be a window name or [name, parameter], got ${show(spec)}`);
  if (Array.isArray(spec) && spec.length === 2 && typeof spec[1] !== 'number') fail(`${field}[1]`, `must be a finite number, got ${show(spec[1])}`);
  try {
    return resolveWindow(spec as WindowSpec);
  } catch (e) {
    const at =
      Array.isArray(spec) && spec.length === 2 && /parameter|std|alpha|beta/.test((e as Error).message) && !/takes no parameter|needs its parameter/.test((e as Error).message)
        ? `${field}[1]`
        : field;
    return fail(at, (e as Error).message);
  }
}

const INTO_FIELDS = new Set(['filtered', 'spectrum', 'bandPowers', 'bandWaves', 'waveletPower']);

const KNOWN_FIELDS = new Set([
  'data',
  'batch',
  'fs',
  'flags',
  'detrend',
  'window',
  'passBand',
  'previewBins',
  'bands',
  'freqs',
  'nCycles',
  'waveletBands',
  'stageParams',
  'label',
  'timeoutMs',
  'signal',
  'bandWaves',
  'into',
  'nperseg',
  'noverlap',
]);

/** Validates `spec` and fills in its defaults; throws JobValidationError naming the first bad field. */
export function validateJob(spec: JobSpec, context: ValidationContext): NormalizedJob {
  if (typeof spec !== 'object' || spec === null) return fail('(job)', `a job must be an object, got ${show(spec)}`);
  for (const key of Object.keys(spec)) if (!KNOWN_FIELDS.has(key)) fail(key, `unknown field (known: ${[...KNOWN_FIELDS].join(', ')})`);

  const data = spec.data as unknown;
  if (!(data instanceof Float32Array) && !(data instanceof Float64Array))
    return fail('data', `must be a Float32Array or Float64Array, got ${data === null || data === undefined ? String(data) : ((data as object).constructor?.name ?? typeof data)}`);
  if (data.length === 0) fail('data', 'is empty');
  const batch = spec.batch === undefined ? 1 : positiveInteger(spec.batch, 'batch');
  if (data.length % batch !== 0) fail('batch', `${data.length} samples do not split into ${batch} series of equal length`);
  const length = data.length / batch;
  if (length < MIN_SERIES_LENGTH) fail('data', `series of ${length} samples are too short (at least ${MIN_SERIES_LENGTH})`);
  const fs = spec.fs === undefined ? 1 : finite(spec.fs, 'fs');
  if (!(fs > 0)) fail('fs', `must be positive, got ${fs}`);
  const nyquist = fs / 2;

  if (!Array.isArray(spec.flags)) fail('flags', `must be an array of flags (${BUILTIN_FLAGS.join(', ')} or a registered stage), got ${show(spec.flags)}`);
  if (spec.flags.length === 0) fail('flags', `is empty: ask for at least one of ${BUILTIN_FLAGS.join(', ')} or a registered stage`);
  const seen = new Set<string>();
  const stages: string[] = [];
  spec.flags.forEach((flag, i) => {
    if (typeof flag !== 'string') fail(`flags[${i}]`, `must be a string, got ${show(flag)}`);
    if (seen.has(flag)) fail(`flags[${i}]`, `"${flag}" is given twice`);
    seen.add(flag);
    if ((BUILTIN_FLAGS as readonly string[]).includes(flag)) return;
    if (!context.stages.has(flag))
      fail(
        `flags[${i}]`,
        `unknown flag "${flag}": not one of ${BUILTIN_FLAGS.join(', ')} nor a registered stage${context.stages.size ? ` (${[...context.stages].join(', ')})` : ''}`,
      );
    stages.push(flag);
  });
  const stft = seen.has('stft');
  const cycles = seen.has('cycles');
  const wavelet = seen.has('wavelet');

  const detrend = spec.detrend === undefined ? 'linear' : spec.detrend;
  if (detrend !== 'linear' && detrend !== 'constant' && detrend !== false) fail('detrend', `must be 'linear', 'constant' or false, got ${show(detrend)}`);
  const window = resolveJobWindow(spec.window === undefined ? 'hann' : spec.window);

  const passBand = spec.passBand === undefined ? ([0, nyquist] as Band) : band(spec.passBand, 'passBand', nyquist);
  let framing: JobFraming | undefined;
  if (spec.nperseg !== undefined) {
    const nperseg = positiveInteger(spec.nperseg, 'nperseg');
    if (nperseg < 2) fail('nperseg', `must be at least 2, got ${nperseg}`);
    if (nperseg > length) fail('nperseg', `${nperseg} is greater than the series length N = ${length}`);
    const noverlap = spec.noverlap === undefined ? Math.floor(nperseg / 2) : spec.noverlap;
    if (typeof noverlap !== 'number' || !Number.isSafeInteger(noverlap) || noverlap < 0 || noverlap >= nperseg)
      fail('noverlap', `must be an integer in [0, nperseg = ${nperseg}), got ${show(noverlap)}`);
    const others = [...seen].filter((f) => f !== 'stft');
    if (!stft || others.length > 0)
      fail('flags', `a framed job (nperseg) takes only the stft flag${others.length ? `, not ${others.join(', ')}` : ''}; submit those as a separate job`);
    const windowSpec: WindowSpec = window.parameter === undefined ? window.name : [window.name, window.parameter];
    if (!checkNOLA(windowSpec, nperseg, noverlap))
      fail('noverlap', `window ${JSON.stringify(windowSpec)} with nperseg = ${nperseg} and noverlap = ${noverlap} violates NOLA: the STFT cannot be inverted`);
    const step = nperseg - noverlap;
    const extension = Math.floor(nperseg / 2);
    const extended = length + 2 * extension;
    const mod = (a: number, m: number): number => ((a % m) + m) % m;
    const paddedLength = extended + mod(mod(-(extended - nperseg), step), nperseg);
    const frames = Math.floor((paddedLength - noverlap) / step);
    framing = { nperseg, noverlap, step, extension, paddedLength, frames, freqs: Math.floor(nperseg / 2) + 1 };
  } else if (spec.noverlap !== undefined) fail('noverlap', 'needs nperseg (a framed stft)');
  const maxBins = framing ? framing.freqs : Math.floor(length / 2) + 1;
  const previewBins = spec.previewBins === undefined ? Math.min(256, maxBins) : positiveInteger(spec.previewBins, 'previewBins');
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
    bands = spec.bands.map((b, i) => band(b, `bands[${i}]`, nyquist));
  }
  if (cycles && bands.length === 0) fail('bands', 'the cycles flag needs at least one band');
  const waveletBands = spec.waveletBands === undefined ? false : spec.waveletBands;
  if (typeof waveletBands !== 'boolean') fail('waveletBands', `must be true or false, got ${show(waveletBands)}`);
  if (waveletBands && bands.length === 0) fail('bands', 'waveletBands needs at least one band');

  let freqs: number[] = [];
  if (spec.freqs !== undefined) {
    if (!Array.isArray(spec.freqs)) fail('freqs', `must be an array of frequencies in Hz, got ${show(spec.freqs)}`);
    freqs = spec.freqs.map((f, i) => {
      const v = finite(f, `freqs[${i}]`);
      if (!(v > 0) || v > nyquist) fail(`freqs[${i}]`, `${v} Hz is outside (0, fs/2 = ${nyquist}]`);
      return v;
    });
  }
  if (wavelet && freqs.length === 0) fail('freqs', 'the wavelet flag needs at least one frequency');
  const nCycles = spec.nCycles === undefined ? 6 : finite(spec.nCycles, 'nCycles');
  if (!(nCycles > 0)) fail('nCycles', `must be positive, got ${nCycles}`);

  const bandWaves = spec.bandWaves === undefined ? true : spec.bandWaves;
  if (typeof bandWaves !== 'boolean') fail('bandWaves', `must be true or false, got ${show(bandWaves)}`);
  const into = spec.into ?? {};
  if (typeof into !== 'object' || into === null || Array.isArray(into)) fail('into', `must be an object of result arrays, got ${show(into)}`);
  for (const [key, value] of Object.entries(into)) {
    if (!INTO_FIELDS.has(key)) fail(`into.${key}`, `is not a result array (known: ${[...INTO_FIELDS].join(', ')})`);
    if (value !== undefined && !(value instanceof Float32Array) && !(value instanceof Float64Array))
      fail(`into.${key}`, `must be a Float32Array or Float64Array, got ${show(value)}`);
  }

  const stageParams = spec.stageParams ?? {};
  if (typeof stageParams !== 'object' || stageParams === null || Array.isArray(stageParams)) fail('stageParams', `must be an object keyed by stage name, got ${show(stageParams)}`);
  for (const key of Object.keys(stageParams)) if (!context.stages.has(key)) fail(`stageParams.${key}`, `no stage "${key}" is registered`);

  if (spec.label !== undefined && typeof spec.label !== 'string') fail('label', `must be a string, got ${show(spec.label)}`);
  let timeoutMs: number | undefined;
  if (spec.timeoutMs !== undefined) {
    timeoutMs = finite(spec.timeoutMs, 'timeoutMs');
    if (!(timeoutMs > 0)) fail('timeoutMs', `must be positive, got ${timeoutMs}`);
  }
  const signal = spec.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) fail('signal', 'must be an AbortSignal');

  return {
    data,
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
export function checkInto(job: NormalizedJob, precision: 'f32' | 'f64'): void {
  const { batch: b, length: n } = job;
  const nb = job.bands.length;
  const expected: Record<string, number | undefined> = {
    filtered: job.stft ? b * n : undefined,
    spectrum: job.stft ? b * job.previewBins * (job.framing?.frames ?? 1) : undefined,
    bandPowers: job.cycles ? b * nb : undefined,
    bandWaves: job.cycles && job.bandWaves ? b * nb * n : undefined,
    waveletPower: job.wavelet ? b * (job.waveletBands ? nb : job.freqs.length) * n : undefined,
  };
  for (const [key, array] of Object.entries(job.into)) {
    if (array === undefined) continue;
    const length = expected[key];
    if (length === undefined) fail(`into.${key}`, "this job's flags do not produce it");
    const type = key === 'bandPowers' || precision === 'f64' ? Float64Array : Float32Array;
    if (!(array instanceof type)) fail(`into.${key}`, `must be a ${type.name} (engine precision ${precision}), got ${array.constructor.name}`);
    if (array.length !== length) fail(`into.${key}`, `holds ${array.length} values, the result has ${length}`);
  }
}
