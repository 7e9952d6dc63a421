import type { Context } from '../runtime/context.js';
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { Device } from '../runtime/device.js';
import { dtypeInfo, type DType } from '../runtime/memory/dtype.js';
import { type Event, EventPool } from '../runtime/event.js';
import type { HostBuffer } from '../runtime/memory/host-buffer.js';
import type { Profiler } from '../orchestration/profiler.js';
import { Resource } from '../runtime/resource.js';
import { Stream, type StreamPriority } from '../runtime/stream.js';
import { AsyncOperationError } from './errors.js';
import { OperationGraph, type AsyncOperationId, type AsyncOperationKind, type OperationNode, type AsyncOperationStatus, type SettledAsyncOperation } from './operation-graph.js';

export type { AsyncOperationId, AsyncOperationKind, AsyncOperationStatus, SettledAsyncOperation } from './operation-graph.js';

/** Enqueues a computation on `stream` (kernel launches, library calls); must not block. */
export type ComputeFn = (stream: Stream) => void;

export interface CoordinatorStreams {
  upload: Stream;
  compute: Stream;
  download: Stream;
}

export interface AsyncCoordinatorOptions {
  context?: Context;
  /**
   * Streams to use instead of creating three; they stay the caller's. Passing one stream for
   * all three serializes every operation (a synchronous pipeline with the same API).
   */
  streams?: CoordinatorStreams;
  priorities?: { upload?: StreamPriority; compute?: StreamPriority; download?: StreamPriority };
  /** Brackets every operation, so its timeline shows what overlapped. */
  profiler?: Profiler;
  label?: string;
}

export interface OperationOptions {
  /** Operations this one waits for, on the GPU (an event and cuStreamWaitEvent per other stream). */
  deps?: readonly AsyncOperationId[];
  /** Shown in poll() results, errors and the profiler timeline. */
  name?: string;
}

export interface TransferOptions extends OperationOptions {
  /** Elements to copy from the start of both sides; default: the whole host buffer. */
  length?: number;
}

export interface ComputeOptions {
  name?: string;
  /** Run on this stream instead of the compute stream (parallel branches of a fork). */
  stream?: Stream;
  /** Bracket the operation in the profiler (default true). */
  profile?: boolean;
}

interface Payload {
  stream: Stream;
  event: Event;
}

const PROFILE_KIND: Record<AsyncOperationKind, 'upload' | 'kernel' | 'download'> = { upload: 'upload', compute: 'kernel', download: 'download' };

/**
 * Upload, compute and download on dedicated streams, each operation ending with an event.
 * Dependencies are lowered to cuStreamWaitEvent, so dependent work is ordered on the GPU
 * without the host waiting; fork and join are just several dependents or dependencies.
 * Completion is tracked by the context's poller (no thread blocks); poll() also asks the
 * GPU directly, for callers that do not yield to the event loop.
 */
export class AsyncCoordinator extends Resource {
  readonly context: Context;
  readonly profiler: Profiler | undefined;
  readonly #streams: CoordinatorStreams;
  readonly #ownsStreams: boolean;
  readonly #events: EventPool;
  readonly #graph: OperationGraph<Payload>;
  readonly #computes = new Map<string, ComputeFn>();
  #lastCompute: AsyncOperationId | undefined;
  /** event.done() promises not yet settled: events stay alive until the poller has let go of them. */
  #outstanding = 0;

  constructor(options: AsyncCoordinatorOptions = {}) {
    super('AsyncCoordinator', options.label);
    this.context = options.streams?.compute.context ?? options.context ?? Device.get(0).context;
    this.profiler = options.profiler;
    if (options.streams) {
      for (const s of Object.values(options.streams)) {
        if (s.context !== this.context) throw new Error(`${this.label}: stream "${s.label}" belongs to another context`);
      }
      this.#streams = { ...options.streams };
      this.#ownsStreams = false;
    } else {
      const p = options.priorities ?? {};
      const make = (purpose: string, priority: StreamPriority | undefined): Stream => new Stream({ context: this.context, priority: priority ?? 'normal', label: `${this.label} ${purpose}` });
      const upload = make('upload', p.upload);
      const compute = make('compute', p.compute);
      const download = make('download', p.download);
      this.#streams = { upload, compute, download };
      this.#ownsStreams = true;
    }
    this.#events = new EventPool({ context: this.context, label: `${this.label} events` });
    this.#graph = new OperationGraph<Payload>(`AsyncCoordinator "${this.label}"`);
  }

