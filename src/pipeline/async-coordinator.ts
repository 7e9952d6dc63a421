/**
 * AsyncCoordinator: one-off upload, compute and download operations with dependencies the caller
 * names, as a thin front of the one dependency-graph engine (orchestration's Coordinator) over
 * three streams, a lane's three (upload = copy-in, compute, download = copy-out). It is for
 * graphs of operations that each run once (forks, joins, side streams); repeated work that goes
 * upload -> compute -> download piece after piece runs on a Lane (pipeline/lanes), whose slots'
 * events order the stages with no operation records. ManagedContext has both over the same
 * streams: its steps on a lane, its coordinator for the rest.
 */
import type { Context } from '../runtime/context.js';
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { resolveContext } from '../runtime/defaults.js';
import { dtypeInfo, type DType } from '../runtime/memory/dtype.js';
import type { HostBuffer } from '../runtime/memory/host-buffer.js';
import { Coordinator } from '../orchestration/coordinator.js';
import type { Profiler } from '../orchestration/profiler.js';
import { StreamPool } from '../orchestration/stream-pool.js';
import { describeValue, Resource } from '../runtime/resource.js';
import { Stream, type StreamPriority } from '../runtime/stream.js';
import {
  checkDescriptor,
  type AsyncCoordinatorDescriptor,
  type CoordinatorStreams,
} from './async-coordinator-descriptor.js';
import {
  toAsync,
  type AsyncOperationId,
  type AsyncOperationKind,
  type AsyncOperationStatus,
  type ComputeFn,
  type ComputeOptions,
  type SettledAsyncOperation,
  type TransferOptions,
} from './async-operation.js';

/**
 * Upload, compute and download on dedicated streams, each operation tracked by the event its
 * pool records behind it. Dependencies are lowered to cuStreamWaitEvent, so dependent work is
 * ordered on the GPU without the host waiting; fork and join are just several dependents or
 * dependencies. Completion is tracked by the context's poller (no thread blocks); poll() also
 * asks the GPU directly, for callers that do not yield to the event loop.
 *
 * A failed operation fails its dependents with DependencyFailedError (alias
 * AsyncDependencyError); queueing after a failed dependency throws it at once. dispose() fails
 * whatever has not settled, so nothing waits forever.
 */
export class AsyncCoordinator extends Resource {
  readonly context: Context;
  readonly profiler: Profiler | undefined;
  /** The engine behind this front. */
  readonly coordinator: Coordinator;
  readonly pool: StreamPool;
  readonly #streams: CoordinatorStreams;
  readonly #owned: Stream[] = [];
  readonly #computes = new Map<string, ComputeFn>();
  #lastCompute: AsyncOperationId | undefined;

