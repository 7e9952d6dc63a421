/**
 * User-registered job stages (`engine.registerStage(name, stage)`): the seed's SUPDEM and other
 * flags plug in here. A stage runs on the job's lane, in stream order, after the forward FFT or
 * after the inverse FFT, over the lane's device buffers; it may launch any kernel (NVRTC or fatbin)
 * on `ctx.stream`.
 */
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { Stream } from '../runtime/stream.js';
import { BUILTIN_FLAGS } from './validate.js';
import type { Precision } from '../runtime/fft/precision.js';

/** Where a stage runs in a job's flow. */
export type StagePlacement = 'fft' | 'inverse';

/** What a stage gets: the lane's stream and the job's device buffers (rows of this chunk only). */
export interface StageContext {
  /** The stage's name, the job id, the lane and device running it. */
  readonly name: string;
  readonly jobId: number;
  readonly lane: number;
  readonly device: number;
  /** Enqueue every kernel here, synchronously inside run(): the lane's stream. */
  readonly stream: Stream;
  readonly precision: Precision;
  /** Series (rows) in this chunk, samples per series, sampling frequency. */
  readonly batch: number;
  readonly length: number;
  readonly fs: number;
  /** One-sided bins per series: length / 2 + 1. */
  readonly bins: number;
  /** The raw input, batch x length (f32 or f64 as the engine's precision). */
  readonly input: DeviceBuffer<Precision>;
  /** The detrended, windowed input the forward FFT read, batch x length. */
  readonly windowed: DeviceBuffer<Precision>;
  /** The forward FFT of `windowed`, batch x bins complex (c64 or c128); unnormalized (cuFFT). */
  readonly spectrum: DeviceBuffer<'c64' | 'c128'>;
  /** After 'inverse': the band-passed wave (batch x length, normalized); before it, undefined. */
  readonly output: DeviceBuffer<Precision> | undefined;
  /** `stageParams[name]` of the job. */
  readonly params: unknown;
}

/** A registered stage. */
export interface Stage {
  /** After the forward FFT (before the mask) or after the inverse FFT. */
  after: StagePlacement;
  /**
   * Enqueues the stage's GPU work on `ctx.stream` (synchronously: the lane goes on right after).
   * Its return value lands in `result.stages[name]`; a promise is awaited once the job's work has
   * completed on the GPU (its finished event), so it may read back what its kernels wrote.
   */
  run(ctx: StageContext): unknown;
}

/** Thrown by registerStage for a bad name or stage. */
export class StageRegistrationError extends TypeError {
  override readonly name: string = 'StageRegistrationError';
}

/** The stages an engine knows, by name. */
export class StageRegistry {
  readonly #stages = new Map<string, Stage>();
  readonly #names = new Set<string>();

  /** Adds a stage that jobs can then name. Throws StageRegistrationError for a name that is not identifier-like (letters, digits, `_`, `.`, `-`), is a built-in flag or is already registered, or for a stage without `run` or with `after` other than 'fft' or 'inverse'. */
  register(name: string, stage: Stage): void {
    if (typeof name !== 'string' || !/^[A-Za-z_][\w.-]*$/.test(name))
      throw new StageRegistrationError(`stage name must be an identifier-like string, got ${JSON.stringify(name)}`);
    if ((BUILTIN_FLAGS as readonly string[]).includes(name))
      throw new StageRegistrationError(`"${name}" is a built-in flag; pick another stage name`);
    if (this.#stages.has(name)) throw new StageRegistrationError(`a stage "${name}" is already registered`);
    if (typeof stage !== 'object' || stage === null || typeof stage.run !== 'function')
      throw new StageRegistrationError(`stage "${name}" needs a run(ctx) function`);
    if (stage.after !== 'fft' && stage.after !== 'inverse')
      throw new StageRegistrationError(
        `stage "${name}".after must be 'fft' or 'inverse', got ${JSON.stringify(stage.after)}`,
      );
    this.#stages.set(name, stage);
    this.#names.add(name);
  }

  /** The stage registered as `name`, or undefined when there is none. */
  get(name: string): Stage | undefined {
    return this.#stages.get(name);
  }

  /** The registered names (for job validation). */
  names(): ReadonlySet<string> {
    return this.#names;
  }
}
