/**
 * The job engine without CUDA: validation at submit, a bounded FIFO queue with backpressure, the
 * job state machine (queued -> running -> ready | error, cancelled while queued), timeouts and
 * AbortSignals, lanes taken as lane-choice.ts picks them, jobs run in chunks (job-chunks.ts),
 * statistics, draining close() and the lost state after a sticky CUDA error. A job whose lane
 * found a non-finite sample on the GPU rejects as the doors refuse it (finite-samples.ts). Lanes
 * are LaneRunners, so unit tests drive it with fake lanes and JobEngine with GPU ones.
 */
import { checkJobFits, coreOptions } from './capacity.js';
import {
  EngineClosedError,
  EngineFullError,
  EngineLostError,
  JobCancelledError,
  JobError,
  JobTimeoutError,
  isStickyError,
} from './errors.js';
import { nonFiniteSampleError } from './finite-samples.js';
import { JobRecord } from './job.js';
import { runJobChunks, type ChunkTotals } from './job-chunks.js';
import { jobResult } from './job-result.js';
import { pickLane, type ScheduledLane } from './lane-choice.js';
import { runsAlone, type JobProgress, type LaneRunner } from './lane-runner.js';
import { LaneStatsRecorder, engineStats } from './stats.js';
import type { EngineStats, Job, JobEngineLike, JobSpec } from './types.js';
import { checkInto, jobSamples, validateJob, type NormalizedJob } from './validate.js';
import type { Precision } from '../runtime/fft/precision.js';

/** Options of the core (JobEngine builds them from JobEngineOptions). */
export interface EngineCoreOptions {
  /** The lanes, in order: lane i is runners[i]. */
  runners: readonly LaneRunner[];
  precision?: Precision | undefined;
  /** Queued jobs beyond which submit() throws EngineFullError; default 1024. */
  maxQueued?: number | undefined;
  /** Host memory one job's result arrays may take (those not given in `into`), else ResultTooLargeError at submit; default 1 GiB. */
  maxResultBytes?: number | undefined;
  label?: string | undefined;
}

interface RoomWaiter {
  spec: NormalizedJob;
  resolve: (job: Job) => void;
  reject: (e: unknown) => void;
  cleanup: () => void;
}

/** The engine core: everything of JobEngineLike except making lanes. */
export class EngineCore implements JobEngineLike {
  readonly label: string;
  readonly precision: Precision;
  readonly maxQueued: number;
  /** Host bytes one job's result arrays may take (EngineCoreOptions.maxResultBytes). */
  readonly maxResultBytes: number;
  readonly lost: Promise<never>;
  /** The devices the lanes run on, each once, in lane order: fixed with the lanes, so found once here. */
  readonly devices: readonly number[];
  readonly #lanes: ScheduledLane[];
  /** The lanes' runners, in lane order (what a job is checked against at submit). */
  readonly #runners: readonly LaneRunner[];
  readonly #queue: JobRecord[] = [];
  readonly #running = new Set<JobRecord>();
  readonly #runningLane = new Map<JobRecord, { lane: ScheduledLane; progress: JobProgress }>();
  readonly #waiters: RoomWaiter[] = [];
  readonly #idle: (() => void)[] = [];
  #executions = 0;
  #nextId = 1;
  #cursor = 0;
  #closing: Promise<void> | undefined;
  #lostError: unknown;
  #isLost = false;
  #rejectLost!: (e: unknown) => void;

