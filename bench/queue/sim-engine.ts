/**
 * SimEngine: a CUDA-free JobEngineLike that behaves like one GPU for the queue bench's CPU mode
 * (`--sim`), so the queue's own costs can be measured on a host without a GPU. What a job costs
 * the host is done for real: the engine's validation, the copy of the samples into the lane's
 * (here ordinary) staging memory, fresh result arrays of the engine's sizes filled from staging
 * memory (the copy out). What the GPU does is simulated: one device that runs jobs one after
 * another, each for `nsPerSample` x samples + `fixedUs` (3.4 ns/sample is ~0.9 ms for the mix's
 * 16 x 16384 job, ~1100 jobs/s, the H200's in-process rate), with at most `lanes` x `laneDepth`
 * jobs on it; the rest wait in the engine's queue. Completions are seen as the engine's poller
 * sees them: by default on timers (1 ms granularity, cheap on a small host), with `poll: 'spin'`
 * on setImmediate while work completes (the real poller's CPU cost).
 */
import {
  allocateOutputs,
  validateJob,
  type EngineStats,
  type NormalizedJob,
  type Job,
  type JobEngineLike,
  type JobResult,
  type JobSpec,
  type JobStatus,
} from '../../src/engine/index.js';

/** Options of `new SimEngine(...)`. */
export interface SimEngineOptions {
  /** Simulated GPU time per sample, ns; default 3.4. */
  nsPerSample?: number | undefined;
  /** Simulated GPU time per job besides the samples', µs; default 20. */
  fixedUs?: number | undefined;
  /** Lanes (the engine's laneCount) and jobs each holds on the device; default 4 and 2. */
  lanes?: number | undefined;
  laneDepth?: number | undefined;
  /** How completions are noticed: 'timer' (default) or 'spin' (setImmediate while work completes, as the real poller). */
  poll?: 'timer' | 'spin' | undefined;
  /**
   * Whether the samples and the filtered wave are copied on the host (default true: a queue
   * worker's samples are ordinary memory). false as for a server's pooled bodies and answers, which
   * are the engine's pinned memory: the GPU reads and writes them directly, no host copy.
   */
  hostCopies?: boolean | undefined;
  /**
   * Whether the engine says it searches the samples for NaN itself (JobEngineLike.checksSamples), as
   * JobEngine does on the GPU: a server in front then leaves them to it. Default false. The search is
   * GPU time, which the simulated device does not spend: with true, non-finite samples go through.
   */
  checksSamples?: boolean | undefined;
  label?: string | undefined;
}

const NO_STAGES = { stages: new Set<string>() };

interface SimJob {
  id: number;
  spec: JobSpec;
  normalized: NormalizedJob;
  status: JobStatus;
  submittedAt: number;
  startedAt: number;
  /** performance.now() at which the simulated device finishes it. */
  doneAt: number;
  resolve: (r: JobResult) => void;
  reject: (e: unknown) => void;
}

/** A simulated one-GPU engine (see the file's comment). */
export class SimEngine implements JobEngineLike {
  readonly label: string;
  readonly precision = 'f32' as const;
  readonly laneCount: number;
  readonly devices = [0] as const;
  readonly checksSamples: boolean;
  readonly lost: Promise<never> = new Promise<never>(() => undefined);
  readonly #nsPerSample: number;
  readonly #fixedMs: number;
  readonly #slots: number;
  readonly #poll: 'timer' | 'spin';
  readonly #hostCopies: boolean;
  readonly #waiting: SimJob[] = [];
  /** Jobs on the device, in the order it finishes them. */
  readonly #onDevice: SimJob[] = [];
  /** Staging memory the samples are copied into (the real lanes' pinned buffers). */
  #staging = new Float32Array(0);
  #deviceFreeAt = 0;
  #nextId = 1;
  #jobs = 0;
  #closed = false;
  #scheduled = false;

  constructor(options: SimEngineOptions = {}) {
    this.#nsPerSample = options.nsPerSample ?? 3.4;
    this.#fixedMs = (options.fixedUs ?? 20) / 1000;
    this.laneCount = options.lanes ?? 4;
    this.#slots = this.laneCount * (options.laneDepth ?? 2);
    this.#poll = options.poll ?? 'timer';
    this.#hostCopies = options.hostCopies ?? true;
    this.checksSamples = options.checksSamples ?? false;
    this.label = options.label ?? 'sim';
  }

