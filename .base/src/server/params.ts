/**
 * Request parameters -> a JobSpec, with a 400 naming the field for anything wrong. The same
 * checks serve JSON bodies (typed values) and binary bodies (strings from the query or from
 * `x-tscuda-*` headers), so both protocols refuse the same inputs with the same messages.
 * Pure: no CUDA, no fastify.
 */
import type { Band, BuiltinJobFlag, JobFlag, JobSpec, WindowSpec } from '../engine/types.js';
import { HttpError, invalidField } from './errors.js';

/** The built-in flags, also the names of the synchronous endpoints. */
export const BUILTIN_FLAGS: readonly BuiltinJobFlag[] = ['stft', 'cycles', 'wavelet'];

/** Every parameter a job request may carry besides the signal; any other name is refused. */
export const JOB_PARAMETERS = [
  'dtype',
  'batch',
  'fs',
  'flags',
  'detrend',
  'window',
  'nperseg',
  'noverlap',
  'passBand',
  'previewBins',
  'bands',
  'freqs',
  'nCycles',
  'waveletBands',
  'bandWaves',
  'timeout',
  'label',
  'stageParams',
] as const;

/** A parameter name of JOB_PARAMETERS. */
export type JobParameter = (typeof JOB_PARAMETERS)[number];

/** Parameters as they arrive: typed from JSON, strings from the query and headers. */
export type RawParams = Partial<Record<JobParameter, unknown>>;

/** Element type of a signal: 32- or 64-bit IEEE floats, little-endian in binary bodies. */
export type SampleDtype = 'f32' | 'f64';

/** What the server needs to check a request beyond its own values. */
export interface ParamContext {
  /** Flags besides the built-in ones that this server's engine runs (registered stages). */
  extraFlags: readonly string[];
  /** The largest `timeout` a client may ask for, ms. */
  maxTimeoutMs: number;
  /** The `timeout` of a request that gives none, ms. */
  defaultTimeoutMs: number;
}

/** A validated request: the engine's spec (without data) and the server-side deadline. */
export interface ParsedJob {
  spec: Omit<JobSpec, 'data'>;
  timeoutMs: number;
}

function finite(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalidField(field, `must be a finite number, got ${describe(v)}`);
  return v;
}

function positive(field: string, v: unknown): number {
  const n = finite(field, v);
  if (n <= 0) throw invalidField(field, `must be > 0, got ${n}`);
  return n;
}