  get uploadStream(): Stream {
    return this.#streams.upload;
  }

  get computeStream(): Stream {
    return this.#streams.compute;
  }

  get downloadStream(): Stream {
    return this.#streams.download;
  }

  /** Operations queued and not yet settled. */
  get pendingCount(): number {
    return this.#graph.pendingCount;
  }

  /** Names a computation, so that queueCompute(name, deps) can run it. */
  registerCompute(name: string, fn: ComputeFn): void {
    if (typeof fn !== 'function') throw new TypeError(`${this.label}: compute "${name}" must be a function`);
    this.#computes.set(name, fn);
  }

  /** Host -> device on the upload stream. The host buffer must not change until the operation completes. */
  queueUpload<T extends DType>(host: HostBuffer<T>, buffer: DeviceBuffer<T>, options: TransferOptions = {}): AsyncOperationId {
    const stream = this.#streams.upload;
    const length = options.length ?? host.length;
    return this.#queue('upload', options.name ?? `upload to ${buffer.label}`, stream, options.deps ?? [], () => buffer.write(host, { stream, length }), length * dtypeInfo(buffer.dtype).bytes, true);
  }

  /**
   * Runs a registered computation (by name) or `fn` on the compute stream, after `deps`.
   */
  queueCompute(nameOrFn: string | ComputeFn, deps: readonly AsyncOperationId[] = [], options: ComputeOptions = {}): AsyncOperationId {
    let fn: ComputeFn;
    let name: string;
    if (typeof nameOrFn === 'string') {
      const registered = this.#computes.get(nameOrFn);
      if (registered === undefined) throw new Error(`${this.label}: no compute registered as "${nameOrFn}" (registerCompute(name, fn) first)`);
      fn = registered;
      name = options.name ?? nameOrFn;
    } else if (typeof nameOrFn === 'function') {
      fn = nameOrFn;
      name = options.name ?? (nameOrFn.name || 'compute');
    } else throw new TypeError(`${this.label}: queueCompute needs a registered name or a function, got ${typeof nameOrFn}`);
    const stream = options.stream ?? this.#streams.compute;
    if (stream.context !== this.context) throw new Error(`${this.label}: stream "${stream.label}" belongs to another context`);
    const id = this.#queue('compute', name, stream, deps, () => fn(stream), undefined, options.profile ?? true);
    this.#lastCompute = id;
    return id;
  }

