/**
 * A CUDA-free JobEngineLike for the server's tests: deterministic results (filtered = 2 x data;
 * 16-bit data as the engine reads it: i16 x scale, f16/bf16 bits as their values x scale; waves
 * as f16/bf16 bits when `outputDtype` asks), a bounded queue, optional manual release of jobs,
 * and a context loss on demand.
 */
import type { Job, JobEngineLike, JobResult, JobSpec, JobStatus, EngineStats } from '../../../src/engine/types.js';
import {
  EngineClosedError,
  EngineFullError,
  EngineLostError,
  JobCancelledError,
  JobError,
  JobTimeoutError,
  JobValidationError,
} from '../../../src/engine/errors.js';
import { JOB_OUTPUTS } from '../../../src/engine/job-schema.js';
import { BatcherFullError } from '../../../src/pipeline/batching/errors.js';
import { bf16Bits, bf16Value, f16Bits, f16Value } from '../../../src/runtime/memory/half.js';

/** Sample i of a job's data as the engine reads it: i16 times scale (default 1/32768), f16/bf16 bits as their value times scale (default 1). */
export function sampleValue(spec: JobSpec, i: number): number {
  const v = spec.data[i]!;
  if (spec.data instanceof Int16Array) return v * (spec.scale ?? 1 / 32768);
  if (spec.data instanceof Uint16Array) return (spec.dtype === 'bf16' ? bf16Value(v) : f16Value(v)) * (spec.scale ?? 1);
  return v;
}

class NamedError extends Error {
  constructor(name: string, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.name = name;
    Object.assign(this, extra);
  }
}

interface FakeJob extends Job {
  spec: JobSpec;
  run(): void;
  fail(error: unknown): void;
}

export interface FakeEngineOptions {
  maxQueued?: number;
  /** Jobs finish after this many ms (default 0); with `manual`, only on release(). */
  delayMs?: number;
  manual?: boolean;
  precision?: 'f32' | 'f64';
  /** A job with this flag loses the context a few ms after submit (the test-only fault stage). */
  faultFlag?: string;
  /** Every value of series b computed from series b's samples alone (fakeResult's `perSeries`), as the real engine's are: fused and unfused answers then agree. */
  perSeries?: boolean;
  /** Called for each job as it runs: an error returned fails the job with it (a failing GPU job). */
  failJob?: (spec: JobSpec) => Error | undefined;
  /** Every result carries every field a result can (completeResult): an answer then shows all its schema must list. */
  complete?: boolean;
}

/**
 * `result` with every field a JobResult can carry: each result array of the engine's output rows
 * (those its flags did not produce: B values of `element`'s type), STFT frames, dominant cycles
 * and stage values nested as a registered stage may return them.
 */
export function completeResult(result: JobResult): JobResult {
  const full: JobResult = {
    ...result,
    frames: result.frames ?? 1,
    dominant: result.dominant ?? [{ frequency: 2, period: 0.5, amplitude: 1.5, phase: -0.25 }],
    stages: { ...result.stages, custom: { nested: [1, { deep: 'value', none: null }], flag: true } },
  };
  for (const row of JOB_OUTPUTS)
    if (full[row.field] === undefined)
      full[row.field] = Float64Array.from({ length: result.batch }, (_, i) => i + 0.5) as never;
  return full;
}

/**
 * What a fake job computes, so tests can check the HTTP result against it. `perSeries`: spectrum,
 * band powers, dominant cycles and wavelet power of series b depend on series b's samples only (by
 * default they count through the whole job).
 */
