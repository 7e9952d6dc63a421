/**
 * The job engine's public vocabulary (seed 000's GpuEngine): what a job is, what it returns, how
 * it is tracked. CUDA-free, so the server, the CLI and tests without a GPU share it.
 */
import type { Device } from '../runtime/device.js';
import type { Context } from '../runtime/context.js';
import type { Precision } from '../runtime/fft/precision.js';
import type { JOB_FLAGS, JOB_OUTPUTS, JOB_PARAMETER_TABLE } from './job-schema.js';

/** The built-in job flags (the names of job-schema.ts's flag rows); user-registered stages are named by the string given to `registerStage`. */
export type BuiltinJobFlag = (typeof JOB_FLAGS)[number]['name'];

/** A job flag: a built-in one or the name of a registered stage. */
export type JobFlag = BuiltinJobFlag | (string & {});

/** A window as scipy.signal.get_window takes it: a name, or a name with its parameter. */
export type WindowSpec = string | readonly [name: string, parameter: number];

/** A frequency band [low, high] in Hz (0 <= low < high <= fs/2). */
export type Band = readonly [low: number, high: number];

/** The sample types a job's `data` may hold: float32/float64, or 16-bit (i16 scaled, f16 and bf16 as raw bits). */
export type JobDataType = 'f32' | 'f64' | 'i16' | 'f16' | 'bf16';

/** 16-bit float types the returned waves may be rounded to on the GPU (`outputDtype`). */
export type JobHalfType = 'f16' | 'bf16';

/** The arrays a job's `data` may be: Float32Array, Float64Array, Int16Array (i16), Uint16Array (f16/bf16 bits, `dtype` names which). */
export type JobData = Float32Array | Float64Array | Int16Array | Uint16Array;

/** A result wave: the engine's precision, or raw f16/bf16 bits when `outputDtype` asks for 16 bits. */
export type WaveArray = Float32Array | Float64Array | Uint16Array;

/**
 * A filter applied to each series on the GPU before anything else (the FFT, the envelope, the
 * decimation), from a zero initial state as scipy.signal.sosfilt and lfilter start by default, or
 * forward and backward (`zeroPhase`, scipy's sosfiltfilt / filtfilt with their default padding):
 * - `{ sos }`: second-order sections, rows [b0, b1, b2, 1, a1, a2] (scipy's `output='sos'`);
 * - `{ taps }`: FIR taps (scipy's lfilter(taps, 1, x));
 * - `{ btype, cutoff, order?, design?, rp?, rs? }`: designed on the CPU as scipy.signal.butter /
 *   cheby1 / cheby2(order, ..., cutoff, btype, output='sos', fs=the job's fs) design it; cutoff in
 *   Hz (a [low, high] pair for bandpass and bandstop); order 4, design 'butter', rp 1 dB, rs 40 dB by default.
 */
export type JobFilter = (
  | { readonly sos: readonly (readonly number[])[] }
  | { readonly taps: readonly number[] }
  | {
      readonly btype: FilterBandType;
      readonly cutoff: number | readonly [low: number, high: number];
      readonly order?: number | undefined;
      readonly design?: FilterDesign | undefined;
      readonly rp?: number | undefined;
      readonly rs?: number | undefined;
    }
) & { readonly zeroPhase?: boolean | undefined };

/** The band types a designed job filter takes. */
export type FilterBandType = 'lowpass' | 'highpass' | 'bandpass' | 'bandstop';

/** The IIR designs a job filter takes (scipy.signal's functions of those names). */
export type FilterDesign = 'butter' | 'cheby1' | 'cheby2';

/** One row of the job parameter table. */
type ParameterRow = (typeof JOB_PARAMETER_TABLE)[number];

