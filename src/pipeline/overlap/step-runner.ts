/**
 * ManagedContext's steps (upload a config, compute on it, download its telemetry) as the work of a
 * Lane (pipeline/lanes) whose copy-in, compute and copy-out streams are the context's upload,
 * compute and download streams, and whose slots hold each step's config and telemetry (staged
 * pairs of the lane's BufferCache). What the runner adds to the lane: steps enqueued in call
 * order, each waiting for a free slot, and the profiler's brackets.
 */
import type { Context } from '../../runtime/context.js';
import type { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import type { DType, HostArray } from '../../runtime/memory/dtype.js';
import type { StagedBuffer } from '../../runtime/memory/staged-buffer.js';
import { DisposedError, Resource } from '../../runtime/resource.js';
import type { Profiler } from '../../orchestration/profiler.js';
import type { Stream } from '../../runtime/stream.js';
import type { CoordinatorStreams } from '../async-coordinator-descriptor.js';
import { Lane } from '../lanes/lane.js';
import type { LaneSlot } from '../lanes/lane-slots.js';

/** One step: upload a config, compute on it, download the telemetry it produced. */
export interface StepDefinition<C extends DType, T extends DType> {
  config: { dtype: C; length: number };
  telemetry: { dtype: T; length: number };
  /** Enqueues the step's work on `io.stream`, reading `io.config` and writing `io.telemetry`; must not block. */
  compute(io: StepIO<C, T>): void;
}

/** What a step's compute sees. */
export interface StepIO<C extends DType, T extends DType> {
  config: DeviceBuffer<C>;
  telemetry: DeviceBuffer<T>;
  stream: Stream;
  step: number;
}

/** The step's config: an array copied into pinned staging, or a function that fills the staging in place. */
export type ConfigSource<C extends DType> = HostArray<C> | ((staging: HostArray<C>, step: number) => void);

/** Reads the step's telemetry from pinned staging, which is reused once it returns: copy what you keep. */
export type TelemetryReader<T extends DType, R> = (telemetry: HostArray<T>, step: number) => R;

interface SlotData<C extends DType, T extends DType> {
  config: StagedBuffer<C>;
  telemetry: StagedBuffer<T>;
}

interface Copyable extends ArrayLike<unknown> {
  set(source: ArrayLike<unknown>): void;
}

/**
 * Runs steps on a lane of `slots` slots: with three (or more) slots and three streams, step i+1's
 * upload, step i's compute and step i-1's download overlap; with one slot and one stream, every
 * step runs alone (the synchronous mode). Steps are enqueued in call order; the host waits only
 * for a free slot, all other ordering is the slot's events on the GPU.
 */
export class StepRunner<C extends DType, T extends DType> extends Resource {
  readonly #definition: StepDefinition<C, T>;
  readonly #streams: CoordinatorStreams;
  readonly #profiler: Profiler | undefined;
  readonly #lane: Lane;
  /** Each slot's config and telemetry, by slot index. */
  readonly #data: readonly SlotData<C, T>[];
  #nextStep = 0;
  /** Settles when the previous step has finished enqueueing: steps go in call order. */
  #turn: Promise<void> = Promise.resolve();
  #inFlight = 0;
  #idle: { promise: Promise<void>; resolve: () => void } | null = null;

  constructor(options: {
    context: Context;
    definition: StepDefinition<C, T>;
    streams: CoordinatorStreams;
    slots: number;
    profiler?: Profiler | undefined;
    label: string;
  }) {
    super('StepRunner', options.label);
    const { context, definition, streams, label } = options;
    this.#definition = definition;
    this.#streams = streams;
    this.#profiler = options.profiler;
    const lane = new Lane({
      context,
      slots: options.slots,
      stream: streams.compute,
      copies: { copyIn: streams.upload, copyOut: streams.download },
      label: `${label} slots`,
    });
    const { config, telemetry } = definition;
    try {
      // Made now, at their exact lengths: a step never allocates, and too little memory fails here.
      this.#data = Array.from({ length: lane.depth }, (_, i) => ({
        config: lane.buffers.staged('config', config.dtype, config.length, i),
        telemetry: lane.buffers.staged('telemetry', telemetry.dtype, telemetry.length, i),
      }));
    } catch (e) {
      lane.dispose();
      throw e;
    }
    this.#lane = lane;
  }

  get slotCount(): number {
    return this.#lane.depth;
  }

  /** Steps called and not yet settled. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Runs one step; resolves with what `read` returns from the step's telemetry staging. */
  step<R>(config: ConfigSource<C>, read: TelemetryReader<T, R>): Promise<R> {
    if (this.disposed) return Promise.reject(new DisposedError(`StepRunner "${this.label}" was disposed`));
    const step = this.#nextStep++;
    const previous = this.#turn;
    let endTurn!: () => void;
    this.#turn = new Promise<void>((resolve) => (endTurn = resolve));
    this.#inFlight++;
    const run = previous.then(() => this.#run(step, config, read, endTurn));
    void run.then(this.#stepSettled, this.#stepSettled);
    return run;
  }

  /** Resolves once every step called so far has settled. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    this.#idle ??= deferred();
    return this.#idle.promise;
  }

  readonly #stepSettled = (): void => {
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#idle) {
      this.#idle.resolve();
      this.#idle = null;
    }
  };

  async #run<R>(step: number, config: ConfigSource<C>, read: TelemetryReader<T, R>, endTurn: () => void): Promise<R> {
    let slot: LaneSlot;
    try {
      slot = await this.#lane.acquire();
    } catch (e) {
      endTurn();
      throw e;
    }
    try {
      let done: Promise<void>;
      try {
        done = this.#enqueue(slot, step, config);
      } finally {
        endTurn();
      }
      await done;
    } catch (e) {
      // The slot is reused only once the streams have run what this step enqueued: a step waiting
      // for a slot then always gets one, or (the context broke) fails on the slot's events.
      await this.#lane.drain();
      this.#lane.release(slot);
      throw e;
    }
    try {
      return read(this.#data[slot.index]!.telemetry.array, step);
    } finally {
      this.#lane.release(slot);
    }
  }

  /** Enqueues the step's upload, compute and download in `slot`; resolves once they have completed. */
  #enqueue(slot: LaneSlot, step: number, config: ConfigSource<C>): Promise<void> {
    const { upload, compute, download } = this.#streams;
    const data = this.#data[slot.index]!;
    const staging = data.config.array;
    if (typeof config === 'function') config(staging, step);
    else {
      const target = staging as unknown as Copyable;
      const source = config as unknown as Copyable;
      if (source.length !== target.length)
        throw new RangeError(
          `${this.label}: step ${step} config has ${source.length} values, expected ${target.length}`,
        );
      target.set(source);
    }
    this.#bracket(upload, 'upload', step, () => data.config.upload(upload), data.config.byteLength);
    this.#lane.uploaded(slot);
    this.#bracket(compute, 'kernel', step, () =>
      this.#definition.compute({ config: data.config.device, telemetry: data.telemetry.device, stream: compute, step }),
    );
    this.#lane.computed(slot);
    this.#bracket(download, 'download', step, () => data.telemetry.download(download), data.telemetry.byteLength);
    return this.#lane.finished(slot);
  }

  #bracket(
    stream: Stream,
    kind: 'upload' | 'kernel' | 'download',
    step: number,
    enqueue: () => void,
    bytes?: number,
  ): void {
    if (this.#profiler)
      this.#profiler.wrap(stream, kind, `${kind === 'kernel' ? 'compute' : kind} #${step}`, enqueue, bytes);
    else enqueue();
  }

  /**
   * Frees the slots. Every step not yet settled rejects (DisposedError): those waiting for a
   * slot at once, those in flight through their slot's events. GPU work already enqueued still
   * runs; dispose after idle() to let it finish first.
   */
  protected releaseNative(): void {
    this.#lane.dispose();
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
