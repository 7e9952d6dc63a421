import type { CUevent, CUstream } from '../ffi/generated/types.js';
import type { Context } from '../runtime/context.js';
import { driverError, hot } from '../runtime/cuda.js';
import { Device } from '../runtime/device.js';
import type { Profiler } from './profiler.js';
import type { OperationKind } from '../report/timeline.js';
import { Stream } from '../runtime/stream.js';
import {
  assignWorkloads,
  chooseStream,
  recommendStrategy,
  type PoolStrategy,
  type PriorityLevel,
  type StreamLoad,
  type StreamPurpose,
  type StreamRequest,
  type WorkloadAssignments,
  type WorkloadType,
} from './strategy.js';

export interface StreamMetrics {
  operations: number;
  transfers: number;
  kernelLaunches: number;
  /** Mean time from submission to observed completion, over completed operations. */
  averageLatencyMs: number;
  /** Wall time during which the stream had submitted work not yet completed. */
  busyMs: number;
  /** Most bytes (of operations given `bytes`) in flight on the stream at once. */
  peakMemoryBytes: number;
  outstanding: number;
}

export interface StreamSpec {
  priority?: PriorityLevel;
  purpose?: StreamPurpose;
}

export interface StreamPoolDescriptor {
  context?: Context;
  /** One stream per entry: its priority and purpose. Default: one of each purpose, two for kernels. */
  streams?: readonly StreamSpec[];
  strategy?: PoolStrategy;
  /** Brackets pool operations on its timeline while it is enabled. */
  profiler?: Profiler;
  label?: string;
}

export interface PoolSubmitOptions {
  bytes?: number;
  name?: string;
}

/** Heard by whoever submitted work once it completes (error: the CUDA error it failed with). */
export type SettleListener = (error: Error | undefined) => void;

interface Member {
  readonly stream: Stream;
  /** The poller's lane key: the stream handle (0 for the legacy stream). */
  readonly handle: CUstream | number;
  readonly priority: PriorityLevel;
  readonly purpose: StreamPurpose;
  outstanding: number;
  bytesInFlight: number;
  operations: number;
  transfers: number;
  kernelLaunches: number;
  completed: number;
  latencyTotal: number;
  busyMs: number;
  busyUntil: number;
  peakMemoryBytes: number;
}

const DEFAULT_STREAMS: readonly StreamSpec[] = [
  { priority: 'high', purpose: 'ConfigUpload' },
  { priority: 'normal', purpose: 'KernelExecution' },
  { priority: 'normal', purpose: 'KernelExecution' },
  { priority: 'low', purpose: 'TelemetryDownload' },
  { priority: 'normal', purpose: 'P2PTransfer' },
  { priority: 'low', purpose: 'AuxCompute' },
];

const TRANSFERS: ReadonlySet<OperationKind> = new Set(['upload', 'download', 'copy']);
const LAUNCHES: ReadonlySet<OperationKind> = new Set(['kernel', 'fft']);

/**
 * Streams with priorities and purposes, handed out by a strategy, with per-stream metrics.
 * Work submitted through run()/submit() is counted and tracked to completion with one event
 * behind it (the context's poller, never a host wait): that is what LoadBalanced balances
 * and what the metrics measure.
 */
export class StreamPool {
  readonly context: Context;
  readonly label: string;
  strategy: PoolStrategy;
  readonly profiler: Profiler | undefined;
  readonly #members: Member[];
  readonly #byStream = new Map<Stream, Member>();
  readonly #streams: readonly Stream[];
  #tick = 0;
  #assignments: WorkloadAssignments = {};
  readonly #workloadTimes = new Map<WorkloadType, { total: number; count: number }>();
  #disposed = false;

