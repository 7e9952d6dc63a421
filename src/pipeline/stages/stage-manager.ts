import type { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import type { DType } from '../../runtime/memory/dtype.js';
import type { Dim3, Kernel, KernelArg } from '../../runtime/kernel.js';
import { Profiler } from '../../orchestration/profiler.js';
import { type Interval, totalLength, unionIntervals } from '../../report/timeline.js';
import { expectResource, Resource } from '../../runtime/resource.js';
import { Stream } from '../../runtime/stream.js';
import { AsyncCoordinator } from '../async-coordinator.js';
import type { AsyncOperationId } from '../async-operation.js';
import { HazardTracker } from '../overlap/hazards.js';
import { knownKeys, positiveInteger, shownValue } from '../../runtime/value-checks.js';

/** A kernel stage's launch configuration. */
export interface StageLaunch {
  grid: Dim3;
  block: Dim3;
  sharedMemBytes?: number | undefined;
}

/** What a stage sees when it runs. */
export interface StageIO {
  inputs: readonly DeviceBuffer<DType>[];
  outputs: readonly DeviceBuffer<DType>[];
  iteration: number;
  stream: Stream;
}

/** One stage: a kernel (with its launch) or a run function, over registered buffers. */
export interface PipelineStage {
  name: string;
  /** Indices (from addBuffer) of the buffers the stage reads. */
  inputs?: readonly number[] | undefined;
  /** Indices of the buffers the stage writes. */
  outputs?: readonly number[] | undefined;
  /** Launched with `launch` and `args(io)`; the default arguments are the inputs, then the outputs. */
  kernel?: Kernel | undefined;
  launch?: StageLaunch | undefined;
  /** With `kernel`: builds the kernel's arguments for each run from the stage's buffers, iteration and stream (default: `[...io.inputs, ...io.outputs]`). Called at enqueue time; must match the kernel's parameter list. */
  args?: ((io: StageIO) => readonly KernelArg[]) | undefined;
  /** Instead of `kernel`: enqueues the stage's work on `io.stream` (must not block). */
  run?: ((io: StageIO) => void) | undefined;
}

/** What stats() reports, from the profiler's timeline. */
export interface PipelineStats {
  /** Iterations completed since the last resetStats(). */
  iterations: number;
  /** Mean over those iterations of the GPU time from their first stage's start to their last stage's end. */
  avgIterationMs: number;
  /** Iterations per second of GPU timeline (spanMs). */
  throughput: number;
  /** busyMs / spanMs, from the profiler's records of the stages. */
  gpuUtilization: number;
  /** From the first stage's start to the last stage's end, over the iterations counted. */
  spanMs: number;
  /** Time during which at least one stage ran. */
  busyMs: number;
}

/** What executeIteration() resolves with. */
export interface IterationResult {
  iteration: number;
  operations: AsyncOperationId[];
}

/** How a StageManager is made. */
export interface StageManagerDescriptor {
  /** Default: a new one, disposed with the manager. */
  coordinator?: AsyncCoordinator | undefined;
  /**
   * Times the stages; default: a new one of the manager's own, which keeps only the stage runs
   * of the iterations stats() can still report (the latest `statsWindow`, and those in flight),
   * reusing the timing events of older ones, so a long-running manager's records and events
   * stay bounded. A profiler given here is the caller's: its own `window` bounds it. Stats count
   * only this manager's records.
   */
  profiler?: Profiler | undefined;
  /** Iterations stats() covers: the latest this many (default 1024). */
  statsWindow?: number | undefined;
  /**
   * Each stage on a stream of its own (default), so that stages with no buffer in common
   * overlap, within an iteration and across iterations; false runs all on the compute stream.
   */
  concurrent?: boolean | undefined;
  label?: string | undefined;
}

/** Every key of StageManagerDescriptor (the Record makes a new one fail to compile until listed). */
const DESCRIPTOR_KEYS = Object.keys({
  coordinator: true,
  profiler: true,
  statsWindow: true,
  concurrent: true,
  label: true,
} satisfies Record<keyof StageManagerDescriptor, true>);

/** @deprecated the name before issue 9; use StageManagerDescriptor. */
export type StageManagerOptions = StageManagerDescriptor;

/** Stage runs the StageManager's own profiler keeps. */
const PROFILER_WINDOW = 1 << 16;

interface StageRecord {
  stage: PipelineStage;
  inputs: readonly number[];
  outputs: readonly number[];
  stream: Stream | undefined;
}

const noop = (): void => undefined;

/**
 * Stages over shared device buffers, run in a set order once per executeIteration(). Each
 * stage waits, on the GPU, exactly for the earlier stages whose buffers it conflicts with
 * (read-after-write, write-after-write, write-after-read); everything else overlaps. A
 * user-defined graph of kernel stages, ordered by its buffer conflicts through the AsyncCoordinator
 * (so the Coordinator); pieces of work that each go upload -> compute -> download with buffers of
 * their own overlap on a Lane (pipeline/lanes) instead, as the job engine's jobs do.
 */
export class StageManager extends Resource {
  readonly coordinator: AsyncCoordinator;
  readonly profiler: Profiler;
  readonly #ownsCoordinator: boolean;
  readonly #ownsProfiler: boolean;
  readonly #concurrent: boolean;
  readonly #statsWindow: number;
  readonly #buffers: DeviceBuffer<DType>[] = [];
  readonly #stages: StageRecord[] = [];
  #order: number[] | null = null;
  readonly #hazards = new HazardTracker<AsyncOperationId, Stream>();
  #iteration = 0;
  /** Profiler tokens of each iteration completed since the last reset. */
  readonly #completed = new Map<number, number[]>();
  readonly #inFlight = new Set<Promise<unknown>>();
  /** Profiler tokens of each iteration not yet completed (filled as its stages are enqueued). */
  readonly #running = new Set<number[]>();
  /** Set while stats are collected: the profiler must not gain records meanwhile. */
  #gate: Promise<void> | null = null;

  constructor(options: StageManagerDescriptor = {}) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`new StageManager() takes a descriptor object, got ${shownValue(options)}`);
    knownKeys(options, DESCRIPTOR_KEYS, 'StageManager descriptor');
    super('StageManager', options.label);
    const window = positiveInteger(options.statsWindow ?? 1024, `StageManager "${this.label}": statsWindow`);
    // Before anything is made: a plain object was accepted and failed only at executeIteration()
    // or stats() ("this.profiler.collect is not a function"), and a non-boolean concurrent was read as truthy.
    if (options.coordinator !== undefined)
      expectResource(options.coordinator, AsyncCoordinator, `StageManager "${this.label}": coordinator`);
    if (options.profiler !== undefined)
      expectResource(options.profiler, Profiler, `StageManager "${this.label}": profiler`);
    if (options.concurrent !== undefined && typeof options.concurrent !== 'boolean')
      throw new TypeError(
        `StageManager "${this.label}": concurrent must be a boolean, got ${shownValue(options.concurrent)}`,
      );
    this.#statsWindow = window;
    this.#ownsCoordinator = options.coordinator === undefined;
    this.coordinator = options.coordinator ?? new AsyncCoordinator({ label: `${this.label} coordinator` });
    this.#ownsProfiler = options.profiler === undefined;
    this.profiler =
      options.profiler ??
      new Profiler({ context: this.coordinator.context, label: `${this.label} profiler`, window: PROFILER_WINDOW });
    this.#concurrent = options.concurrent ?? true;
  }

  /** Registers a buffer stages can name by the returned index. */
  addBuffer(buffer: DeviceBuffer<DType>): number {
    this.assertAlive();
    buffer.checkUsable();
    return this.#buffers.push(buffer) - 1;
  }

  /** The buffer addBuffer() registered under `index`; throws RangeError for an index never returned by it. */
  buffer(index: number): DeviceBuffer<DType> {
    const b = this.#buffers[index];
    if (b === undefined)
      throw new RangeError(`${this.label}: there is no buffer ${index} (${this.#buffers.length} added)`);
    return b;
  }

  /** Adds a stage and returns its index; by default stages run in the order added. */
  addStage(stage: PipelineStage): number {
    this.assertAlive();
    if ((stage.kernel === undefined) === (stage.run === undefined))
      throw new TypeError(`${this.label}: stage "${stage.name}" needs exactly one of kernel or run`);
    if (stage.kernel !== undefined && stage.launch === undefined)
      throw new TypeError(`${this.label}: stage "${stage.name}" has a kernel but no launch configuration`);
    const inputs = [...(stage.inputs ?? [])];
    const outputs = [...(stage.outputs ?? [])];
    for (const b of [...inputs, ...outputs]) this.buffer(b);
    const index = this.#stages.length;
    this.#stages.push({ stage, inputs, outputs, stream: undefined });
    return index;
  }

  get stageCount(): number {
    return this.#stages.length;
  }

  /** The stages executeIteration() runs, in this order (a stage may appear more than once). */
  setOrder(order: readonly number[]): void {
    for (const i of order)
      if (this.#stages[i] === undefined)
        throw new RangeError(`${this.label}: there is no stage ${i} (${this.#stages.length} added)`);
    this.#order = [...order];
  }

  get order(): readonly number[] {
    return this.#order ?? this.#stages.map((_, i) => i);
  }

  /**
   * Enqueues one iteration at once (unless stats are being collected) and resolves when its
   * stages have completed; call it again without awaiting to pipeline iterations.
   */
  async executeIteration(): Promise<IterationResult> {
    this.assertAlive();
    while (this.#gate !== null) await this.#gate;
    const order = this.order;
    if (order.length === 0) throw new Error(`${this.label}: no stages to execute`);
    const iteration = this.#iteration++;
    const tokens: number[] = [];
    const operations: AsyncOperationId[] = [];
    this.#running.add(tokens);
    try {
      for (const index of order) operations.push(this.#enqueue(this.#stages[index]!, iteration, tokens));
    } catch (e) {
      this.#running.delete(tokens);
      throw e;
    }
    // Counted before anyone awaiting the in-flight set resumes, so stats never miss it.
    const done = Promise.all(operations.map((id) => this.coordinator.wait(id))).then(() => {
      this.#running.delete(tokens);
      this.#countCompleted(iteration, tokens);
    });
    this.#inFlight.add(done);
    try {
      await done;
    } finally {
      this.#inFlight.delete(done);
      this.#running.delete(tokens);
    }
    return { iteration, operations };
  }

  /** Keeps the latest `statsWindow` iterations for stats(); its own profiler forgets the runs of older ones. */
  #countCompleted(iteration: number, tokens: number[]): void {
    this.#completed.set(iteration, tokens);
    if (this.#completed.size <= this.#statsWindow) return;
    this.#completed.delete(this.#completed.keys().next().value!);
    if (this.#ownsProfiler) this.profiler.forgetBefore(this.#oldestTokenInUse());
  }

  /** The lowest profiler token stats() may still read: of an iteration kept for stats or still in flight. */
  #oldestTokenInUse(): number {
    let oldest = Infinity;
    for (const tokens of this.#completed.values()) if (tokens.length > 0 && tokens[0]! < oldest) oldest = tokens[0]!;
    for (const tokens of this.#running) if (tokens.length > 0 && tokens[0]! < oldest) oldest = tokens[0]!;
    // Nothing kept has a token yet: every run begun so far may go.
    return oldest === Infinity ? this.profiler.firstToken + this.profiler.operationCount : oldest;
  }

  #enqueue(record: StageRecord, iteration: number, tokens: number[]): AsyncOperationId {
    const { stage, inputs, outputs } = record;
    const stream = this.#streamOf(record);
    const io: StageIO = {
      inputs: inputs.map((b) => this.buffer(b)),
      outputs: outputs.map((b) => this.buffer(b)),
      iteration,
      stream,
    };
    const name = `${stage.name} #${iteration}`;
    const run = (s: Stream): void => {
      const token = this.profiler.begin(s, 'kernel', name);
      try {
        if (stage.run) stage.run(io);
        else
          stage.kernel!.launch(
            { ...stage.launch!, stream: s },
            ...(stage.args ? stage.args(io) : [...io.inputs, ...io.outputs]),
          );
      } finally {
        this.profiler.end(token);
        if (token >= 0) tokens.push(token);
      }
    };
    const deps = this.#hazards.dependencies(stream, inputs, outputs);
    const id = this.coordinator.queueCompute(run, deps, { name, stream, profile: false });
    this.#hazards.record(id, stream, inputs, outputs);
    return id;
  }

  #streamOf(record: StageRecord): Stream {
    if (!this.#concurrent) return this.coordinator.computeStream;
    record.stream ??= new Stream({
      context: this.coordinator.context,
      priority: 'normal',
      label: `${this.label} ${record.stage.name}`,
    });
    return record.stream;
  }

  /** Figures over the iterations completed since the last resetStats(), from the profiler's timeline. */
  stats(): Promise<PipelineStats> {
    return this.#exclusive(async () => {
      await Promise.allSettled(this.#inFlight);
      const byId = new Map<number, Interval>();
      for (const r of await this.profiler.collect()) if (r.id !== undefined) byId.set(r.id, [r.startMs, r.endMs]);
      const all: Interval[] = [];
      let iterationSum = 0;
      let counted = 0;
      for (const tokens of this.#completed.values()) {
        let start = Infinity;
        let end = -Infinity;
        for (const t of tokens) {
          const interval = byId.get(t);
          if (interval === undefined) continue;
          all.push(interval);
          start = Math.min(start, interval[0]);
          end = Math.max(end, interval[1]);
        }
        if (end < start) continue;
        iterationSum += end - start;
        counted++;
      }
      const merged = unionIntervals(all);
      const spanMs = merged.length === 0 ? 0 : merged[merged.length - 1]![1] - merged[0]![0];
      const busyMs = totalLength(merged);
      return {
        iterations: this.#completed.size,
        avgIterationMs: counted === 0 ? 0 : iterationSum / counted,
        throughput: spanMs > 0 ? (counted * 1000) / spanMs : 0,
        gpuUtilization: spanMs > 0 ? busyMs / spanMs : 0,
        spanMs,
        busyMs,
      };
    });
  }

  /** Starts the stats afresh (after the iterations in flight complete); a profiler of its own is reset too. */
  resetStats(): Promise<void> {
    return this.#exclusive(async () => {
      await Promise.allSettled(this.#inFlight);
      this.#completed.clear();
      if (this.#ownsProfiler) await this.profiler.reset();
    });
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.assertAlive();
    const run = (this.#gate ?? Promise.resolve()).then(fn);
    const gate = run.then(noop, noop);
    this.#gate = gate;
    void gate.then(() => {
      if (this.#gate === gate) this.#gate = null;
    });
    return run;
  }

  protected releaseNative(): void {
    if (this.#ownsCoordinator) this.coordinator.dispose();
    for (const s of this.#stages) s.stream?.dispose();
    if (this.#ownsProfiler) this.profiler.dispose();
    this.#hazards.clear();
  }
}