/** The value type of a parameter row, by its `type` (and `values` for an enum). */
export type ParameterValue<R extends { readonly type: string }> = R extends { readonly type: 'number' | 'integer' }
  ? number
  : R extends { readonly type: 'boolean' }
    ? boolean
    : R extends { readonly type: 'enum'; readonly values: readonly (infer V)[] }
      ? V
      : R extends { readonly type: 'string' }
        ? string
        : R extends { readonly type: 'band' }
          ? Band
          : R extends { readonly type: 'bands' }
            ? readonly Band[]
            : R extends { readonly type: 'numbers' }
              ? readonly number[]
              : R extends { readonly type: 'flags' }
                ? readonly JobFlag[]
                : R extends { readonly type: 'window' }
                  ? WindowSpec
                  : R extends { readonly type: 'object' }
                    ? Readonly<Record<string, unknown>>
                    : R extends { readonly type: 'filter' }
                      ? JobFilter
                      : never;

/** The JobSpec fields of the parameter table's rows (job-schema.ts), each of its row's value type; `help` of each row says what it means. */
export type JobParameters = {
  [R in ParameterRow as R['field'] extends string ? R['field'] : never]?: ParameterValue<R> | undefined;
};

/** One job: a batch of B series of N samples each, what to compute on them (`flags`) and the parameters of job-schema.ts's table. */
export interface JobSpec extends JobParameters {
  /**
   * B x N samples, row-major (series after series): plain typed arrays or arrays lent by
   * `engine.hostBuffer()`. 16-bit samples cross to the GPU in 2 bytes and are converted there: an
   * Int16Array is i16 (times `scale`), a Uint16Array holds f16 or bf16 bits (`dtype` says which).
   */
  data: JobData;
  /**
   * The type of `data`'s samples: needed for a Uint16Array ('f16' or 'bf16'); otherwise it must
   * match the array (Int16Array 'i16', Float32Array 'f32', Float64Array 'f64'). 16-bit input takes
   * the flags whose row allows it (stft and cycles), and no filter.
   */
  dtype?: JobDataType | undefined;
  /** What to compute, in this order of the seed's flow; at least one (built-in flags or registered stages). */
  flags: readonly JobFlag[];
  /**
   * Arrays to write results into instead of fresh ones, each of exactly its field's length and of
   * the engine's precision (bandPowers: Float64Array). Arrays lent by `engine.hostBuffer()` are
   * filled by the GPU copy itself, with no host copy: the zero-copy output path.
   */
  into?: JobOutputArrays | undefined;
  /** Cancels the job while it is queued (a running job finishes). */
  signal?: AbortSignal | undefined;
}

/** The typed array of a result row's element type: a wave may be raw 16-bit bits (`outputDtype`), float64 rows are Float64Array. */
export type OutputArray<E extends string> = E extends 'wave'
  ? WaveArray
  : E extends 'f64'
    ? Float64Array
    : Float32Array | Float64Array;

/** Caller-provided result arrays (`JobSpec.into`), and the arrays of a JobResult: one optional field per result row of job-schema.ts. */
export type JobOutputArrays = {
  [R in (typeof JOB_OUTPUTS)[number] as R['field']]?: OutputArray<R['element']> | undefined;
};

/** The dominant cycle of one series. */
export interface DominantCycle {
  /** Frequency in Hz of the strongest non-DC bin. */
  frequency: number;
  /** Period in seconds (1 / frequency). */
  period: number;
  /** Amplitude of the cosine at that frequency, in the signal's units. */
  amplitude: number;
  /** Phase in radians of that cosine at sample 0. */
  phase: number;
  /** The FFT bin (frequency = bin * fs / N). */
  bin?: number | undefined;
}

/** What a finished job returns; an array field (JobOutputArrays) is present when its flag was asked for. */
export interface JobResult extends JobOutputArrays {
  id: number;
  /** The lane (and its device) that ran it. */
  lane: number;
  device: number;
  batch: number;
  /** N, samples per series. */
  length: number;
  fs: number;
  /** `cycles`: the dominant cycle of each series. */
  dominant?: DominantCycle[] | undefined;
  /** What registered stages returned, by stage name (a chunked job: one value per chunk, in order). */
  stages?: Record<string, unknown> | undefined;
  /** Framed `stft` (`nperseg`): STFT frames per series. */
  frames?: number | undefined;
  /** Milliseconds waiting in the queue, running (host wall clock) and on the GPU (events). */
  timings: { queuedMs: number; runMs: number; gpuMs: number };
}