  constructor(options: EngineCoreOptions) {
    if (!options || !Array.isArray(options.runners) || options.runners.length === 0)
      throw new TypeError('an engine needs at least one lane');
    const { maxQueued, precision, maxResultBytes } = coreOptions(options);
    this.label = options.label ?? 'engine';
    this.precision = precision;
    this.maxQueued = maxQueued;
    this.maxResultBytes = maxResultBytes;
    this.#runners = [...options.runners];
    this.#lanes = options.runners.map((runner, index) => ({
      index,
      runner,
      active: 0,
      alone: false,
      load: 0,
      stats: new LaneStatsRecorder(index, runner.device),
    }));
    this.devices = Object.freeze([...new Set(this.#lanes.map((l) => l.runner.device))]);
    this.lost = new Promise<never>((_, reject) => (this.#rejectLost = reject));
    this.lost.catch(() => {});
  }

  get laneCount(): number {
    return this.#lanes.length;
  }

  /** Jobs waiting for a lane. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Jobs on a lane now. */
  get running(): number {
    return this.#running.size;
  }

  /** True once close() was called. */
  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /** The names of the registered stages a job may ask for (JobEngine overrides). */
  protected stageNames(): ReadonlySet<string> {
    return EMPTY;
  }

  /** Validates a spec against this engine (fields, flags, lane capacity) without submitting it. */
  validate(spec: JobSpec): NormalizedJob {
    const job = validateJob(spec, { stages: this.stageNames() });
    checkInto(job, this.precision);
    checkJobFits(job, this.#runners, this.precision, this.maxResultBytes);
    return job;
  }

  /** Series per chunk a job runs in (the smallest over the lanes); a job with more series runs in several chunks. */
  chunkRows(spec: JobSpec): number {
    const job = this.validate(spec);
    return Math.min(...this.#lanes.map((l) => l.runner.maxRows(job)));
  }

  /** Frames per series per chunk of a framed-stft job (the smallest over the lanes). */
  chunkFrames(spec: JobSpec): number {
    const job = this.validate(spec);
    return Math.min(...this.#lanes.map((l) => l.runner.maxFrames?.(job) ?? 0));
  }

  submit(spec: JobSpec): Job;
  submit(spec: JobSpec, options: { wait: true; signal?: AbortSignal | undefined }): Promise<Job>;
  submit(
    spec: JobSpec,
    options?: { wait?: boolean | undefined; signal?: AbortSignal | undefined },
  ): Job | Promise<Job> {
    if (options?.wait) return this.#submitWaiting(spec, options.signal);
    this.#checkOpen();
    const job = this.validate(spec);
    if (this.#queue.length >= this.maxQueued) throw new EngineFullError(this.label, this.maxQueued);
    return this.#enqueue(job);
  }

  #checkOpen(): void {
    if (this.#isLost) throw new EngineLostError(this.label, this.#lostError);
    if (this.#closing) throw new EngineClosedError(this.label);
  }

  #submitWaiting(spec: JobSpec, signal: AbortSignal | undefined): Promise<Job> {
    let job: NormalizedJob;
    try {
      this.#checkOpen();
      job = this.validate(spec);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.#queue.length < this.maxQueued && this.#waiters.length === 0) return Promise.resolve(this.#enqueue(job));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<Job>((resolve, reject) => {
      const waiter: RoomWaiter = { spec: job, resolve, reject, cleanup: () => {} };
      if (signal) {
        const onAbort = (): void => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.#waiters.push(waiter);
    });
  }

  #enqueue(spec: NormalizedJob): JobRecord {
    const job = new JobRecord(this.#nextId++, spec, (j) => this.#cancel(j));
    if (spec.signal) {
      const signal = spec.signal;
      if (signal.aborted) {
        job.reject(new JobCancelledError(job.id, signal.reason), 'cancelled');
        return job;
      }
      const onAbort = (): void => void this.#cancelWith(job, signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      job.onSettle(() => signal.removeEventListener('abort', onAbort));
    }
    if (spec.timeoutMs !== undefined) {
      const ms = spec.timeoutMs;
      const timer = setTimeout(() => this.#timeout(job, ms), ms);
      job.onSettle(() => clearTimeout(timer));
    }
    this.#queue.push(job);
    this.#pump();
    return job;
  }

  #cancel(job: JobRecord): boolean {
    return this.#cancelWith(job, undefined);
  }

  #cancelWith(job: JobRecord, reason: unknown): boolean {
    if (job.status !== 'queued') return false;
    this.#removeQueued(job);
    job.reject(new JobCancelledError(job.id, reason), 'cancelled');
    this.#admitWaiters();
    this.#checkIdle();
    return true;
  }

  #removeQueued(job: JobRecord): void {
    const i = this.#queue.indexOf(job);
    if (i >= 0) this.#queue.splice(i, 1);
  }

  #timeout(job: JobRecord, ms: number): void {
    if (job.settled) return;
    const wasRunning = job.status === 'running';
    if (!wasRunning) this.#removeQueued(job);
    job.reject(new JobTimeoutError(job.id, ms, wasRunning));
    if (!wasRunning) {
      this.#admitWaiters();
      this.#checkIdle();
    }
  }

  #pump(): void {
    while (this.#queue.length > 0 && !this.#isLost) {
      // In order: a job that must run alone waits at the head for an empty lane.
      const lane = pickLane(this.#lanes, this.#cursor, this.#queue[0]!.spec);
      if (!lane) break;
      this.#cursor = (lane.index + 1) % this.#lanes.length;
      const job = this.#queue.shift()!;
      void this.#execute(job, lane);
    }
    this.#admitWaiters();
  }

  #admitWaiters(): void {
    while (this.#waiters.length > 0 && this.#queue.length < this.maxQueued && !this.#isLost && !this.#closing) {
      const w = this.#waiters.shift()!;
      w.cleanup();
      w.resolve(this.#enqueue(w.spec));
    }
  }

  async #execute(job: JobRecord, lane: ScheduledLane): Promise<void> {
    const spec = job.spec;
    const samples = jobSamples(spec);
    const progress: JobProgress = { stage: 'start' };
    job.markRunning();
    lane.active++;
    lane.alone = runsAlone(spec);
    lane.load += samples;
    this.#executions++;
    this.#running.add(job);
    this.#runningLane.set(job, { lane, progress });
    const totals: ChunkTotals = { gpuMs: 0, bytesMoved: 0 };
    let ok = false;
    try {
      const run = await runJobChunks(job, lane.runner, this.precision, progress, totals);
      // A NaN or infinity the lane's GPU search found: the job is refused as a door refuses it, its result discarded.
      if (!job.settled && run.nonFinite !== undefined)
        job.reject(nonFiniteSampleError(spec.data, spec.dtype, run.nonFinite));
      if (!job.settled) {
        const endedAt = performance.now();
        ok = job.resolve(
          jobResult(job, { lane: lane.index, device: lane.runner.device }, run.outputs, run.stages, run.chunks, {
            gpuMs: totals.gpuMs,
            endedAt,
          }),
        );
      }
    } catch (cause) {
      job.reject(new JobError(job.id, lane.index, lane.runner.device, progress.stage, cause));
      if (isStickyError(cause)) this.#lose(cause);
    } finally {
      const endedAt = performance.now();
      lane.stats.record({
        ok,
        runMs: endedAt - job.startedAt,
        gpuMs: totals.gpuMs,
        samples,
        bytesMoved: totals.bytesMoved,
        startedAt: job.startedAt,
        endedAt,
      });
      lane.active--;
      lane.alone = false;
      lane.load -= samples;
      job.markReleased();
      this.#executions--;
      this.#running.delete(job);
      this.#runningLane.delete(job);
      this.#pump();
      this.#checkIdle();
    }
  }

  /** A sticky error broke the context: every pending job and waiter fails now, `lost` rejects, submits throw. */
  protected lose(cause: unknown): void {
    this.#lose(cause);
  }

  #lose(cause: unknown): void {
    if (this.#isLost) return;
    this.#isLost = true;
    this.#lostError = cause;
    this.#rejectLost(cause);
    for (const job of this.#queue.splice(0)) job.reject(new JobError(job.id, -1, -1, 'queued', cause));
    for (const [job, { lane, progress }] of this.#runningLane)
      job.reject(new JobError(job.id, lane.index, lane.runner.device, progress.stage, cause));
    for (const w of this.#waiters.splice(0)) {
      w.cleanup();
      w.reject(new EngineLostError(this.label, cause));
    }
    this.#checkIdle();
  }

  /** True once a sticky error broke the engine's context. */
  get isLost(): boolean {
    return this.#isLost;
  }

  /** A snapshot of per-lane and whole-engine statistics (see EngineStats): computed from the lanes' recorders on each call, synchronously, without touching the GPU. */
  stats(): EngineStats {
    return engineStats(
      this.#lanes.map((l) => l.stats),
      this.#queue.length,
      this.#running.size,
    );
  }

  #checkIdle(): void {
    if (this.#queue.length > 0 || this.#executions > 0) return;
    for (const fn of this.#idle.splice(0)) fn();
  }

  /** Resolves when no job is queued or running (lanes idle). */
  idle(): Promise<void> {
    if (this.#queue.length === 0 && this.#executions === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    for (const w of this.#waiters.splice(0)) {
      w.cleanup();
      w.reject(new EngineClosedError(this.label));
    }
    this.#closing = this.idle().then(() => {
      let first: unknown;
      for (const lane of this.#lanes) {
        try {
          lane.runner.dispose();
        } catch (e) {
          first ??= e;
        }
      }
      this.disposeShared();
      if (first !== undefined && !this.#isLost) throw first;
    });
    return this.#closing;
  }

  /** Frees what the lanes share (JobEngine: plan caches, modules); called once after the lanes. */
  protected disposeShared(): void {}
}

const EMPTY: ReadonlySet<string> = new Set();

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}
