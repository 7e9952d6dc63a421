/**
 * A validated job with every default filled in (what lanes run, never re-checked): the flags as
 * booleans and the parameters of `normal: 'default' | 'optional'` rows derived from the job schema
 * (job-schema.ts); what validation computes (a resolved window, the framing, the filter's
 * coefficients, the sample types) declared here. CUDA-free.
 */
import type { JOB_PARAMETER_TABLE } from './job-schema.js';
import type { SpectralGeometry } from '../signal/geometry.js';
import type { ResolvedWindow } from '../signal/window.js';
import type { Precision } from '../runtime/fft/precision.js';
import type {
  Band,
  BuiltinJobFlag,
  JobData,
  JobDataType,
  JobFlag,
  JobHalfType,
  JobOutputArrays,
  ParameterValue,
} from './types.js';

type ParameterRow = (typeof JOB_PARAMETER_TABLE)[number];

/** Each built-in flag as a boolean: whether the job asked for it. */
export type JobFlagSet = { readonly [F in BuiltinJobFlag]: boolean };

/** The parameters whose row fills in a default (`normal: 'default'`), of their row's value type. */
export type NormalizedDefaults = {
  [R in Extract<ParameterRow, { normal: 'default' }> as R['field']]: ParameterValue<R>;
};

/** The parameters whose row leaves them optional (`normal: 'optional'`): the value given, or undefined. */
export type NormalizedOptionals = {
  [R in Extract<ParameterRow, { normal: 'optional' }> as R['field']]: ParameterValue<R> | undefined;
};

/**
 * A job's filter as lanes apply it: second-order sections (given, or designed on the CPU) or FIR
 * taps, checked (finite, a0 = 1, every pole inside the unit circle; taps not empty), and whether
 * it runs forward and backward. Plain arrays, so two equal filters print equal (the fuser's key).
 */
export type NormalizedFilter =
  | { readonly kind: 'sos'; readonly sos: readonly (readonly number[])[]; readonly zeroPhase: boolean }
  | { readonly kind: 'fir'; readonly taps: readonly number[]; readonly zeroPhase: boolean };

/** A validated job with every default filled in. */
export interface NormalizedJob extends JobFlagSet, NormalizedDefaults, NormalizedOptionals {
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
  /** N, samples per series. */
  length: number;
  flags: readonly JobFlag[];
  /** Registered stages asked for, in flag order. */
  stages: readonly string[];
  window: ResolvedWindow;
  /** Framed stft (nperseg given): scipy's framing of each series (boundary 'zeros', padded), from geometry.ts. */
  framing: JobFraming | undefined;
  /** The stft pass band; [0, fs/2] when not given. */
  passBand: Band;
  previewBins: number;
  bands: readonly Band[];
  freqs: readonly number[];
  /** The filter applied to each series before anything else; undefined: none. */
  filter: NormalizedFilter | undefined;
  /** Caller-provided result arrays (checked against the engine's precision by checkInto). */
  into: JobOutputArrays;
  stageParams: Readonly<Record<string, unknown>>;
  signal: AbortSignal | undefined;
}

/**
 * The framing of a framed-stft job: the signal layer's geometry of each series (scipy.signal.stft's
 * boundary 'zeros', padded, nfft = nperseg), with the job's fs, window and detrend; its frames run
 * in chunks of whole frames (framesGeometry), never framed again.
 */
export type JobFraming = SpectralGeometry;