/** A job's life: queued -> running -> ready | error; cancelled while queued. */
export type JobStatus = 'queued' | 'running' | 'ready' | 'error' | 'cancelled';

/** A submitted job. */
export interface Job {
  readonly id: number;
  readonly label: string | undefined;
  readonly status: JobStatus;
  /** Resolves with the result, or rejects with a JobError (or JobCancelledError, or EngineClosedError). */
  readonly result: Promise<JobResult>;
  /**
   * Resolves (never rejects) once the engine no longer reads the job's `data` nor writes its `into`
   * arrays: when `result` settles, or later for a job that timed out while running (its work on
   * the GPU finishes first). Memory lent to the job may be reused from then on, not before.
   */
  readonly released: Promise<void>;
  /** Cancels the job if it is still queued; true when it was. */
  cancel(): boolean;
}

/** Per-lane and whole-engine statistics (`engine.stats()`). */
export interface LaneStats {
  lane: number;
  device: number;
  jobs: number;
  errors: number;
  avgJobMs: number;
  p99JobMs: number;
  samplesPerSecond: number;
  bytesMoved: number;
  /** Fraction of wall time this lane's stream had GPU work (from events). */
  gpuBusyFraction: number;
}

/** One device's share of the engine (`engine.stats().devices`): its lanes' counts and bytes summed, latencies over its lanes' windows, samples per second over its lanes' wall span, its lanes' mean GPU busy fraction. */
export interface DeviceStats {
  device: number;
  /** Lanes on this device. */
  lanes: number;
  jobs: number;
  errors: number;
  avgJobMs: number;
  p99JobMs: number;
  samplesPerSecond: number;
  bytesMoved: number;
  gpuBusyFraction: number;
}

/** The whole engine's statistics (`engine.stats()`): the lanes' counts and bytes summed, latencies (ms, successful jobs in each lane's recent window) over all lanes, samples per second over the wall span of all lanes, the mean GPU busy fraction, and the jobs queued and running now. */
export interface EngineStats {
  lanes: LaneStats[];
  /** Per device, in the order of the engine's devices (one entry on one GPU). */
  devices: DeviceStats[];
  jobs: number;
  errors: number;
  queued: number;
  running: number;
  avgJobMs: number;
  p99JobMs: number;
  samplesPerSecond: number;
  bytesMoved: number;
  gpuBusyFraction: number;
  /**
   * How the lanes ran their jobs' compute (JobEngineOptions.computeGraphs): call by call
   * (`eager`), captured into a CUDA graph, or replayed from one. Absent when the engine runs
   * without compute graphs, and where it has no GPU lanes (a test engine).
   */
  computeGraphs?: { eager: number; captured: number; replayed: number } | undefined;
}

