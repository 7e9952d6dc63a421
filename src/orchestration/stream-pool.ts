import type { CUevent } from '../ffi/generated/types.js';
import {
  memberMetrics,
  newMember,
  trackWork,
  type Member,
  type SettleListener,
  type StreamMetrics,
} from './pool-member.js';
import { checkTimeoutMs } from '../runtime/timeout.js';
import type { Context } from '../runtime/context.js';
import { resolveContext, type Placement } from '../runtime/defaults.js';
import type { Profiler } from './profiler.js';
import type { OperationKind } from '../report/timeline.js';
import { describeValue, DisposedError, expectResource, isLive, Resource } from '../runtime/resource.js';
import { Stream } from '../runtime/stream.js';
import { knownKeys } from '../runtime/value-checks.js';
import {
  assignWorkloads,
  checkChoice,
  checkStreamSpecs,
  pickStream,
  POOL_STRATEGIES,
  PRIORITY_LEVELS,
  STREAM_PURPOSES,
  WORKLOAD_TYPES,
  recommendStrategy,
  type PoolStrategy,
  type PriorityLevel,
  type StreamLoad,
  type StreamPurpose,
  type StreamRequest,
  type WorkloadAssignments,
  type WorkloadType,
} from './strategy.js';

/** One stream of a pool: made by the pool, or (with `stream`) the caller's, which the pool does not dispose. */
export interface StreamSpec {
  priority?: PriorityLevel | undefined;
  purpose?: StreamPurpose | undefined;
  /** Use this stream (of the pool's context) instead of making one; it stays the caller's. Listed twice, it is one member. */
  stream?: Stream | undefined;
  /** Names the stream the pool makes (default "<pool label>/<purpose>#<index>"), so that errors on it say what it is for; ignored with `stream`. */
  label?: string | undefined;
}

/** How a StreamPool is made. `device` / `context`: where its streams live (default device 0). */
export interface StreamPoolDescriptor extends Placement {
  /** One stream per entry: its priority and purpose. Default: one of each purpose, two for kernels. */
  streams?: readonly StreamSpec[] | undefined;
  strategy?: PoolStrategy | undefined;
  /** Brackets pool operations on its timeline while it is enabled. */
  profiler?: Profiler | undefined;
  label?: string | undefined;
}
// Every key of StreamPoolDescriptor (the Record makes a new one fail to compile until listed).
const DESCRIPTOR_KEYS = Object.keys({
  device: true,
  context: true,
  streams: true,
  strategy: true,
  profiler: true,
  label: true,
} satisfies Record<keyof StreamPoolDescriptor, true>);
/** What run() / submit() are told about a piece of work. */
export interface PoolSubmitOptions {
  bytes?: number | undefined;
  name?: string | undefined;
  /** Bracket it in the pool's profiler (default true: when the profiler is enabled). */
  profile?: boolean | undefined;
}

const DEFAULT_STREAMS: readonly StreamSpec[] = [
  { priority: 'high', purpose: 'ConfigUpload' },
  { priority: 'normal', purpose: 'KernelExecution' },
  { priority: 'normal', purpose: 'KernelExecution' },
  { priority: 'low', purpose: 'TelemetryDownload' },
  { priority: 'normal', purpose: 'P2PTransfer' },
  { priority: 'low', purpose: 'AuxCompute' },
];

/**
 * Streams with priorities and purposes, handed out by a strategy, with per-stream metrics. Work submitted through
 * run()/submit() is counted and tracked to completion with one event behind it (the context's poller, never a host
 * wait): that is what LoadBalanced balances and what the metrics measure. Work may also be submitted to other streams
 * of the pool's context ("guests"): tracked the same way, never handed out by acquire(). The job engine keeps each
 * device's lane streams in one (pipeline/lanes/device-streams.ts) and enqueues on them directly, without run().
 */
export class StreamPool extends Resource {
  readonly context: Context;
  #strategy: PoolStrategy;
  readonly profiler: Profiler | undefined;
  readonly #members: Member[];
  readonly #byStream = new Map<Stream, Member>();
  readonly #guests = new WeakMap<Stream, Member>();
  readonly #streams: readonly Stream[];
  #tick = 0;
  #assignments: WorkloadAssignments = {};
  readonly #workloadTimes = new Map<WorkloadType, { total: number; count: number }>();
  /** waitForAnyReady() calls not yet settled: dispose() settles them. */
  readonly #readyWaiters = new Set<(stream: Stream | null) => void>();