function positiveInt(field: string, v: unknown): number {
  const n = finite(field, v);
  if (!Number.isInteger(n) || n < 1) throw invalidField(field, `must be a positive integer, got ${n}`);
  return n;
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return String(v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

function band(field: string, v: unknown, nyquist: number): Band {
  if (!Array.isArray(v) || v.length !== 2) throw invalidField(field, `must be [low, high] in Hz, got ${describe(v)}`);
  const low = finite(`${field}[0]`, v[0]);
  const high = finite(`${field}[1]`, v[1]);
  if (low < 0 || low >= high || high > nyquist) {
    throw invalidField(field, `band [${low}, ${high}] is out of range: need 0 <= low < high <= fs/2 = ${nyquist}`);
  }
  return [low, high];
}

/**
 * Checks the parameters of one job over a signal of `length` samples in all and returns the
 * spec. `endpointFlag` is the flag a synchronous endpoint implies (it is added to `flags`).
 */
export function parseJobParams(raw: RawParams, length: number, context: ParamContext, endpointFlag?: BuiltinJobFlag): ParsedJob {
  for (const key of Object.keys(raw)) {
    if (!(JOB_PARAMETERS as readonly string[]).includes(key))
      throw new HttpError(400, 'unknown_field', `${key}: unknown parameter (known: signal, ${JOB_PARAMETERS.join(', ')})`, { field: key });
  }
  const spec: Omit<JobSpec, 'data'> = { flags: [] };

  const batch = raw.batch === undefined ? 1 : positiveInt('batch', raw.batch);
  if (length === 0) throw invalidField('signal', 'is empty');
  if (length % batch !== 0) throw invalidField('batch', `${length} samples do not split into ${batch} series of equal length`);
  const n = length / batch;
  if (n < 2) throw invalidField('signal', `each series needs at least 2 samples, got ${n}`);
  spec.batch = batch;

  const fs = raw.fs === undefined ? 1 : positive('fs', raw.fs);
  spec.fs = fs;
  const nyquist = fs / 2;

  const flags: JobFlag[] = endpointFlag === undefined ? [] : [endpointFlag];
  if (raw.flags !== undefined) {
    if (!Array.isArray(raw.flags)) throw invalidField('flags', `must be an array of flag names, got ${describe(raw.flags)}`);
    raw.flags.forEach((f: unknown, i: number) => {
      if (typeof f !== 'string') throw invalidField(`flags[${i}]`, `must be a string, got ${describe(f)}`);
      if (!(BUILTIN_FLAGS as readonly string[]).includes(f) && !context.extraFlags.includes(f)) {
        throw new HttpError(400, 'unknown_flag', `flags[${i}]: unknown flag ${JSON.stringify(f)} (known: ${[...BUILTIN_FLAGS, ...context.extraFlags].join(', ')})`, {
          field: `flags[${i}]`,
        });
      }
      if (!flags.includes(f)) flags.push(f);
    });
  }
  if (flags.length === 0) throw invalidField('flags', `at least one flag is needed (${[...BUILTIN_FLAGS, ...context.extraFlags].join(', ')})`);
  spec.flags = flags;

  if (raw.detrend !== undefined) {
    if (raw.detrend !== 'linear' && raw.detrend !== 'constant' && raw.detrend !== false)
      throw invalidField('detrend', `must be "linear", "constant" or false, got ${describe(raw.detrend)}`);
    spec.detrend = raw.detrend;
  }
  if (raw.window !== undefined) spec.window = windowSpec(raw.window);
  if (raw.nperseg !== undefined) {
    const nperseg = positiveInt('nperseg', raw.nperseg);
    if (nperseg < 2 || nperseg > n) throw invalidField('nperseg', `must be in [2, N = ${n}], got ${nperseg}`);
    spec.nperseg = nperseg;
  }
  if (raw.noverlap !== undefined) {
    const noverlap = finite('noverlap', raw.noverlap);
    if (spec.nperseg === undefined) throw invalidField('noverlap', 'needs nperseg (a framed stft)');
    if (!Number.isInteger(noverlap) || noverlap < 0 || noverlap >= spec.nperseg)
      throw invalidField('noverlap', `must be an integer in [0, nperseg = ${spec.nperseg}), got ${noverlap}`);
    spec.noverlap = noverlap;
  }
  if (raw.passBand !== undefined) spec.passBand = band('passBand', raw.passBand, nyquist);
  if (raw.previewBins !== undefined) {
    const bins = positiveInt('previewBins', raw.previewBins);
    const max = Math.floor(n / 2) + 1;
    if (bins > max) throw invalidField('previewBins', `must be at most N/2+1 = ${max}, got ${bins}`);
    spec.previewBins = bins;
  }
  if (raw.bands !== undefined) {
    if (!Array.isArray(raw.bands) || raw.bands.length === 0) throw invalidField('bands', `must be a non-empty array of [low, high] bands, got ${describe(raw.bands)}`);
    spec.bands = raw.bands.map((b: unknown, i: number) => band(`bands[${i}]`, b, nyquist));
  }
  if (raw.freqs !== undefined) {
    if (!Array.isArray(raw.freqs) || raw.freqs.length === 0) throw invalidField('freqs', `must be a non-empty array of frequencies in Hz, got ${describe(raw.freqs)}`);
    spec.freqs = raw.freqs.map((f: unknown, i: number) => {
      const v = positive(`freqs[${i}]`, f);
      if (v > nyquist) throw invalidField(`freqs[${i}]`, `${v} Hz is above fs/2 = ${nyquist}`);
      return v;
    });
  }
  if (raw.nCycles !== undefined) spec.nCycles = positive('nCycles', raw.nCycles);
  if (raw.waveletBands !== undefined) {
    if (typeof raw.waveletBands !== 'boolean') throw invalidField('waveletBands', `must be true or false, got ${describe(raw.waveletBands)}`);
    spec.waveletBands = raw.waveletBands;
  }
  if (raw.bandWaves !== undefined) {
    if (typeof raw.bandWaves !== 'boolean') throw invalidField('bandWaves', `must be true or false, got ${describe(raw.bandWaves)}`);
    spec.bandWaves = raw.bandWaves;
  }
  if (flags.includes('wavelet') && spec.freqs === undefined) throw invalidField('freqs', 'the wavelet flag needs freqs (Morlet centre frequencies in Hz)');
  if (spec.waveletBands === true && spec.bands === undefined) throw invalidField('bands', 'waveletBands needs bands');
  if (raw.label !== undefined) {
    if (typeof raw.label !== 'string' || raw.label.length > 200) throw invalidField('label', `must be a string of at most 200 characters, got ${describe(raw.label)}`);
    spec.label = raw.label;
  }
  if (raw.stageParams !== undefined) {
    if (raw.stageParams === null || typeof raw.stageParams !== 'object' || Array.isArray(raw.stageParams))
      throw invalidField('stageParams', `must be an object keyed by stage name, got ${describe(raw.stageParams)}`);
    for (const key of Object.keys(raw.stageParams)) {
      if (!context.extraFlags.includes(key)) throw new HttpError(400, 'unknown_flag', `stageParams.${key}: no registered stage of that name`, { field: `stageParams.${key}` });
    }
    spec.stageParams = raw.stageParams as Record<string, unknown>;
  }
  let timeoutMs = context.defaultTimeoutMs;
  if (raw.timeout !== undefined) {
    timeoutMs = positive('timeout', raw.timeout);
    if (timeoutMs > context.maxTimeoutMs) throw invalidField('timeout', `must be at most ${context.maxTimeoutMs} ms, got ${timeoutMs}`);
  }
  if (raw.dtype !== undefined) sampleDtype(raw.dtype);
  return { spec, timeoutMs };
}

function windowSpec(v: unknown): WindowSpec {
  if (typeof v === 'string' && v.length > 0 && v.length <= 64) return v;
  if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string') return [v[0], finite('window[1]', v[1])];
  throw invalidField('window', `must be a window name or [name, parameter], got ${describe(v)}`);
}

/** Checks a dtype parameter. */
export function sampleDtype(v: unknown, field = 'dtype'): SampleDtype {
  if (v === 'f32' || v === 'float32') return 'f32';
  if (v === 'f64' || v === 'float64') return 'f64';
  throw invalidField(field, `must be "f32" or "f64", got ${describe(v)}`);
}

function numberFromString(field: string, s: string): number {
  const t = s.trim();
  // Number('') is 0 and Number('0x10') is 16: only decimal notation is a number here.
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) throw invalidField(field, `must be a finite number, got ${JSON.stringify(s)}`);
  return Number(t);
}

function numberList(field: string, s: string): number[] {
  return s.split(',').map((part, i) => numberFromString(`${field}[${i}]`, part));
}

function jsonOr<T>(field: string, s: string, parse: (s: string) => T): T | unknown {
  if (s.trim().startsWith('[') || s.trim().startsWith('{')) {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      throw invalidField(field, `is not valid JSON: ${JSON.stringify(s.slice(0, 80))}`);
    }
  }
  return parse(s);
}