  /**
   * Device -> host on the download stream. Without `deps` it waits for the latest queued
   * compute operation (upload -> compute -> download); read the host buffer once it completes.
   */
  queueDownload<T extends DType>(buffer: DeviceBuffer<T>, host: HostBuffer<T>, options: TransferOptions = {}): AsyncOperationId {
    const stream = this.#streams.download;
    const length = options.length ?? host.length;
    const deps = options.deps ?? (this.#lastCompute === undefined ? [] : [this.#lastCompute]);
    return this.#queue('download', options.name ?? `download from ${buffer.label}`, stream, deps, () => buffer.read(host, { stream, length }), length * dtypeInfo(buffer.dtype).bytes, true);
  }

  /**
   * Never blocks: asks the GPU about pending operations (the oldest per stream, since a stream
   * completes in order) and returns every operation settled since the previous poll().
   */
  poll(): SettledAsyncOperation[] {
    const notReady = new Set<Stream>();
    for (const node of this.#graph.pending()) {
      const { stream, event } = node.payload;
      if (node.workDone || notReady.has(stream)) continue;
      try {
        if (event.query()) this.#graph.workDone(node);
        else notReady.add(stream);
      } catch (e) {
        this.#graph.fail(node, this.#failure(node, e));
      }
    }
    return this.#graph.takeSettled();
  }

  status(id: AsyncOperationId): AsyncOperationStatus {
    return this.#graph.status(id);
  }

  /** Resolves once operation `id` and everything it depends on have completed; rejects with the cause otherwise. */
  wait(id: AsyncOperationId): Promise<void> {
    return this.#graph.wait(id);
  }

  /**
   * Blocks the thread until the three streams are idle (cuStreamSynchronize), then settles
   * every operation; throws an AggregateError if any operation queued before the call failed.
   * `await done()` is the form that does not block the event loop.
   */
  synchronizeAll(): void {
    this.assertAlive();
    const covered = [...this.#graph.pending()];
    for (const s of this.#uniqueStreams()) s.synchronize();
    for (const node of covered) {
      if (node.status !== 'pending' || node.workDone) continue;
      try {
        if (node.payload.event.query()) this.#graph.workDone(node);
      } catch (e) {
        this.#graph.fail(node, this.#failure(node, e));
      }
    }
    this.#throwFailures(covered.map((n) => n.id));
  }

  /** Resolves once all work queued so far (through the streams too) has finished; rejects like synchronizeAll(). */
  async done(): Promise<void> {
    this.assertAlive();
    const ids = [...this.#graph.pending()].map((n) => n.id);
    await Promise.all(this.#uniqueStreams().map((s) => s.done()));
    await Promise.allSettled(ids.map((id) => this.#graph.wait(id)));
    this.#throwFailures(ids);
  }

  #queue(kind: AsyncOperationKind, name: string, stream: Stream, depIds: readonly AsyncOperationId[], enqueue: () => void, bytes: number | undefined, profile: boolean): AsyncOperationId {
    this.assertAlive();
    if (!Array.isArray(depIds)) throw new TypeError(`${this.label}: deps must be an array of operation ids`);
    const deps = this.#graph.resolveDependencies(depIds);
    for (const d of deps) {
      // Finished work needs no wait, and its event may already serve another operation.
      if (!d.workDone && d.payload.stream !== stream) stream.waitEvent(d.payload.event);
    }
    const profiler = profile ? this.profiler : undefined;
    if (profiler) profiler.wrap(stream, PROFILE_KIND[kind], name, enqueue, bytes);
    else enqueue();
    const event = this.#events.acquire();
    try {
      event.record(stream);
    } catch (e) {
      this.#events.release(event);
      throw e;
    }
    const node = this.#graph.add(kind, name, deps, { stream, event });
    this.#outstanding++;
    event.done().then(
      () => this.#settled(node, undefined),
      (e: unknown) => this.#settled(node, e),
    );
    return node.id;
  }

  #settled(node: OperationNode<Payload>, error: unknown): void {
    this.#outstanding--;
    if (this.disposed) {
      if (this.#outstanding === 0) this.#events.dispose();
      return;
    }
    this.#events.release(node.payload.event);
    if (error === undefined) this.#graph.workDone(node);
    else this.#graph.fail(node, this.#failure(node, error));
  }

  #failure(node: OperationNode<Payload>, cause: unknown): AsyncOperationError {
    const message = cause instanceof Error ? cause.message : String(cause);
    return new AsyncOperationError(`${this.label}: operation ${node.id} (${node.kind} "${node.name}" on stream "${node.payload.stream.label}") failed: ${message}`, node.id, { cause });
  }

  #throwFailures(ids: readonly AsyncOperationId[]): void {
    const failed = ids.filter((id) => this.#graph.status(id) === 'failed');
    if (failed.length === 0) return;
    throw new AggregateError(failed.map((id) => this.#graph.errorOf(id)), `${this.label}: ${failed.length} operation(s) failed: ${failed.join(', ')}`);
  }

  #uniqueStreams(): Stream[] {
    return [...new Set([this.#streams.upload, this.#streams.compute, this.#streams.download])];
  }

  /** Fails what is still pending (nothing hangs); events are destroyed once the poller has let go of them. */
  protected releaseNative(): void {
    for (const node of [...this.#graph.pending()]) {
      this.#graph.fail(node, new AsyncOperationError(`${this.label} was disposed before operation ${node.id} (${node.kind} "${node.name}") settled`, node.id));
    }
    if (this.#ownsStreams) for (const s of this.#uniqueStreams()) s.dispose();
    if (this.#outstanding === 0) this.#events.dispose();
  }
}
