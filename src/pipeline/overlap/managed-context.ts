import type { Context } from '../../runtime/context.js';
import { Device } from '../../runtime/device.js';
import type { DType, HostArray } from '../../runtime/memory/dtype.js';
import { Profiler } from '../../orchestration/profiler.js';
import { resolveContext } from '../../runtime/defaults.js';
import { describeValue, DisposedError, expectResource, Resource } from '../../runtime/resource.js';
import { knownKeys } from '../../runtime/value-checks.js';
import { Stream } from '../../runtime/stream.js';
import { AsyncCoordinator } from '../async-coordinator.js';
import { StageManager, type StageManagerDescriptor } from '../stages/stage-manager.js';
import { type ConfigSource, type StepDefinition, StepRunner, type TelemetryReader } from './step-runner.js';
import { type StagedBuffer, TripleBuffer } from './triple-buffer.js';

export type { ConfigSource, StepDefinition, StepIO, TelemetryReader } from './step-runner.js';

/** What a stream is for; the seeds' names. */
export type ManagedStreamPurpose =
  'ConfigUpload' | 'KernelExecution' | 'TelemetryDownload' | 'P2PTransfer' | 'AuxCompute';

/** 'sync': one stream, each step alone. 'triple': dedicated streams, three steps overlap (upload, compute, download), over `slots` slots (default TRIPLE_MODE_SLOTS, four). */
export type ManagedMode = 'sync' | 'triple';

/**
 * Slots of triple mode: one per stage in flight, and one more. With exactly three, step i+3's
 * upload can start only once step i's download has completed *and* the host has seen it (the
 * completion poller, the telemetry read, the slot's release): that round trip (~40 µs measured)
 * then sits on the critical path of every step, ~10 % of a 0.35 ms stage. The fourth slot lets
 * the host finish step i while step i+3 already uploads.
 */
export const TRIPLE_MODE_SLOTS = 4;

/** How a ManagedContext is made. */
export interface ManagedContextDescriptor<C extends DType, T extends DType> {
  /** The one argument that switches a module between the two modes. Default 'sync'. */
  mode?: ManagedMode | undefined;
  /** The device (or its ordinal); default device 0. */
  device?: Device | number | undefined;
  /** Same as `device: context.device`. */
  context?: Context | undefined;
  /** What tripleBufferedStep() runs. */
  step?: StepDefinition<C, T> | undefined;
  /** Brackets every transfer and computation of the steps and of the coordinator. */
  profiler?: Profiler | undefined;
  /**
   * Triple mode: slots of staging and device memory the steps rotate through, 3 to 16 (default
   * TRIPLE_MODE_SLOTS). Each slot beyond three lets the host react to a finished step one stage
   * later without stalling the next upload; each costs the step's config and telemetry twice
   * (pinned and device memory). Sync mode always uses one.
   */
  slots?: number | undefined;
  label?: string | undefined;
}

/** Every key of ManagedContextDescriptor (the Record makes a new one fail to compile until listed). */
const DESCRIPTOR_KEYS = Object.keys({
  mode: true,
  device: true,
  context: true,
  step: true,
  profiler: true,
  slots: true,
  label: true,
} satisfies Record<keyof ManagedContextDescriptor<DType, DType>, true>);

/** @deprecated the name before issue 9; use ManagedContextDescriptor. */
export type ManagedContextOptions<C extends DType, T extends DType> = ManagedContextDescriptor<C, T>;

/**
 * One device in a synchronous or a triple-buffered mode, behind the same calls: code written
 * against it switches mode by its constructor argument alone. In sync mode every purpose
 * shares one stream and each step completes before the next starts; in triple mode uploads,
 * kernels and downloads have streams of their own and consecutive steps overlap. Its steps are
 * the work of a Lane (pipeline/lanes) on those streams, one slot per step in flight; its
 * coordinator is a dependency graph of one-off operations over the same streams.
 */
export class ManagedContext<C extends DType = DType, T extends DType = DType> extends Resource {
  readonly mode: ManagedMode;
  readonly device: Device;
  readonly context: Context;
  readonly coordinator: AsyncCoordinator;
  readonly profiler: Profiler | undefined;
  readonly #streams: Map<ManagedStreamPurpose, Stream>;
  readonly #owned: Stream[] = [];
  readonly #steps: StepRunner<C, T> | undefined;