  constructor(descriptor: StreamPoolDescriptor = {}) {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`new StreamPool() takes a descriptor object, got ${describeValue(descriptor)}`);
    knownKeys(descriptor, DESCRIPTOR_KEYS, 'StreamPool descriptor');
    super('StreamPool', descriptor.label ?? 'stream pool');
    // Checked before anything is made: an unknown strategy chose no stream (acquire() returned undefined).
    this.#strategy = checkChoice(descriptor.strategy ?? 'RoundRobin', POOL_STRATEGIES, `${this.label}: strategy`);
    const specs = descriptor.streams ?? DEFAULT_STREAMS;
    const checked = checkStreamSpecs<StreamSpec>(specs, this.label);
    const borrowed = specs.find((s) => s.stream !== undefined)?.stream;
    this.context = resolveContext(
      descriptor,
      descriptor.context === undefined && descriptor.device === undefined ? borrowed : undefined,
    );
    this.profiler = descriptor.profiler;
    this.#members = [];
    try {
      checked.forEach(({ spec, priority, purpose }, i) => {
        const given = spec.stream;
        if (given !== undefined) {
          if (!Resource.isResourceOf(given, 'Stream'))
            expectResource(given, Stream, `${this.label}: streams[${i}].stream`);
          if (given.disposed)
            throw new DisposedError(`${this.label}: streams[${i}].stream "${given.label}" was disposed`);
          if (given.context !== this.context)
            throw new Error(`${this.label}: streams[${i}].stream "${given.label}" belongs to another context`);
          if (this.#byStream.has(given)) return;
        }
        const stream =
          given ??
          new Stream({ context: this.context, priority, label: spec.label ?? `${this.label}/${purpose}#${i}` });
        const m = newMember(stream, given === undefined, priority, purpose);
        this.#members.push(m);
        this.#byStream.set(stream, m);
      });
    } catch (e) {
      for (const m of this.#members) if (m.owned) m.stream.dispose();
      throw e;
    }
    this.#streams = this.#members.map((m) => m.stream);
  }

  get streams(): readonly Stream[] {
    return this.#streams;
  }

  /** How acquire() picks a stream; set it to one of RoundRobin, LoadBalanced, Priority, Workload (anything else is a TypeError). */
  get strategy(): PoolStrategy {
    return this.#strategy;
  }

  set strategy(value: PoolStrategy) {
    this.#strategy = checkChoice(value, POOL_STRATEGIES, `${this.label}: strategy`);
  }

  /** Which streams optimize() reserved for which workload (empty until it splits them). */
  get assignments(): WorkloadAssignments {
    return this.#assignments;
  }

  #member(stream: Stream): Member {
    this.assertAlive();
    if (!Resource.isResourceOf(stream, 'Stream')) expectResource(stream, Stream, `${this.label}: stream`);
    const m = this.#byStream.get(stream);
    if (!m) throw new Error(`stream "${stream.label}" does not belong to ${this.label}`);
    return m;
  }