  submit(spec: JobSpec): Job;
  submit(spec: JobSpec, options: { wait: true; signal?: AbortSignal | undefined }): Promise<Job>;
  submit(spec: JobSpec, options?: { wait: true }): Job | Promise<Job> {
    if (this.#closed) throw new Error('SimEngine is closed');
    const normalized = validateJob(spec, NO_STAGES);
    let resolve!: (r: JobResult) => void;
    let reject!: (e: unknown) => void;
    const result = new Promise<JobResult>((res, rej) => ((resolve = res), (reject = rej)));
    const job: SimJob = {
      id: this.#nextId++,
      spec,
      normalized,
      status: 'queued',
      submittedAt: performance.now(),
      startedAt: 0,
      doneAt: 0,
      resolve,
      reject,
    };
    this.#waiting.push(job);
    this.#fill();
    const handle: Job = {
      id: job.id,
      label: spec.label,
      get status() {
        return job.status;
      },
      result,
      // The simulated device copies the samples in at start and writes no caller memory.
      released: result.then(
        () => undefined,
        () => undefined,
      ),
      cancel: () => false,
    };
    return options?.wait === true ? Promise.resolve(handle) : handle;
  }

  /** Moves waiting jobs onto the device while it has room: the copy in happens here, on the host. */
  #fill(): void {
    while (this.#onDevice.length < this.#slots && this.#waiting.length > 0) {
      const job = this.#waiting.shift()!;
      const data = job.spec.data;
      if (this.#hostCopies && this.#staging.length < data.length) this.#staging = new Float32Array(data.length);
      if (this.#hostCopies && data instanceof Float32Array) this.#staging.set(data);
      const now = performance.now();
      job.status = 'running';
      job.startedAt = now;
      this.#deviceFreeAt = Math.max(now, this.#deviceFreeAt) + this.#fixedMs + (data.length * this.#nsPerSample) / 1e6;
      job.doneAt = this.#deviceFreeAt;
      this.#onDevice.push(job);
    }
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled || this.#onDevice.length === 0) return;
    this.#scheduled = true;
    const wait = this.#onDevice[0]!.doneAt - performance.now();
    // Within a fraction of a ms a timer would be late by most of a ms: look again on the next turn.
    if (this.#poll === 'spin' || wait < 0.2) setImmediate(this.#tick);
    else setTimeout(this.#tick, wait);
  }

  readonly #tick = (): void => {
    this.#scheduled = false;
    const now = performance.now();
    while (this.#onDevice.length > 0 && this.#onDevice[0]!.doneAt <= now) this.#finish(this.#onDevice.shift()!, now);
    this.#fill();
  };

  #finish(job: SimJob, now: number): void {
    const normalized = job.normalized;
    const outputs = allocateOutputs(normalized, 'f32');
    // The copy out: fresh result arrays filled from the staging memory.
    const filtered = outputs.filtered;
    if (this.#hostCopies && filtered instanceof Float32Array) filtered.set(this.#staging.subarray(0, filtered.length));
    this.#jobs++;
    job.status = 'ready';
    job.resolve({
      id: job.id,
      lane: job.id % this.laneCount,
      device: 0,
      batch: normalized.batch,
      length: normalized.length,
      fs: normalized.fs,
      ...outputs,
      timings: {
        queuedMs: job.startedAt - job.submittedAt,
        runMs: now - job.startedAt,
        gpuMs: job.doneAt - job.startedAt,
      },
    });
  }

  stats(): EngineStats {
    return {
      lanes: [],
      devices: [],
      jobs: this.#jobs,
      errors: 0,
      queued: this.#waiting.length,
      running: this.#onDevice.length,
      avgJobMs: 0,
      p99JobMs: 0,
      samplesPerSecond: 0,
      bytesMoved: 0,
      gpuBusyFraction: 0,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    while (this.#waiting.length > 0 || this.#onDevice.length > 0) await new Promise((r) => setTimeout(r, 1));
  }
}