  constructor(descriptor: AsyncCoordinatorDescriptor = {}) {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`new AsyncCoordinator() takes a descriptor object, got ${describeValue(descriptor)}`);
    super('AsyncCoordinator', descriptor.label);
    checkDescriptor(descriptor, this.label);
    this.context = resolveContext(descriptor, descriptor.streams?.compute);
    this.profiler = descriptor.profiler;
    if (descriptor.streams) {
      for (const s of [descriptor.streams.upload, descriptor.streams.compute, descriptor.streams.download]) {
        if (s.context !== this.context)
          throw new Error(`${this.label}: stream "${s.label}" belongs to another context`);
      }
      this.#streams = { ...descriptor.streams };
    } else {
      const p = descriptor.priorities ?? {};
      const make = (purpose: string, priority: StreamPriority | undefined): Stream => {
        const s = new Stream({
          context: this.context,
          priority: priority ?? 'normal',
          label: `${this.label} ${purpose}`,
        });
        this.#owned.push(s);
        return s;
      };
      try {
        this.#streams = {
          upload: make('upload', p.upload),
          compute: make('compute', p.compute),
          download: make('download', p.download),
        };
      } catch (e) {
        for (const s of this.#owned) s.dispose();
        throw e;
      }
    }
    const { upload, compute, download } = this.#streams;
    this.pool = new StreamPool({
      context: this.context,
      label: `${this.label} streams`,
      streams: [
        { stream: upload, purpose: 'ConfigUpload' },
        { stream: compute, purpose: 'KernelExecution' },
        { stream: download, purpose: 'TelemetryDownload' },
      ],
      ...(this.profiler ? { profiler: this.profiler } : {}),
    });
    this.coordinator = new Coordinator(this.pool, {
      label: this.label,
      uniqueNames: false,
      // queueCompute's options.stream may be any stream of the context (see ComputeOptions).
      guestStreams: true,
      ...(descriptor.retainSettled === undefined ? {} : { retainSettled: descriptor.retainSettled }),
    });
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
    return this.coordinator.pendingCount;
  }

  /** Names a computation, so that queueCompute(name, deps) can run it. */
  registerCompute(name: string, fn: ComputeFn): void {
    if (typeof fn !== 'function') throw new TypeError(`${this.label}: compute "${name}" must be a function`);
    this.#computes.set(name, fn);
  }

  /** Host -> device on the upload stream. The host buffer must not change until the operation completes. */
  queueUpload<T extends DType>(
    host: HostBuffer<T>,
    buffer: DeviceBuffer<T>,
    options: TransferOptions = {},
  ): AsyncOperationId {
    const stream = this.#streams.upload;
    const length = options.length ?? host.length;
    return this.#queue(
      'upload',
      options.name ?? `upload to ${buffer.label}`,
      stream,
      options.deps ?? [],
      () => buffer.write(host, { stream, length }),
      length * dtypeInfo(buffer.dtype).bytes,
      true,
    );
  }

  /** Runs a registered computation (by name) or `fn` on the compute stream, after `deps`. */
  queueCompute(
    nameOrFn: string | ComputeFn,
    deps: readonly AsyncOperationId[] = [],
    options: ComputeOptions = {},
  ): AsyncOperationId {
    let fn: ComputeFn;
    let name: string;
    if (typeof nameOrFn === 'string') {
      const registered = this.#computes.get(nameOrFn);
      if (registered === undefined)
        throw new Error(`${this.label}: no compute registered as "${nameOrFn}" (registerCompute(name, fn) first)`);
      fn = registered;
      name = options.name ?? nameOrFn;
    } else if (typeof nameOrFn === 'function') {
      fn = nameOrFn;
      name = options.name ?? (nameOrFn.name || 'compute');
    } else
      throw new TypeError(`${this.label}: queueCompute needs a registered name or a function, got ${typeof nameOrFn}`);
    const stream = options.stream ?? this.#streams.compute;
    if (!(stream instanceof Stream)) throw new TypeError(`${this.label}: options.stream must be a Stream`);
    if (stream.context !== this.context)
      throw new Error(`${this.label}: stream "${stream.label}" belongs to another context`);
    const id = this.#queue('compute', name, stream, deps, () => fn(stream), undefined, options.profile ?? true);
    this.#lastCompute = id;
    return id;
  }

  /**
   * Device -> host on the download stream. Without `deps` it waits for the latest queued
   * compute operation (upload -> compute -> download); read the host buffer once it completes.
   */
  queueDownload<T extends DType>(
    buffer: DeviceBuffer<T>,
    host: HostBuffer<T>,
    options: TransferOptions = {},
  ): AsyncOperationId {
    const stream = this.#streams.download;
    const length = options.length ?? host.length;
    const deps = options.deps ?? (this.#lastCompute === undefined ? [] : [this.#lastCompute]);
    return this.#queue(
      'download',
      options.name ?? `download from ${buffer.label}`,
      stream,
      deps,
      () => buffer.read(host, { stream, length }),
      length * dtypeInfo(buffer.dtype).bytes,
      true,
    );
  }

  /**
   * Never blocks: asks the GPU about pending operations (the oldest per stream, since a stream
   * completes in order) and returns every operation settled since the previous poll().
   */
  poll(): SettledAsyncOperation[] {
    return this.coordinator.poll().map(toAsync);
  }

  /** 'pending' until the operation and everything it depends on have completed, or it failed. */
  status(id: AsyncOperationId): AsyncOperationStatus {
    const state = this.coordinator.state(this.#checkId(id));
    return state === 'completed' || state === 'captured' ? 'completed' : state === 'failed' ? 'failed' : 'pending';
  }

  /** Resolves once operation `id` and everything it depends on have completed; rejects with the cause otherwise. */
  wait(id: AsyncOperationId): Promise<void> {
    try {
      return this.coordinator.wait(this.#checkId(id));
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /**
   * Blocks the thread until the three streams are idle (cuStreamSynchronize), then settles
   * every operation; throws an AggregateError if any operation queued before the call failed.
   * `await done()` is the form that does not block the event loop.
   */
  synchronizeAll(): void {
    this.assertAlive();
    const covered = this.coordinator.pendingIds();
    for (const s of this.#uniqueStreams()) s.synchronize();
    this.coordinator.observe();
    this.#throwFailures(covered);
  }

  /** Resolves once all work queued so far (through the streams too) has finished; rejects like synchronizeAll(). */
  async done(): Promise<void> {
    this.assertAlive();
    const ids = this.coordinator.pendingIds();
    await Promise.all(this.#uniqueStreams().map((s) => s.done()));
    await Promise.allSettled(ids.map((id) => this.coordinator.wait(id)));
    this.#throwFailures(ids);
  }

  #queue(
    kind: AsyncOperationKind,
    name: string,
    stream: Stream,
    deps: readonly AsyncOperationId[],
    enqueue: () => void,
    bytes: number | undefined,
    profile: boolean,
  ): AsyncOperationId {
    this.assertAlive();
    if (!Array.isArray(deps)) throw new TypeError(`${this.label}: deps must be an array of operation ids`);
    for (const d of deps) this.#checkId(d);
    return this.coordinator.start({
      name,
      kind: kind === 'compute' ? 'kernel' : kind,
      stream,
      after: deps,
      run: enqueue,
      ...(bytes === undefined ? {} : { bytes }),
      ...(profile ? {} : { profile: false }),
    });
  }

  /** Ids are numbers the coordinator issued: anything else is a RangeError naming it. */
  #checkId(id: AsyncOperationId): AsyncOperationId {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
      throw new RangeError(`${this.label}: there is no operation ${String(id)}`);
    return id;
  }

  #throwFailures(ids: readonly AsyncOperationId[]): void {
    const failed = ids.filter((id) => this.coordinator.state(id) === 'failed');
    if (failed.length === 0) return;
    throw new AggregateError(
      failed.map((id) => this.coordinator.failure(id)!),
      `${this.label}: ${failed.length} operation(s) failed: ${failed.join(', ')}`,
    );
  }

  #uniqueStreams(): Stream[] {
    return [...new Set([this.#streams.upload, this.#streams.compute, this.#streams.download])];
  }

  /** Fails what is still pending (nothing hangs); GPU work already enqueued still runs. */
  protected releaseNative(): void {
    this.coordinator.dispose();
    this.pool.dispose();
    for (const s of this.#owned) s.dispose();
  }
}
