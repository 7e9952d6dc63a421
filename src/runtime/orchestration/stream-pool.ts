import type { Context } from '../context.js';
import { Device } from '../device.js';
import type { OperationKind } from '../profiler/timeline.js';
import type { Profiler } from '../profiler/profiler.js';
import { Stream, type StreamPriority } from '../stream.js';
import { chooseStream, type PoolStrategy, type StreamLoad, type StreamPurpose, type WorkloadType, recommendStrategy } from './strategy.js';

export interface StreamMetrics {
  operations: number;
  transfers: number;
  kernelLaunches: number;
  averageLatencyMs: number;
  busyMs: number;
  /** Most bytes (transfers and allocations) in flight on the stream at once. */
  peakMemoryBytes: number;
  outstanding: number;
}

interface Member {
  stream: Stream;
  priorityLevel: 'high' | 'normal' | 'low';
  purpose: StreamPurpose;
  outstanding: number;
  bytesInFlight: number;
  metrics: StreamMetrics;
  latencyTotal: number;
  busyUntil: number;
}

export interface StreamPoolDescriptor {
  context?: Context;
  /** One stream per entry: its priority and purpose. Default: one of each purpose. */
  streams?: { priority?: 'high' | 'normal' | 'low'; purpose?: StreamPurpose }[];
  strategy?: PoolStrategy;
  /** Brackets pool operations on the timeline when enabled. */
  profiler?: Profiler;
  label?: string;
}

const DEFAULT_STREAMS: { priority: 'high' | 'normal' | 'low'; purpose: StreamPurpose }[] = [
  { priority: 'high', purpose: 'ConfigUpload' },
  { priority: 'normal', purpose: 'KernelExecution' },
  { priority: 'normal', purpose: 'KernelExecution' },
  { priority: 'low', purpose: 'TelemetryDownload' },
  { priority: 'normal', purpose: 'P2PTransfer' },
  { priority: 'low', purpose: 'AuxCompute' },
];

const TRANSFERS: ReadonlySet<OperationKind> = new Set(['upload', 'download', 'copy']);

/** Streams with priorities and purposes, handed out by a strategy, with per-stream metrics. */
export class StreamPool {
  readonly context: Context;
  readonly label: string;
  strategy: PoolStrategy;
  readonly profiler: Profiler | undefined;
  readonly #members: Member[];
  readonly #byStream = new Map<Stream, Member>();
  #next = 0;
  readonly #workloadTimes = new Map<WorkloadType, { total: number; count: number }>();