export function fakeResult(spec: JobSpec, id: number, precision: 'f32' | 'f64', perSeries = false): JobResult {
  const batch = spec.batch ?? 1;
  const n = spec.data.length / batch;
  const make = (len: number): Float32Array | Float64Array =>
    precision === 'f32' ? new Float32Array(len) : new Float64Array(len);
  const result: JobResult = {
    id,
    lane: id % 2,
    device: 0,
    batch,
    length: n,
    fs: spec.fs ?? 1,
    timings: { queuedMs: 1, runMs: 2, gpuMs: 1.5 },
  };
  if (spec.flags.includes('stft')) {
    const half = spec.outputDtype === 'f16' ? f16Bits : spec.outputDtype === 'bf16' ? bf16Bits : undefined;
    if (half !== undefined)
      result.filtered = Uint16Array.from({ length: spec.data.length }, (_, i) => half(sampleValue(spec, i) * 2));
    else {
      const filtered = make(spec.data.length);
      for (let i = 0; i < filtered.length; i++) filtered[i] = sampleValue(spec, i) * 2;
      result.filtered = filtered;
    }
    const bins = spec.previewBins ?? Math.min(4, Math.floor(n / 2) + 1);
    const spectrum = make(batch * bins);
    for (let i = 0; i < spectrum.length; i++)
      spectrum[i] = perSeries ? sampleValue(spec, Math.floor(i / bins) * n) * ((i % bins) + 1) : i;
    result.spectrum = spectrum;
  }
  if (spec.flags.includes('cycles')) {
    const bands = spec.bands?.length ?? 0;
    result.bandPowers = Float64Array.from({ length: batch * bands }, (_, i) =>
      perSeries ? sampleValue(spec, Math.floor(i / bands) * n + 1) + (i % bands) : i + 0.5,
    );
    result.dominant = Array.from({ length: batch }, (_, b) => {
      const frequency = perSeries ? 1 + Math.abs(sampleValue(spec, b * n + 2)) : b + 1;
      return { frequency, period: 1 / frequency, amplitude: 2, phase: 0.25 };
    });
  }
  if (spec.flags.includes('wavelet')) {
    const rows = spec.waveletBands === true ? spec.bands!.length : spec.freqs!.length;
    const p = make(batch * rows * n);
    for (let i = 0; i < p.length; i++)
      p[i] = perSeries
        ? sampleValue(spec, Math.floor(i / (rows * n)) * n + (i % n)) * (Math.floor(i / n) % rows)
        : i % 7;
    result.waveletPower = p;
  }
  const stages = spec.flags.filter((f) => f !== 'stft' && f !== 'cycles' && f !== 'wavelet');
  if (stages.length > 0) result.stages = Object.fromEntries(stages.map((s) => [s, { ran: true }]));
  return result;
}

export class FakeEngine implements JobEngineLike {
  readonly label = 'fake';
  readonly precision: 'f32' | 'f64';
  readonly laneCount = 2;
  readonly devices = [0] as const;
  readonly lost: Promise<never>;
  readonly submitted: JobSpec[] = [];
  #lose!: (error: unknown) => void;
  #queue: FakeJob[] = [];
  #running = 0;
  #jobs = 0;
  #closed = false;
  #nextId = 1;
  readonly #options: FakeEngineOptions;