  /** A member, or a guest record for another live stream of the pool's context. */
  #memberOrGuest(stream: Stream): Member {
    this.assertAlive();
    const m = this.#byStream.get(stream) ?? this.#guests.get(stream);
    if (m) return m;
    // A look-alike object's handle would reach the driver when the pool records its completion event.
    if (!isLive<Stream>(stream, 'Stream'))
      expectResource(stream, Stream, `${this.label}: the stream work is submitted to`);
    if (stream.context !== this.context)
      throw new Error(`${this.label}: stream "${stream.label}" belongs to another context`);
    const guest = newMember(stream, false, 'normal', 'AuxCompute');
    this.#guests.set(stream, guest);
    return guest;
  }

  /** Whether `stream` is one of the pool's (not a guest). */
  has(stream: Stream): boolean {
    return this.#byStream.has(stream);
  }

  #loads(): StreamLoad[] {
    return this.#members.map((m, index) => ({
      index,
      outstanding: m.outstanding,
      priority: m.priority,
      purpose: m.purpose,
    }));
  }

  /** A stream for the next piece of work, as the strategy picks it. */
  acquire(request: StreamRequest = {}): Stream {
    this.assertAlive();
    if (typeof request !== 'object' || request === null)
      throw new TypeError(`${this.label}: acquire() takes a request object { purpose?, workload?, priority? }`);
    if (request.purpose !== undefined)
      checkChoice(request.purpose, STREAM_PURPOSES, `${this.label}: acquire() purpose`);
    if (request.workload !== undefined)
      checkChoice(request.workload, WORKLOAD_TYPES, `${this.label}: acquire() workload`);
    if (request.priority !== undefined)
      checkChoice(request.priority, PRIORITY_LEVELS, `${this.label}: acquire() priority`);
    if (this.#members.length === 1) return this.#streams[0]!;
    const index = pickStream(this.#strategy, this.#loads(), request, this.#tick++, this.#assignments);
    return this.#streams[index]!;
  }

  /**
   * Enqueues `enqueue`'s work on `stream` (the pool's, or a guest of its context) and returns
   * what it returns; the work is counted in the stream's metrics and tracked to completion.
   */
  run<T>(stream: Stream, kind: OperationKind, enqueue: () => T, options?: PoolSubmitOptions): T {
    const m = this.#memberOrGuest(stream);
    const result = this.#enqueue(m, kind, enqueue, options);
    trackWork(m, kind, options?.bytes ?? 0, undefined);
    return result;
  }

  /**
   * run() for the Coordinator: `listener` hears of completion, and the event recorded behind the
   * work is returned while the work is pending (undefined if it already completed), so that
   * other streams can wait on it. The pool recycles the event once the work has completed, right
   * before calling `listener`: the event must not be used after that.
   */
  submit(
    stream: Stream,
    kind: OperationKind,
    enqueue: (stream: Stream) => unknown,
    options: PoolSubmitOptions | undefined,
    listener: SettleListener,
  ): CUevent | undefined {
    const m = this.#memberOrGuest(stream);
    const result = this.#enqueue(m, kind, () => enqueue(stream), options);
    if (typeof result === 'object' && result !== null && typeof (result as { then?: unknown }).then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, () => undefined);
      // Work enqueued after an await would escape the event recorded below.
      throw new TypeError(
        `${this.label}: work submitted to stream "${stream.label}" returned a promise; enqueue synchronously`,
      );
    }
    return trackWork(m, kind, options?.bytes ?? 0, listener);
  }

  #enqueue<T>(m: Member, kind: OperationKind, enqueue: () => T, options: PoolSubmitOptions | undefined): T {
    const profiler = this.profiler;
    // Profiler off: begin() returns -1 with no FFI call, and end(-1) returns at once.
    if (profiler === undefined || !profiler.enabled || options?.profile === false) return enqueue();
    const token = profiler.begin(m.stream, kind, options?.name ?? kind, options?.bytes);
    try {
      return enqueue();
    } finally {
      profiler.end(token);
    }
  }

  /** A snapshot of what the pool measured of one member stream (counts since the pool was made); throws if `stream` is not a member, DisposedError once the pool is disposed. */
  metrics(stream: Stream): StreamMetrics {
    return memberMetrics(this.#member(stream));
  }

  /** metrics() for every member stream, with its label, purpose and priority, in the order the members were added. */
  allMetrics(): { stream: string; purpose: StreamPurpose; priority: PriorityLevel; metrics: StreamMetrics }[] {
    this.assertAlive();
    return this.#members.map((m) => ({
      stream: m.stream.label,
      purpose: m.purpose,
      priority: m.priority,
      metrics: this.metrics(m.stream),
    }));
  }

  /** Adds to the workload's record the time one piece of it took (as the caller measured it). */
  recordCompletion(workload: WorkloadType, ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms))
      throw new RangeError(`completion time must be a finite number of ms >= 0, got ${ms}`);
    const t = this.#workloadTimes.get(workload);
    if (t) {
      t.total += ms;
      t.count++;
    } else this.#workloadTimes.set(workload, { total: ms, count: 1 });
  }

  /** The mean of the times recordCompletion() recorded for `workload`, in ms; undefined before the first one. */
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
    this.#strategy = recommendStrategy(averages, loads);
    this.#assignments = this.#strategy === 'Workload' ? assignWorkloads(averages, loads) : {};
    return this.#strategy;
  }

  /** True if some stream has no pending work (of any origin: cuStreamQuery, no event). */
  hasReadyStreams(): boolean {
    this.assertAlive();
    for (const m of this.#members) if (m.stream.query()) return true;
    return false;
  }

  /** The first stream to become idle, or null after `timeoutMs`; never blocks the event loop. */
  waitForAnyReady(options: { timeoutMs: number }): Promise<Stream | null> {
    this.assertAlive();
    const timeoutMs = checkTimeoutMs(options?.timeoutMs, `${this.label}: waitForAnyReady timeoutMs`);
    for (const m of this.#members) if (m.stream.query()) return Promise.resolve(m.stream);
    return new Promise<Stream | null>((resolve, reject) => {
      let settled = false;
      let failures = 0;
      const timer = setTimeout(() => finish(null), timeoutMs);
      const waiters = this.#readyWaiters;
      function finish(stream: Stream | null): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        waiters.delete(finish);
        resolve(stream);
      }
      waiters.add(finish);
      // The work each stream holds now: whichever completes first wins. Late ones are ignored.
      for (const m of this.#members) {
        m.stream.done().then(
          () => finish(m.stream),
          (e: Error) => {
            if (++failures === this.#members.length && !settled) {
              settled = true;
              clearTimeout(timer);
              waiters.delete(finish);
              reject(e);
            }
          },
        );
      }
    });
  }

  /**
   * Destroys the streams it made (after their work: cuStreamDestroy lets pending work finish);
   * a pending waitForAnyReady() resolves with null. Work already submitted still reports its
   * completion to its listeners. Later calls throw DisposedError.
   */
  protected releaseNative(): void {
    for (const finish of [...this.#readyWaiters]) finish(null);
    for (const m of this.#members) if (m.owned) m.stream.dispose();
  }
}
