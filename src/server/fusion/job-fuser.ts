/**
 * The job fuser (Triton's dynamic batcher for the job engine): small job requests that compute the
 * same thing on series of the same length, arriving within `maxBatchDelayMs` of the first, go to
 * the engine as one job, and each is answered on its own with its own rows of the result.
 *
 * Each request is validated alone, before it joins a window, so a bad one is refused at submit as
 * the engine would refuse it and never reaches a window of others: its samples too are scanned for
 * NaN and infinities (the engine finds them only on the GPU, after running the whole stack, which
 * would fail every request of the window). A window is submitted when its
 * delay runs out or it is full (`maxSamples`, `maxSeries`, `maxResultBytes`, `maxRequests`: every
 * fused job is bounded); only requests of at most half these bounds, and of at most
 * `maxRequestSamples` samples, join windows, bigger ones go to the engine as they are: a request of
 * a quarter million samples or more already keeps a lane's copies and kernels busy, and stacking it
 * would only add a copy of its samples and of its results (measured: fusing 4 MiB requests lowered
 * req/s). A request with registered stages (one value per job, not per series) or
 * an AbortSignal goes alone too.
 *
 * The pipeline's Batcher is not reused whole: it batches one stream of like items through one
 * dispatch, where fusing needs a window per key, bounds in samples, series and bytes, and answers
 * that are jobs (status, cancel while queued, released memory). Its one-timer DeadlineTimer is.
 * CUDA-free.
 */
import { allocatedResultBytes } from '../../engine/capacity.js';
import { EngineClosedError, EngineFullError } from '../../engine/errors.js';
import type { Job, JobEngineLike, JobSpec } from '../../engine/types.js';
import { checkFiniteSamples } from '../../engine/finite-samples.js';
import { checkIntoFields } from '../../engine/into-checks.js';
import { checkSampleTypes } from '../../engine/sample-types.js';
import { checkInto, validateJobParameters, type NormalizedJob, type ValidationContext } from '../../engine/validate.js';
import { DeadlineTimer, TIMER_GRANULARITY_MS } from '../../pipeline/batching/deadline-timer.js';
import type { Precision } from '../../runtime/fft/precision.js';
import { MAX_TIMEOUT_MS } from '../../runtime/timeout.js';
import { positiveInteger, shownValue } from '../../runtime/value-checks.js';
import { checkedParameters } from './checked-specs.js';
import type { FusionMemory } from './fused-arrays.js';
import { FusedRequest } from './fused-request.js';
import { builtinFlagsOnly, fusionKey } from './fusion-key.js';
import { FusionWindow } from './fusion-window.js';

/**
 * Default bounds of one fused job: 4 Mi samples (16 MiB of f32 in), 16384 series, 256 MiB of
 * results, 1024 requests; and of a request that may join one: 256 Ki samples (1 MiB of f32).
 */
export const DEFAULT_FUSION_BOUNDS = {
  maxSamples: 1 << 22,
  maxSeries: 1 << 14,
  maxResultBytes: 256 * 2 ** 20,
  maxRequests: 1024,
  maxRequestSamples: 1 << 18,
} as const;

/** Options of a JobFuser. */
export interface JobFuserOptions {
  /** How long the first request of a window waits for others to join it, ms: a finite number > 0. */
  maxBatchDelayMs: number;
  /** Samples (B x N) of one fused job at most; default 2^22. */
  maxSamples?: number | undefined;
  /** Series of one fused job at most; default 16384. */
  maxSeries?: number | undefined;
  /** Bytes of result arrays the engine allocates for one fused job at most; default 256 MiB (the engine refuses more than its `maxResultBytes`, 1 GiB by default). */
  maxResultBytes?: number | undefined;
  /** Requests in one fused job at most; default 1024. */
  maxRequests?: number | undefined;
  /** Samples (B x N) of a request that may join a window at most; default 2^18: a bigger one goes to the engine alone. */
  maxRequestSamples?: number | undefined;
  /** Where the stacked samples and result arrays of a fused job are taken from (the server's body pool); default fresh arrays. */
  memory?: FusionMemory | undefined;
  /** Called with the number of requests of every job a window submits (1 for a request that waited alone). */
  onSubmitted?: ((requests: number) => void) | undefined;
  /**
   * The caller scanned every request's samples for NaN and infinities already (the server's door,
   * job-io.ts readJob): the fuser does not scan them again. Default false: it scans each request it
   * fuses, and each it passes on alone unless the engine checks its jobs' samples itself
   * (JobEngineLike.checksSamples).
   */
  samplesChecked?: boolean | undefined;
}