  constructor(options: FakeEngineOptions = {}) {
    this.#options = options;
    this.precision = options.precision ?? 'f32';
    this.lost = new Promise<never>((_, reject) => (this.#lose = reject));
    this.lost.catch(() => undefined);
  }

  get queued(): number {
    return this.#queue.length;
  }

  get maxQueued(): number {
    return this.#options.maxQueued ?? 1024;
  }

  submit(spec: JobSpec): Job;
  submit(spec: JobSpec, options: { wait: true; signal?: AbortSignal }): Promise<Job>;
  submit(spec: JobSpec, options?: { wait: true }): Job | Promise<Job> {
    if (this.#closed) throw new EngineClosedError('fake');
    if (spec.flags.includes('reject-me')) throw new JobValidationError('flags[0]', 'refused by the engine');
    if (this.#queue.length >= (this.#options.maxQueued ?? 1024))
      throw new EngineFullError('fake', this.#options.maxQueued ?? 1024);
    this.submitted.push(spec);
    if (this.#options.faultFlag !== undefined && spec.flags.includes(this.#options.faultFlag))
      setTimeout(() => this.loseContext(), 5);
    const id = this.#nextId++;
    let status: JobStatus = 'queued';
    let resolve!: (r: JobResult) => void;
    let reject!: (e: unknown) => void;
    const result = new Promise<JobResult>((res, rej) => ((resolve = res), (reject = rej)));
    const engine = this;
    const job: FakeJob = {
      id,
      label: spec.label,
      spec,
      get status() {
        return status;
      },
      result,
      // The fake writes its result when it settles: the job's memory is free with it.
      released: result.then(
        () => undefined,
        () => undefined,
      ),
      cancel() {
        if (status !== 'queued') return false;
        status = 'cancelled';
        engine.#queue = engine.#queue.filter((j) => j !== job);
        reject(new JobCancelledError(id));
        return true;
      },
      run() {
        status = 'running';
        engine.#running++;
        const finish = (): void => {
          engine.#running--;
          engine.#jobs++;
          status = 'ready';
          const failure = engine.#options.failJob?.(spec);
          if (spec.flags.includes('explode') || failure !== undefined) {
            status = 'error';
            reject(failure ?? new JobError(id, 0, 0, 'explode', new Error('boom')));
          } else {
            const result = fakeResult(spec, id, engine.precision, engine.#options.perSeries);
            resolve(engine.#options.complete === true ? completeResult(result) : result);
          }
        };
        if ((engine.#options.delayMs ?? 0) > 0) setTimeout(finish, engine.#options.delayMs);
        else queueMicrotask(finish);
      },
      fail(error) {
        status = 'error';
        reject(error);
      },
    };
    this.#queue.push(job);
    if (spec.timeoutMs !== undefined) {
      // As the engine: the job fails with JobTimeoutError at its deadline, cancelled if still queued.
      const timer = setTimeout(() => {
        const wasRunning = status === 'running';
        if (status === 'queued') engine.#queue = engine.#queue.filter((j) => j !== job);
        else if (status !== 'running') return;
        status = 'error';
        reject(new JobTimeoutError(id, spec.timeoutMs!, wasRunning));
      }, spec.timeoutMs);
      void result.then(
        () => clearTimeout(timer),
        () => clearTimeout(timer),
      );
    }
    if (this.#options.manual !== true) queueMicrotask(() => this.release(1));
    return options?.wait === true ? Promise.resolve(job) : job;
  }

  /** Starts up to `n` queued jobs (all by default). */
  release(n = Infinity): void {
    for (let i = 0; i < n && this.#queue.length > 0; i++) this.#queue.shift()!.run();
  }

  /** Loses the context: pending jobs reject with a sticky error and `lost` rejects. */
  loseContext(): void {
    const error = new NamedError('CudaError', 'CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered', {
      sticky: true,
      status: 'CUDA_ERROR_ILLEGAL_ADDRESS',
    });
    for (const job of this.#queue.splice(0)) job.fail(new EngineLostError('fake', error));
    this.#lose(new EngineLostError('fake', error));
  }

  stats(): EngineStats {
    return {
      lanes: [],
      devices: [],
      jobs: this.#jobs,
      errors: 0,
      queued: this.#queue.length,
      running: this.#running,
      avgJobMs: 1,
      p99JobMs: 2,
      samplesPerSecond: 1e6,
      bytesMoved: 0,
      gpuBusyFraction: 0.25,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.release();
    while (this.#running > 0) await new Promise((r) => setTimeout(r, 1));
  }
}

/** A fake batcher: gradient = 2x, lerp/slerp = a + t (b - a); optional channel size. */
export function fakeBatcher<I>(
  compute: (item: I) => Float32Array,
  channelSize = Infinity,
): {
  submit(items: readonly I[], options?: { wait?: boolean; signal?: AbortSignal }): Promise<Float32Array[]>;
  metrics: { batches: number; items: number; fillRate: number; queued: number };
  close(): Promise<void>;
  closed: boolean;
} {
  let inFlight = 0;
  const b = {
    metrics: { batches: 0, items: 0, fillRate: 0.5, queued: 0 },
    closed: false,
    submit(items: readonly I[]): Promise<Float32Array[]> {
      if (inFlight >= channelSize) {
        return Promise.reject(new BatcherFullError('channel full'));
      }
      inFlight++;
      b.metrics.batches++;
      b.metrics.items += items.length;
      return new Promise((resolve) =>
        setTimeout(() => {
          inFlight--;
          resolve(items.map(compute));
        }, 1),
      );
    },
    async close() {
      b.closed = true;
    },
  };
  return b;
}