  constructor(descriptor: StreamPoolDescriptor = {}) {
    this.context = descriptor.context ?? Device.get(0).context;
    this.label = descriptor.label ?? 'stream pool';
    this.strategy = descriptor.strategy ?? 'RoundRobin';
    this.profiler = descriptor.profiler;
    const specs = descriptor.streams ?? DEFAULT_STREAMS;
    if (specs.length === 0) throw new RangeError(`${this.label}: a StreamPool needs at least one stream`);
    this.#members = [];
    try {
      specs.forEach((spec, i) => {
        const priority = spec.priority ?? 'normal';
        const purpose = spec.purpose ?? 'KernelExecution';
        const stream = new Stream({ context: this.context, priority, label: `${this.label}/${purpose}#${i}` });
        const m: Member = { stream, handle: stream.handle ?? 0, priority, purpose, outstanding: 0, bytesInFlight: 0, operations: 0, transfers: 0, kernelLaunches: 0, completed: 0, latencyTotal: 0, busyMs: 0, busyUntil: 0, peakMemoryBytes: 0 };
        this.#members.push(m);
        this.#byStream.set(stream, m);
      });
    } catch (e) {
      for (const m of this.#members) m.stream.dispose();
      throw e;
    }
    this.#streams = this.#members.map((m) => m.stream);
  }

  get streams(): readonly Stream[] {
    return this.#streams;
  }

  /** Which streams optimize() reserved for which workload (empty until it splits them). */
  get assignments(): WorkloadAssignments {
    return this.#assignments;
  }

  #member(stream: Stream): Member {
    const m = this.#byStream.get(stream);
    if (!m) throw new Error(`stream "${stream.label}" does not belong to ${this.label}`);
    return m;
  }

