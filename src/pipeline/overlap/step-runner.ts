import type { Context } from '../../runtime/context.js';
import type { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import type { DType, HostArray } from '../../runtime/memory/dtype.js';
import { StagedBuffer } from '../../runtime/memory/staged-buffer.js';
import { DisposedError, Resource } from '../../runtime/resource.js';
import type { Profiler } from '../../orchestration/profiler.js';
import type { Stream } from '../../runtime/stream.js';
import type { CoordinatorStreams } from '../async-coordinator-descriptor.js';
import { TripleBuffer, type TripleBufferSlot } from './triple-buffer.js';

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
 * Runs steps over a ring of slots: with three (or more) slots and three streams, step i+1's upload,
 * step i's compute and step i-1's download overlap; with one slot and one stream, every
 * step runs alone (the synchronous mode). Steps are enqueued in call order; the host waits
 * only for a free slot, all other ordering is events on the GPU.
 */
export class StepRunner<C extends DType, T extends DType> extends Resource {
  readonly #definition: StepDefinition<C, T>;
  readonly #streams: CoordinatorStreams;
  readonly #profiler: Profiler | undefined;
  readonly #slots: TripleBuffer<SlotData<C, T>>;
  #nextStep = 0;
  /** Settles when the previous step has finished enqueueing: steps go in call order. */
  #turn: Promise<void> = Promise.resolve();
  #freed: { promise: Promise<void>; resolve: () => void } = deferred();
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
    const { context, definition, label } = options;
    this.#definition = definition;
    this.#streams = options.streams;
    this.#profiler = options.profiler;
    const { config, telemetry } = definition;
    this.#slots = new TripleBuffer<SlotData<C, T>>({
      context,
      label: `${label} slots`,
      slots: options.slots,
      create: (i) => {
        const staged = StagedBuffer.alloc(config.dtype, config.length, { context, label: `${label}/${i} config` });
        try {
          return {
            config: staged,
            telemetry: StagedBuffer.alloc(telemetry.dtype, telemetry.length, {
              context,
              label: `${label}/${i} telemetry`,
            }),
          };
        } catch (e) {
          staged.dispose();
          throw e;
        }
      },
      destroy: (d) => {
        d.config.dispose();
        d.telemetry.dispose();
      },
    });
  }

  get slotCount(): number {
    return this.#slots.size;
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
    let slot: TripleBufferSlot<SlotData<C, T>>;
    try {
      slot = await this.#acquire();
    } catch (e) {
      endTurn();
      throw e;
    }
    try {
      this.#enqueue(slot, step, config);
    } catch (e) {
      await this.#giveBack(slot);
      throw e;
    } finally {
      endTurn();
    }
    try {
      await this.#slots.completion(slot);
    } catch (e) {
      await this.#giveBack(slot);
      throw e;
    }
    try {
      return read(slot.data.telemetry.array, step);
    } finally {
      if (!this.disposed) this.#slots.release(slot);
      this.#signalFreed();
    }
  }

  async #acquire(): Promise<TripleBufferSlot<SlotData<C, T>>> {
    for (;;) {
      if (this.disposed) throw new DisposedError(`StepRunner "${this.label}" was disposed before the step got a slot`);
      const slot = this.#slots.uploadSlot();
      if (slot !== null) return slot;
      await this.#freed.promise;
    }
  }

  #enqueue(slot: TripleBufferSlot<SlotData<C, T>>, step: number, config: ConfigSource<C>): void {
    const { upload, compute, download } = this.#streams;
    const data = slot.data;
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
    this.#slots.commit(slot, upload);
    this.#expect(this.#slots.processSlot(compute), slot, 'processing');
    this.#bracket(compute, 'kernel', step, () =>
      this.#definition.compute({ config: data.config.device, telemetry: data.telemetry.device, stream: compute, step }),
    );
    this.#slots.commit(slot, compute);
    this.#expect(this.#slots.downloadSlot(download), slot, 'downloading');
    this.#bracket(download, 'download', step, () => data.telemetry.download(download), data.telemetry.byteLength);
    this.#slots.commit(slot, download);
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

  /** Each step moves its own slot through all stages while it holds the turn, so it is always the oldest. */
  #expect(got: TripleBufferSlot<SlotData<C, T>> | null, slot: TripleBufferSlot<SlotData<C, T>>, stage: string): void {
    if (got !== slot) throw new Error(`${this.label}: internal error, slot ${slot.index} did not move to ${stage}`);
  }

  /**
   * A failed step's slot is reused only after the work enqueued so far has finished. Waiting
   * for the streams here means a step waiting for a slot always finds one afterwards, or (the
   * context broke) fails on the slot's events: nothing waits forever.
   */
  async #giveBack(slot: TripleBufferSlot<SlotData<C, T>>): Promise<void> {
    if (this.disposed) return;
    const streams = [...new Set([this.#streams.upload, this.#streams.compute, this.#streams.download])];
    try {
      this.#slots.abandon(slot, streams);
    } catch {
      this.#slots.abandon(slot, []);
    }
    await Promise.allSettled(streams.map((s) => s.done()));
    this.#signalFreed();
  }

  #signalFreed(): void {
    const freed = this.#freed;
    this.#freed = deferred();
    freed.resolve();
  }

  /**
   * Frees the slots. Every step not yet settled rejects (DisposedError): those waiting for a
   * slot at once, those in flight through their slot's completion. GPU work already enqueued
   * still runs; dispose after idle() to let it finish first.
   */
  protected releaseNative(): void {
    this.#slots.dispose();
    this.#signalFreed();
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