/** The bounds of a fused job and of a request that may join one (DEFAULT_FUSION_BOUNDS, resolved). */
type FusionBounds = { readonly [K in keyof typeof DEFAULT_FUSION_BOUNDS]: number };

/** Registered stages are never fused, so none are known here: a job naming one is not validated by the fuser. */
const NO_STAGES: ValidationContext = { stages: new Set<string>() };

/**
 * `spec` validated alone as the engine's validateJob does and, unless `samplesChecked`, its samples
 * scanned for NaN and infinities in the engine's `precision` (finite-samples.ts): one bad request
 * is refused alone, before it joins a window whose stacked job the engine would refuse whole.
 */
function validated(spec: JobSpec, samplesChecked: boolean, precision: Precision): NormalizedJob {
  const samples = checkSampleTypes(spec, { finite: !samplesChecked, precision });
  // The server's door validated these very parameters (checked-specs.ts): taken as it found them,
  // but `into`, which the job runner added since. With stageParams the door knew registered stages
  // this check does not (NO_STAGES), so such a spec is validated here as before.
  const known = spec.stageParams === undefined ? checkedParameters(spec) : undefined;
  if (known !== undefined) return { ...samples, ...known, into: checkIntoFields(spec.into) };
  return { ...samples, ...validateJobParameters(spec, samples.data.length, NO_STAGES, samples.dtype) };
}

/** Whether `spec` goes to the engine alone rather than into a window (too big to share one). */
function goesAlone(job: NormalizedJob, resultBytes: number, b: FusionBounds): boolean {
  const large = job.data.length > b.maxRequestSamples || 2 * job.data.length > b.maxSamples;
  return large || 2 * job.batch > b.maxSeries || 2 * resultBytes > b.maxResultBytes;
}

/** Fuses small job requests of one shape into engine jobs (see the file's comment). */
export class JobFuser {
  readonly #engine: JobEngineLike;
  readonly #delayMs: number;
  readonly #bounds: FusionBounds;
  readonly #memory: FusionMemory | undefined;
  readonly #onSubmitted: ((requests: number) => void) | undefined;
  readonly #samplesChecked: boolean;
  /** Open windows by key, in the order they opened (so also by deadline: one delay for all). */
  readonly #windows = new Map<string, FusionWindow>();
  readonly #timer = new DeadlineTimer(() => this.#submitDue());
  readonly #forget = (window: FusionWindow): void => {
    if (this.#windows.get(window.key) === window) this.#windows.delete(window.key);
  };
  #nextId = 1;
  #closed = false;
  #lost = false;