  #loads(): StreamLoad[] {
    return this.#members.map((m, index) => ({ index, outstanding: m.outstanding, priority: m.priority, purpose: m.purpose }));
  }

  /** A stream for the next piece of work, as the strategy picks it. */
  acquire(request: StreamRequest = {}): Stream {
    if (this.#disposed) throw new Error(`${this.label} was disposed`);
    if (this.#members.length === 1) return this.#streams[0]!;
    const index = chooseStream(this.strategy, this.#loads(), request, this.#tick++, this.#assignments);
    return this.#streams[index]!;
  }

  /**
   * Enqueues `enqueue`'s work on `stream`, one of the pool's, and returns what it returns;
   * the work is counted in the stream's metrics and tracked to completion.
   */
  run<T>(stream: Stream, kind: OperationKind, enqueue: () => T, options?: PoolSubmitOptions): T {
    const m = this.#member(stream);
    const result = this.#enqueue(m, kind, enqueue, options);
    this.#track(m, kind, options?.bytes ?? 0, undefined);
    return result;
  }

  /**
   * run() for the Coordinator: `listener` hears of completion, and the event recorded behind the
   * work is returned while the work is pending (undefined if it already completed), so that
   * other streams can wait on it. The pool recycles the event once the work has completed, right
   * before calling `listener`: the event must not be used after that.
   */
  submit(stream: Stream, kind: OperationKind, enqueue: (stream: Stream) => unknown, options: PoolSubmitOptions | undefined, listener: SettleListener): CUevent | undefined {
    const m = this.#member(stream);
    const result = this.#enqueue(m, kind, () => enqueue(stream), options);
    if (typeof result === 'object' && result !== null && typeof (result as { then?: unknown }).then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, () => undefined);
      // Work enqueued after an await would escape the event recorded below.
      throw new TypeError(`${this.label}: work submitted to stream "${stream.label}" returned a promise; enqueue synchronously`);
    }
    return this.#track(m, kind, options?.bytes ?? 0, listener);
  }

  #enqueue<T>(m: Member, kind: OperationKind, enqueue: () => T, options: PoolSubmitOptions | undefined): T {
    const profiler = this.profiler;
    // Profiler off: begin() returns -1 with no FFI call, and end(-1) returns at once.
    if (profiler === undefined || !profiler.enabled) return enqueue();
    const token = profiler.begin(m.stream, kind, options?.name ?? kind, options?.bytes);
    try {
      return enqueue();
    } finally {
      profiler.end(token);
    }
  }

  /** One event behind the work, watched by the context's poller; returns it while pending. */
  #track(m: Member, kind: OperationKind, bytes: number, listener: SettleListener | undefined): CUevent | undefined {
    m.operations++;
    if (TRANSFERS.has(kind)) m.transfers++;
    else if (LAUNCHES.has(kind)) m.kernelLaunches++;
    m.outstanding++;
    m.bytesInFlight += bytes;
    if (m.bytesInFlight > m.peakMemoryBytes) m.peakMemoryBytes = m.bytesInFlight;
    const submitted = performance.now();
    let pending = true;
    const settle = (error: Error | undefined): void => {
      if (!pending) return;
      pending = false;
      const now = performance.now();
      m.outstanding--;
      m.completed++;
      m.bytesInFlight -= bytes;
      m.latencyTotal += now - submitted;
      // Busy time as the union of [submitted, completed] intervals, kept in submission order.
      m.busyMs += Math.max(0, now - Math.max(submitted, m.busyUntil));
      if (now > m.busyUntil) m.busyUntil = now;
      listener?.(error);
    };
    const events = this.context.completionEvents;
    const event = events.acquire();
    const status = hot().eventRecord(event, m.stream.handle);
    if (status !== 0) {
      events.recycle(event);
      const error = driverError(status, 'cuEventRecord', `completion of work on stream "${m.stream.label}"`);
      settle(error);
      throw error;
    }
    this.context.completion.enqueue(m.handle, event, () => settle(undefined), settle, events.recycle);
    return pending ? event : undefined;
  }

  metrics(stream: Stream): StreamMetrics {
    const m = this.#member(stream);
    return {
      operations: m.operations,
      transfers: m.transfers,
      kernelLaunches: m.kernelLaunches,
      averageLatencyMs: m.completed ? m.latencyTotal / m.completed : 0,
      busyMs: m.busyMs,
      peakMemoryBytes: m.peakMemoryBytes,
      outstanding: m.outstanding,
    };
  }

  allMetrics(): { stream: string; purpose: StreamPurpose; priority: PriorityLevel; metrics: StreamMetrics }[] {
    return this.#members.map((m) => ({ stream: m.stream.label, purpose: m.purpose, priority: m.priority, metrics: this.metrics(m.stream) }));
  }

  /** Adds to the workload's record the time one piece of it took (as the caller measured it). */
  recordCompletion(workload: WorkloadType, ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`completion time must be a finite number of ms >= 0, got ${ms}`);
    const t = this.#workloadTimes.get(workload);
    if (t) {
      t.total += ms;
      t.count++;
    } else this.#workloadTimes.set(workload, { total: ms, count: 1 });
  }

  averageTime(workload: WorkloadType): number | undefined {
    const t = this.#workloadTimes.get(workload);
    return t && t.count ? t.total / t.count : undefined;
  }

  /**
   * Re-chooses the strategy and the workload assignments from what was recorded, by the rules
   * of recommendStrategy() and assignWorkloads(); returns the strategy chosen.
   */
  optimize(): PoolStrategy {
    const averages = new Map<WorkloadType, number>();
    for (const [w, t] of this.#workloadTimes) if (t.count) averages.set(w, t.total / t.count);
    const loads = this.#loads();
    this.strategy = recommendStrategy(averages, loads);
    this.#assignments = this.strategy === 'Workload' ? assignWorkloads(averages, loads) : {};
    return this.strategy;
  }

  /** True if some stream has no pending work (of any origin: cuStreamQuery, no event). */
  hasReadyStreams(): boolean {
    for (const m of this.#members) if (m.stream.query()) return true;
    return false;
  }

  /** The first stream to become idle, or null after `timeoutMs`; never blocks the event loop. */
  waitForAnyReady(options: { timeoutMs: number }): Promise<Stream | null> {
    const timeoutMs = options.timeoutMs;
    if (!(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be >= 0, got ${timeoutMs}`);
    for (const m of this.#members) if (m.stream.query()) return Promise.resolve(m.stream);
    return new Promise<Stream | null>((resolve, reject) => {
      let settled = false;
      let failures = 0;
      const timer = setTimeout(() => finish(null), timeoutMs);
      function finish(stream: Stream | null): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(stream);
      }
      // The work each stream holds now: whichever completes first wins. Late ones are ignored.
      for (const m of this.#members) {
        m.stream.done().then(
          () => finish(m.stream),
          (e: Error) => {
            if (++failures === this.#members.length && !settled) {
              settled = true;
              clearTimeout(timer);
              reject(e);
            }
          },
        );
      }
    });
  }

  /** Destroys the streams (after their work: cuStreamDestroy lets pending work finish). */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const m of this.#members) m.stream.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