  constructor(descriptor: StreamPoolDescriptor = {}) {
    this.context = descriptor.context ?? Device.get(0).context;
    this.label = descriptor.label ?? 'stream pool';
    this.strategy = descriptor.strategy ?? 'RoundRobin';
    this.profiler = descriptor.profiler;
    const specs = descriptor.streams ?? DEFAULT_STREAMS;
    if (specs.length === 0) throw new RangeError('a StreamPool needs at least one stream');
    this.#members = specs.map((spec, i) => {
      const priorityLevel = spec.priority ?? 'normal';
      const purpose = spec.purpose ?? 'KernelExecution';
      const stream = new Stream({ context: this.context, priority: priorityLevel as StreamPriority, label: `${this.label}/${purpose}#${i}` });
      const m: Member = { stream, priorityLevel, purpose, outstanding: 0, bytesInFlight: 0, latencyTotal: 0, busyUntil: 0, metrics: { operations: 0, transfers: 0, kernelLaunches: 0, averageLatencyMs: 0, busyMs: 0, peakMemoryBytes: 0, outstanding: 0 } };
      this.#byStream.set(stream, m);
      return m;
    });
  }

  get streams(): readonly Stream[] {
    return this.#members.map((m) => m.stream);
  }

  #loads(): StreamLoad[] {
    return this.#members.map((m, index) => ({ index, outstanding: m.outstanding, priority: m.priorityLevel, purpose: m.purpose }));
  }

  /** A stream for the next piece of work, as the strategy picks it. */
  acquire(request: { purpose?: StreamPurpose; workload?: WorkloadType; priority?: 'high' | 'normal' | 'low' } = {}): Stream {
    const index = chooseStream(this.strategy, this.#loads(), request, this.#next++);
    return this.#members[index]!.stream;
  }

  /**
   * Enqueues work on one of the pool's streams and keeps its metrics: what `enqueue` submits
   * is tracked to completion (latency, busy time, outstanding work for LoadBalanced).
   */
  run<T>(stream: Stream, kind: OperationKind, enqueue: () => T, options: { bytes?: number; name?: string } = {}): T {
    const m = this.#byStream.get(stream);
    if (!m) throw new Error(`stream "${stream.label}" does not belong to ${this.label}`);
    const token = this.profiler ? this.profiler.begin(stream, kind, options.name ?? kind, options.bytes) : -1;
    const result = enqueue();
    if (this.profiler) this.profiler.end(token);
    const bytes = options.bytes ?? 0;
    m.metrics.operations++;
    if (TRANSFERS.has(kind)) m.metrics.transfers++;
    if (kind === 'kernel' || kind === 'fft') m.metrics.kernelLaunches++;
    m.outstanding++;
    m.bytesInFlight += bytes;
    if (m.bytesInFlight > m.metrics.peakMemoryBytes) m.metrics.peakMemoryBytes = m.bytesInFlight;
    const submitted = performance.now();
    const settle = (): void => {
      const now = performance.now();
      m.outstanding--;
      m.bytesInFlight -= bytes;
      m.latencyTotal += now - submitted;
      // Busy time: the union of [submitted, completed] intervals, kept incrementally in submission order.
      m.metrics.busyMs += Math.max(0, now - Math.max(submitted, m.busyUntil));
      m.busyUntil = Math.max(m.busyUntil, now);
    };
    stream.done().then(settle, settle);
    return result;
  }

  metrics(stream: Stream): StreamMetrics {
    const m = this.#byStream.get(stream);
    if (!m) throw new Error(`stream "${stream.label}" does not belong to ${this.label}`);
    const completed = m.metrics.operations - m.outstanding;
    return { ...m.metrics, outstanding: m.outstanding, averageLatencyMs: completed ? m.latencyTotal / completed : 0 };
  }

  allMetrics(): { stream: string; metrics: StreamMetrics }[] {
    return this.#members.map((m) => ({ stream: m.stream.label, metrics: this.metrics(m.stream) }));
  }

  recordCompletion(workload: WorkloadType, ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`completion time must be >= 0 ms, got ${ms}`);
    const t = this.#workloadTimes.get(workload) ?? { total: 0, count: 0 };
    t.total += ms;
    t.count++;
    this.#workloadTimes.set(workload, t);
  }

  averageTime(workload: WorkloadType): number | undefined {
    const t = this.#workloadTimes.get(workload);
    return t && t.count ? t.total / t.count : undefined;
  }

  /** Re-chooses the strategy from what was recorded (see recommendStrategy for the rules). */
  optimize(): PoolStrategy {
    const averages = new Map<WorkloadType, number>();
    for (const [w, t] of this.#workloadTimes) if (t.count) averages.set(w, t.total / t.count);
    this.strategy = recommendStrategy(averages, this.#loads());
    return this.strategy;
  }

  /** True if some stream has no pending work. */
  hasReadyStreams(): boolean {
    return this.#members.some((m) => m.stream.query());
  }

  /** The first stream to be idle, or null after `timeoutMs`; never blocks the event loop. */
  async waitForAnyReady(options: { timeoutMs: number }): Promise<Stream | null> {
    const idle = this.#members.find((m) => m.stream.query());
    if (idle) return idle.stream;
    return new Promise<Stream | null>((resolve) => {
      const finish = (s: Stream | null): void => {
        clearTimeout(timer);
        resolve(s);
      };
      const timer = setTimeout(() => finish(null), options.timeoutMs);
      // Each stream's work so far: the first to complete wins.
      for (const m of this.#members) m.stream.done().then(() => finish(m.stream), () => undefined);
    });
  }

  dispose(): void {
    for (const m of this.#members) m.stream.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