  constructor(engine: JobEngineLike, options: JobFuserOptions) {
    const delay = options.maxBatchDelayMs as unknown;
    if (typeof delay !== 'number' || !(delay > 0) || delay > MAX_TIMEOUT_MS)
      throw new RangeError(
        `maxBatchDelayMs must be a number of ms in (0, ${MAX_TIMEOUT_MS}] (0 turns fusing off: no fuser), got ${shownValue(delay)}`,
      );
    this.#engine = engine;
    this.#delayMs = delay;
    const bound = (name: keyof typeof DEFAULT_FUSION_BOUNDS): number =>
      positiveInteger(options[name] ?? DEFAULT_FUSION_BOUNDS[name], name);
    this.#bounds = {
      maxSamples: bound('maxSamples'),
      maxSeries: bound('maxSeries'),
      maxResultBytes: bound('maxResultBytes'),
      maxRequests: bound('maxRequests'),
      maxRequestSamples: bound('maxRequestSamples'),
    };
    this.#memory = options.memory;
    this.#onSubmitted = options.onSubmitted;
    this.#samplesChecked = options.samplesChecked === true;
    // A lost context fails every submit: the requests waiting hear it now rather than at their window's end, later ones at once.
    engine.lost.catch(() => {
      this.#lost = true;
      this.submitAll();
    });
  }

  /** Requests waiting in windows now. */
  get waiting(): number {
    let n = 0;
    for (const window of this.#windows.values()) n += window.requests.length;
    return n;
  }

  /**
   * Validates `spec` alone (throws the engine's JobValidationError at once, as engine.submit() does)
   * and returns its job: a request waiting for others of its key, or the engine's own job for a
   * request that goes alone.
   */
  submit(spec: JobSpec): Job {
    if (this.#closed) throw new EngineClosedError(this.#engine.label);
    // A lost engine, not an object with flags, registered stages, an AbortSignal: the engine takes it (or refuses it) as it is.
    const flags = (spec as Partial<JobSpec> | null)?.flags;
    if (this.#lost || !Array.isArray(flags) || !builtinFlagsOnly(flags) || spec.signal !== undefined)
      return this.#engine.submit(spec);
    const precision = this.#engine.precision;
    // The samples are scanned below only where nothing else will: a request that goes alone to an
    // engine that searches its jobs' samples on the GPU is not scanned on the CPU first.
    const job = validated(spec, true, precision);
    checkInto(job, precision);
    const resultBytes = allocatedResultBytes(job, precision);
    const alone = goesAlone(job, resultBytes, this.#bounds);
    // validated() checked the samples' types: only the scan is left (checkSampleTypes' own last step).
    if (!this.#samplesChecked && !(alone && this.#engine.checksSamples === true))
      checkFiniteSamples(job.data, job.dtype, precision);
    if (alone) return this.#engine.submit(spec);
    const request = new FusedRequest(this.#nextId++, spec, job, resultBytes);
    const key = fusionKey(job);
    let window = this.#windows.get(key);
    // Each open window is one engine job to come: a request that would open one more than the
    // engine's queue has room for is refused now (EngineFullError, a 429), as submit() refuses it.
    if (window === undefined) this.#checkRoom();
    if (window !== undefined && !this.#fits(window, request)) {
      this.#submit(window);
      window = undefined;
    }
    if (window === undefined) {
      const now = performance.now();
      window = new FusionWindow(key, now + this.#delayMs, this.#forget);
      this.#windows.set(key, window);
      this.#timer.arm(window.deadline, now);
    }
    window.add(request);
    // Full for another request like this one: no reason to wait.
    if (!this.#fits(window, request)) this.#submit(window);
    return request;
  }

  /** Submits every open window now (close, a lost context). */
  submitAll(): void {
    this.#timer.clear();
    for (const window of [...this.#windows.values()]) this.#submit(window);
  }

  /** Refuses new requests (EngineClosedError) and submits the windows open now. */
  close(): void {
    this.#closed = true;
    this.submitAll();
  }

  #checkRoom(): void {
    const { queued, maxQueued } = this.#engine;
    if (queued !== undefined && maxQueued !== undefined && queued + this.#windows.size >= maxQueued)
      throw new EngineFullError(this.#engine.label, maxQueued);
  }

  #fits(window: FusionWindow, request: FusedRequest): boolean {
    const b = this.#bounds;
    return (
      window.requests.length < b.maxRequests &&
      window.rows + request.rows <= b.maxSeries &&
      window.samples + request.data.length <= b.maxSamples &&
      window.resultBytes + request.resultBytes <= b.maxResultBytes
    );
  }

  #submit(window: FusionWindow): void {
    this.#forget(window);
    window.submit(this.#engine, this.#memory, this.#onSubmitted);
  }

  /** The timer's wake-up: submits the windows whose delay has run out, and waits for the next. */
  #submitDue(): void {
    const now = performance.now();
    for (const window of this.#windows.values()) {
      // Node's timers may wake up to a millisecond early.
      if (window.deadline > now + TIMER_GRANULARITY_MS) break;
      this.#submit(window);
    }
    const next = this.#windows.values().next();
    if (next.done !== true) this.#timer.arm(next.value.deadline, now);
  }
}