/** Options of `new JobEngine(...)`. */
export interface JobEngineOptions {
  /** The device (or its ordinal) for every lane; default device 0. Give one of `device`, `devices` and `context`. */
  device?: Device | number | undefined;
  /** Several devices: `lanes` lanes on each ('all', or Devices / ordinals, each once); each job goes to the least-loaded lane. */
  devices?: 'all' | readonly (Device | number)[] | undefined;
  /** The device of this context (its primary context), as other placements of tscuda accept it. */
  context?: Context | undefined;
  /** Lanes (compute streams) per device; default 4. */
  lanes?: number | undefined;
  /**
   * Jobs each lane holds on the GPU at once (1..8; default 2): the next job's copies and kernels
   * are enqueued while the previous ones run, so the GPU never waits for the host to hear of a
   * completion. Each place keeps its own input and result buffers.
   */
  laneDepth?: number | undefined;
  /** Arithmetic precision on the GPU; default 'f32'. */
  precision?: Precision | undefined;
  /** Queued jobs beyond which submit() throws EngineFullError; default 1024. */
  maxQueued?: number | undefined;
  /**
   * Host memory one job's result arrays may take, those the engine allocates (not the ones given
   * in `into`); a bigger job is refused at submit with ResultTooLargeError. Default 1 GiB.
   */
  maxResultBytes?: number | undefined;
  label?: string | undefined;
  /** Device memory one lane may use for a chunk of a job (bytes); bigger jobs run in chunks of whole series. Default 1 GiB. */
  laneMemoryBytes?: number | undefined;
  /**
   * Replay a repeated job shape's GPU work from a CUDA graph (default true): the second time a
   * lane's place meets the same whole-series job (same length, batch, flags and parameters; no
   * registered stage, no filter, only flags whose row is capturable: not wavelet, envelope or
   * decimate), its kernels and FFTs are captured, and every later such job launches them with one
   * call instead of a dozen, which halves the host's work per job. Results
   * are the same bits either way; `false` runs every job call by call. Without this option, the
   * environment variable TSCUDA_COMPUTE_GRAPHS=0 turns them off (for A/B runs of a server or bench).
   */
  computeGraphs?: boolean | undefined;
}

/** What the server, CLI and tests need of an engine; JobEngine implements it. */
export interface JobEngineLike {
  readonly label: string;
  readonly precision: Precision;
  /** Lanes in all, and the devices they run on. */
  readonly laneCount: number;
  readonly devices: readonly number[];
  /** Rejects when the engine can no longer run work (its CUDA context was lost by a sticky error). */
  readonly lost: Promise<never>;
  /**
   * Optional: jobs waiting for a lane now, and the bound past which submit() throws EngineFullError
   * (JobEngine has both). A layer in front that holds jobs before submitting them (the server's
   * request fuser) refuses by them at once, as submit() would.
   */
  readonly queued?: number;
  readonly maxQueued?: number;
  /**
   * Optional: true when every job refuses non-finite samples itself (JobEngine searches each chunk
   * on the GPU as it arrives, and the job's result rejects with the JobValidationError that the CPU
   * scan of finite-samples.ts throws), so a layer in front need not scan them first. Absent or
   * false: it should (the rule is one for every way in).
   */
  readonly checksSamples?: boolean;
  /** Validates and queues a job; throws a named error (JobValidationError, EngineFullError, EngineClosedError) at once. */
  submit(spec: JobSpec): Job;
  /** Like submit, but waits for room instead of throwing EngineFullError. */
  submit(spec: JobSpec, options: { wait: true; signal?: AbortSignal | undefined }): Promise<Job>;
  /** A snapshot of per-lane and whole-engine statistics, synchronous (the server's stats endpoint and metrics read it); it must keep working after close() or a lost context. */
  stats(): EngineStats;
  /** Stops accepting jobs and settles every accepted one; resolves when all have. */
  close(): Promise<void>;
  /**
   * Optional: lends a pinned array that jobs read and write without a host copy (JobEngine has
   * it); the server keeps its request bodies and results there when the engine offers it.
   */
  hostBuffer?(dtype: 'f32', length: number): Float32Array;
  /** The float64 form of hostBuffer(). */
  hostBuffer?(dtype: 'f64', length: number): Float64Array;
  /** 16-bit integer samples (a job's `data` of dtype i16). */
  hostBuffer?(dtype: 'i16', length: number): Int16Array;
  /** Raw f16 or bf16 bits (a job's `data` or `into` waves of that dtype). */
  hostBuffer?(dtype: JobHalfType, length: number): Uint16Array;
  /** Frees an array lent by hostBuffer(); true when it was one. */
  releaseHostBuffer?(array: JobData): boolean;
}