  constructor(options: ManagedContextDescriptor<C, T> = {}) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`new ManagedContext() takes a descriptor object, got ${describeValue(options)}`);
    // A misspelt option (`mdoe: 'triple'`) silently meant its default.
    knownKeys(options, DESCRIPTOR_KEYS, 'ManagedContext descriptor');
    super('ManagedContext', options.label);
    const mode = options.mode ?? 'sync';
    if (mode !== 'sync' && mode !== 'triple')
      throw new TypeError(`ManagedContext "${this.label}": mode must be 'sync' or 'triple', got ${String(mode)}`);
    this.mode = mode;
    const slots = options.slots ?? TRIPLE_MODE_SLOTS;
    if (!Number.isInteger(slots) || slots < 3 || slots > 16)
      throw new RangeError(
        `ManagedContext "${this.label}": slots must be an integer from 3 to 16, got ${String(options.slots)}`,
      );
    // Before the context and streams are made: a wrong profiler said "no CUDA driver" without a GPU.
    if (options.profiler !== undefined)
      expectResource(options.profiler, Profiler, `ManagedContext "${this.label}": profiler`);
    this.context = resolveContext(options);
    this.device = this.context.device;
    this.profiler = options.profiler;
    const stream = (purpose: string, priority: 'high' | 'normal' | 'low' = 'normal'): Stream => {
      const s = new Stream({ context: this.context, priority, label: `${this.label} ${purpose}` });
      this.#owned.push(s);
      return s;
    };
    if (mode === 'sync') {
      const only = stream('stream');
      this.#streams = new Map<ManagedStreamPurpose, Stream>([
        ['ConfigUpload', only],
        ['KernelExecution', only],
        ['TelemetryDownload', only],
        ['P2PTransfer', only],
        ['AuxCompute', only],
      ]);
    } else {
      this.#streams = new Map<ManagedStreamPurpose, Stream>([
        ['ConfigUpload', stream('upload')],
        ['KernelExecution', stream('compute')],
        ['TelemetryDownload', stream('download')],
      ]);
    }
    const streams = {
      upload: this.getStream('ConfigUpload'),
      compute: this.getStream('KernelExecution'),
      download: this.getStream('TelemetryDownload'),
    };
    this.coordinator = new AsyncCoordinator({
      streams,
      label: `${this.label} coordinator`,
      ...(this.profiler ? { profiler: this.profiler } : {}),
    });
    if (options.step) {
      this.#steps = new StepRunner<C, T>({
        context: this.context,
        definition: options.step,
        streams,
        slots: mode === 'sync' ? 1 : slots,
        label: `${this.label} steps`,
        ...(this.profiler ? { profiler: this.profiler } : {}),
      });
    }
  }

  /** True in triple mode: each purpose has a stream of its own. */
  get hasStreamManagement(): boolean {
    return this.mode === 'triple';
  }

  /** The stream for `purpose` (in sync mode, the one stream); P2P and auxiliary streams are made on first use. */
  getStream(purpose: ManagedStreamPurpose): Stream {
    this.assertAlive();
    let s = this.#streams.get(purpose);
    if (s === undefined) {
      if (purpose !== 'P2PTransfer' && purpose !== 'AuxCompute')
        throw new TypeError(`ManagedContext "${this.label}": unknown stream purpose ${String(purpose)}`);
      s = new Stream({
        context: this.context,
        priority: purpose === 'AuxCompute' ? 'low' : 'normal',
        label: `${this.label} ${purpose === 'AuxCompute' ? 'aux' : 'p2p'}`,
      });
      this.#owned.push(s);
      this.#streams.set(purpose, s);
    }
    return s;
  }

  /** `TripleBuffer.alloc` in this context: three slots of `length` elements of `dtype`, each a StagedBuffer (device memory and its pinned staging). The caller owns it and disposes it; the context does not. */
  createTripleBuffer<D extends DType>(
    dtype: D,
    length: number,
    options: { label?: string | undefined } = {},
  ): TripleBuffer<StagedBuffer<D>> {
    this.assertAlive();
    return TripleBuffer.alloc(dtype, length, { context: this.context, ...options });
  }

  /** A stage manager over this context's coordinator; its stages overlap only in triple mode. */
  createStageManager(options: Omit<StageManagerDescriptor, 'coordinator'> = {}): StageManager {
    this.assertAlive();
    return new StageManager({ concurrent: this.mode === 'triple', ...options, coordinator: this.coordinator });
  }

  /**
   * Uploads `config`, runs the step definition's compute and downloads its telemetry. Resolves
   * with the telemetry (a copy, or what `read` returns from the pinned staging). In triple mode,
   * call it again without awaiting to overlap steps: the next step's upload and the previous
   * step's download run while this step computes; a fifth step waits for a free slot.
   */
  tripleBufferedStep(config: ConfigSource<C>): Promise<HostArray<T>>;
  tripleBufferedStep<R>(config: ConfigSource<C>, read: TelemetryReader<T, R>): Promise<R>;
  tripleBufferedStep<R>(config: ConfigSource<C>, read?: TelemetryReader<T, R>): Promise<R | HostArray<T>> {
    if (this.disposed)
      return Promise.reject(new DisposedError(`ManagedContext "${this.label}" was disposed and cannot be used`));
    if (!this.#steps)
      return Promise.reject(
        new Error(`ManagedContext "${this.label}" has no step definition: pass { step } to its constructor`),
      );
    return this.#steps.step<R | HostArray<T>>(config, read ?? copyOut);
  }

  /** Resolves once every step called so far has settled and the coordinator's work is done; never blocks. */
  async done(): Promise<void> {
    this.assertAlive();
    await this.#steps?.idle();
    await this.coordinator.done();
  }

  /** @deprecated async, unlike every other synchronize(); use done(). */
  synchronize(): Promise<void> {
    return this.done();
  }

  /**
   * Settles every promise it handed out: steps not yet settled reject with DisposedError,
   * coordinator operations not yet settled with OperationError. GPU work already enqueued
   * still runs; `await done()` first to let it finish.
   */
  protected releaseNative(): void {
    this.#steps?.dispose();
    this.coordinator.dispose();
    for (const s of this.#owned) s.dispose();
  }
}

function copyOut<T extends DType>(telemetry: HostArray<T>): HostArray<T> {
  return telemetry.slice() as HostArray<T>;
}