/**
 * Converts query/header strings into typed parameters. Formats: `flags=stft,cycles`,
 * `passBand=1,40`, `bands=1:4,4:8` (or JSON `[[1,4],[4,8]]`), `freqs=5,10,20`,
 * `window=hann` or `window=kaiser,8.6`, `detrend=linear|constant|false`,
 * `waveletBands=true|false`. Unknown names are refused with the name as field.
 */
export function paramsFromStrings(strings: Readonly<Record<string, string>>): RawParams {
  const raw: RawParams = {};
  for (const [key, value] of Object.entries(strings)) {
    switch (key) {
      case 'batch':
      case 'fs':
      case 'nperseg':
      case 'noverlap':
      case 'previewBins':
      case 'nCycles':
      case 'timeout':
        raw[key] = numberFromString(key, value);
        break;
      case 'flags':
        raw.flags = value
          .split(',')
          .map((f) => f.trim())
          .filter((f) => f.length > 0);
        break;
      case 'passBand':
        raw.passBand = jsonOr('passBand', value, (s) => numberList('passBand', s));
        break;
      case 'bands':
        raw.bands = jsonOr('bands', value, (s) =>
          s.split(',').map((pair, i) => {
            const parts = pair.split(':');
            if (parts.length !== 2) throw invalidField(`bands[${i}]`, `must be low:high, got ${JSON.stringify(pair)}`);
            return [numberFromString(`bands[${i}][0]`, parts[0]!), numberFromString(`bands[${i}][1]`, parts[1]!)];
          }),
        );
        break;
      case 'freqs':
        raw.freqs = jsonOr('freqs', value, (s) => numberList('freqs', s));
        break;
      case 'window': {
        const parts = value.split(',');
        raw.window = parts.length === 2 ? [parts[0]!, numberFromString('window[1]', parts[1]!)] : value;
        break;
      }
      case 'detrend':
        raw.detrend = value === 'false' || value === 'none' ? false : value;
        break;
      case 'waveletBands':
      case 'bandWaves':
        if (value !== 'true' && value !== 'false' && value !== '1' && value !== '0') throw invalidField(key, `must be true or false, got ${JSON.stringify(value)}`);
        raw[key] = value === 'true' || value === '1';
        break;
      case 'dtype':
      case 'label':
        raw[key] = value;
        break;
      case 'stageParams':
        raw.stageParams = jsonOr('stageParams', value, () => {
          throw invalidField('stageParams', 'must be a JSON object');
        });
        break;
      default:
        throw new HttpError(400, 'unknown_field', `${key}: unknown parameter (known: ${JOB_PARAMETERS.join(', ')})`, { field: key });
    }
  }
  return raw;
}

/** The `x-tscuda-<param>` headers (lower-case names) as a parameter map; header names are case-insensitive. */
export function headerParams(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of JOB_PARAMETERS) {
    const v = headers[`x-tscuda-${name.toLowerCase()}`];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}
