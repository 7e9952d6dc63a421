/**
 * Several GPUs for user-defined work: one StreamPool per device, work placed across devices
 * (round robin, least loaded, most free memory), per-device metrics, and one StreamPool view
 * spanning all of them for the Coordinator (dependencies across devices become events recorded on
 * one device's stream and waited on by another's: cuStreamWaitEvent takes events of any context).
 * The job engine does not use it: it places its lanes on its `devices` itself and picks a lane
 * per job (engine/lane-choice.ts).
 */
import { Device } from '../runtime/device.js';
import { describeValue, Resource } from '../runtime/resource.js';
import type { Stream } from '../runtime/stream.js';
import type { OperationKind } from '../report/timeline.js';
import { Coordinator } from './coordinator.js';
import type { CoordinatorDescriptor } from './coordinator-descriptor.js';
import { checkPlacement, pickDevice, type DevicePlacement } from './device-placement.js';
import { resolvePlacement } from '../runtime/defaults.js';
import type { Profiler } from './profiler.js';
import type { SettleListener, StreamMetrics } from './pool-member.js';
import { StreamPool, type PoolSubmitOptions, type StreamSpec } from './stream-pool.js';
import {
  checkChoice,
  checkStreamSpecs,
  POOL_STRATEGIES,
  type PoolStrategy,
  type PriorityLevel,
  type StreamPurpose,
  type StreamRequest,
} from './strategy.js';
import { knownKeys } from '../runtime/value-checks.js';
import type { CUevent } from '../ffi/generated/types.js';

/** How a DevicePool is made. */
export interface DevicePoolDescriptor {
  /** 'all' (default) or device ordinals / Devices; each listed once. */
  devices?: 'all' | readonly (Device | number)[] | undefined;
  /** How work is spread over the devices (default 'LeastLoaded'). */
  placement?: DevicePlacement | undefined;
  /** The streams of each device's pool (default: StreamPool's six, one per purpose and two for kernels). */
  streams?: readonly Omit<StreamSpec, 'stream'>[] | undefined;
  /** The strategy of each device's StreamPool (default RoundRobin). */
  strategy?: PoolStrategy | undefined;
  profiler?: Profiler | undefined;
  label?: string | undefined;
}

/** Every key of DevicePoolDescriptor (the Record makes a new one fail to compile until listed). */
const DESCRIPTOR_KEYS = Object.keys({
  devices: true,
  placement: true,
  streams: true,
  strategy: true,
  profiler: true,
  label: true,
} satisfies Record<keyof DevicePoolDescriptor, true>);

/** What the pool measured of one device. */
export interface DeviceMetrics {
  ordinal: number;
  /** Times placement chose this device. */
  placements: number;
  operations: number;
  transfers: number;
  kernelLaunches: number;
  outstanding: number;
  /** Mean submission-to-completion time over the device's completed operations. */
  averageLatencyMs: number;
  /** Sum over the device's streams of the time each had work in flight. */
  busyMs: number;
  freeBytes: number;
  totalBytes: number;
}

/** A request for a stream: StreamPool's, plus the device when the caller wants a particular one. */
export interface DeviceStreamRequest extends StreamRequest {
  device?: Device | number | undefined;
}

/**
 * A StreamPool for the Coordinator that spans the devices of a DevicePool: its `streams` are
 * all of theirs, acquire() places work across devices, and submit()/run()/metrics() go to the
 * pool of the stream's device. It owns no stream (its own base is one borrowed stream).
 */
class SpanningStreamPool extends StreamPool {
  readonly #owner: DevicePool;

  constructor(owner: DevicePool, label: string) {
    super({ context: owner.pools[0]!.context, streams: [{ stream: owner.pools[0]!.streams[0]! }], label });
    this.#owner = owner;
  }

  override get streams(): readonly Stream[] {
    return this.#owner.streams;
  }
  override has(stream: Stream): boolean {
    return this.#owner.pools.some((p) => p.has(stream));
  }
  override acquire(request: StreamRequest = {}): Stream {
    return this.#owner.acquire(request);
  }
  override run<T>(stream: Stream, kind: OperationKind, enqueue: () => T, options?: PoolSubmitOptions): T {
    return this.#owner.poolOf(stream).run(stream, kind, enqueue, options);
  }
  override submit(
    stream: Stream,
    kind: OperationKind,
    enqueue: (stream: Stream) => unknown,
    options: PoolSubmitOptions | undefined,
    listener: SettleListener,
  ): CUevent | undefined {
    return this.#owner.poolOf(stream).submit(stream, kind, enqueue, options, listener);
  }
  override metrics(stream: Stream): StreamMetrics {
    return this.#owner.poolOf(stream).metrics(stream);
  }
  override allMetrics(): { stream: string; purpose: StreamPurpose; priority: PriorityLevel; metrics: StreamMetrics }[] {
    return this.#owner.pools.flatMap((p) => p.allMetrics());
  }
  override hasReadyStreams(): boolean {
    return this.#owner.pools.some((p) => p.hasReadyStreams());
  }
  override async waitForAnyReady(options: { timeoutMs: number }): Promise<Stream | null> {
    const waits = this.#owner.pools.map((p) => p.waitForAnyReady(options));
    return new Promise<Stream | null>((resolve, reject) => {
      let left = waits.length;
      for (const w of waits)
        w.then(
          (s) => {
            left--;
            if (s !== null || left === 0) resolve(s);
          },
          (e: unknown) => {
            left--;
            if (left === 0) reject(e instanceof Error ? e : new Error(String(e)));
          },
        );
    });
  }
}

/**
 * One StreamPool per device and placement across them, for user-defined work on several GPUs.
 * `acquire()` picks a device by the placement, then a stream of its pool by that pool's strategy;
 * `run()` enqueues work on a stream of any device and counts it in that device's metrics.
 * `coordinator()` gives a Coordinator whose operations may run on any device, with dependencies
 * across devices. The job engine does not use it (its lanes are placed by JobEngine's `devices`);
 * for repeated upload/compute/download on each device, run a Lane per device (pipeline/lanes).
 */
export class DevicePool extends Resource {
  readonly devices: readonly Device[];
  readonly pools: readonly StreamPool[];
  #placement: DevicePlacement;
  readonly #byContext = new Map<unknown, StreamPool>();
  readonly #placements: number[];
  readonly #streams: readonly Stream[];
  #tick = 0;
  #spanning: SpanningStreamPool | undefined;

  constructor(descriptor: DevicePoolDescriptor = {}) {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`new DevicePool() takes a descriptor object, got ${describeValue(descriptor)}`);
    // A misspelt option (`placment`) silently meant its default.
    knownKeys(descriptor, DESCRIPTOR_KEYS, 'DevicePool descriptor');
    super('DevicePool', descriptor.label ?? 'device pool');
    const placement = descriptor.placement ?? 'LeastLoaded';
    checkPlacement(placement, this.label);
    this.#placement = placement;
    // Checked before resolvePlacement asks the driver for the devices: each device's StreamPool
    // checks them too, but only after that, so a typo said "no CUDA device is visible".
    if (descriptor.strategy !== undefined) checkChoice(descriptor.strategy, POOL_STRATEGIES, `${this.label}: strategy`);
    if (descriptor.streams !== undefined) checkStreamSpecs(descriptor.streams, this.label);
    // The one placement rule (runtime/defaults.ts resolvePlacement); a pool spans every device by default.
    this.devices = resolvePlacement({ devices: descriptor.devices }, this.label, 'all');
    const pools: StreamPool[] = [];
    try {
      for (const device of this.devices) {
        const pool = new StreamPool({
          device,
          label: `${this.label}/device ${device.ordinal}`,
          ...(descriptor.streams
            ? {
                streams: descriptor.streams.map((s) => ({
                  ...(s.priority ? { priority: s.priority } : {}),
                  ...(s.purpose ? { purpose: s.purpose } : {}),
                })),
              }
            : {}),
          ...(descriptor.strategy ? { strategy: descriptor.strategy } : {}),
          ...(descriptor.profiler ? { profiler: descriptor.profiler } : {}),
        });
        pools.push(pool);
        this.#byContext.set(pool.context, pool);
      }
    } catch (e) {
      for (const p of pools) p.dispose();
      throw e;
    }
    this.pools = pools;
    this.#placements = pools.map(() => 0);
    this.#streams = pools.flatMap((p) => p.streams);
  }

  /** How pickDevice() spreads work: RoundRobin, LeastLoaded or FreeMemory (anything else is a TypeError, as in the descriptor). */
  get placement(): DevicePlacement {
    return this.#placement;
  }

  set placement(value: DevicePlacement) {
    // A public field took any value, and pickDevice() then treated an unknown one as FreeMemory.
    checkPlacement(value, this.label);
    this.#placement = value;
  }

  /** Every stream of every device, device by device. */
  get streams(): readonly Stream[] {
    return this.#streams;
  }

  /** The StreamPool of a device of the pool. */
  pool(device: Device | number): StreamPool {
    this.assertAlive();
    const ordinal = device instanceof Device ? device.ordinal : device;
    const i = this.devices.findIndex((d) => d.ordinal === ordinal);
    if (i < 0)
      throw new RangeError(
        `${this.label}: device ${String(ordinal)} is not one of its devices (${this.devices.map((d) => d.ordinal).join(', ')})`,
      );
    return this.pools[i]!;
  }

  /** The StreamPool of the device `stream` runs on. */
  poolOf(stream: Stream): StreamPool {
    this.assertAlive();
    const pool = this.#byContext.get(stream?.context);
    if (!pool) throw new Error(`${this.label}: stream "${stream?.label}" runs on none of its devices`);
    return pool;
  }

  /** The device the next piece of work goes to, by the placement (counted in its metrics' `placements`). */
  pickDevice(): Device {
    this.assertAlive();
    const loads = this.pools.map((p, index) => ({
      index,
      outstanding: p.allMetrics().reduce((s, m) => s + m.metrics.outstanding, 0),
      freeBytes: this.placement === 'FreeMemory' ? p.context.memoryInfo().freeBytes : 0,
    }));
    const i = pickDevice(this.placement, loads, this.#tick++);
    this.#placements[i]!++;
    return this.devices[i]!;
  }

  /** A stream for the next piece of work: on `request.device`, else on the device placement picks, by that pool's strategy. */
  acquire(request: DeviceStreamRequest = {}): Stream {
    const { device, ...rest } = request;
    if (device !== undefined) {
      const pool = this.pool(device);
      this.#placements[this.pools.indexOf(pool)]!++;
      return pool.acquire(rest);
    }
    return this.pool(this.pickDevice()).acquire(rest);
  }

  /** Enqueues `enqueue`'s work on `stream` (of any of the devices), counted in its device's metrics. */
  run<T>(stream: Stream, kind: OperationKind, enqueue: () => T, options?: PoolSubmitOptions): T {
    return this.poolOf(stream).run(stream, kind, enqueue, options);
  }

  /** Per device: placements, operations, transfers, launches, work in flight, latency, busy time, memory. */
  metrics(): DeviceMetrics[] {
    this.assertAlive();
    return this.pools.map((p, i) => {
      const all = p.allMetrics();
      let operations = 0;
      let transfers = 0;
      let kernelLaunches = 0;
      let outstanding = 0;
      let busyMs = 0;
      let latency = 0;
      let completed = 0;
      for (const { metrics: m } of all) {
        operations += m.operations;
        transfers += m.transfers;
        kernelLaunches += m.kernelLaunches;
        outstanding += m.outstanding;
        busyMs += m.busyMs;
        const done = m.operations - m.outstanding;
        latency += m.averageLatencyMs * done;
        completed += done;
      }
      const memory = p.context.memoryInfo();
      return {
        ordinal: this.devices[i]!.ordinal,
        placements: this.#placements[i]!,
        operations,
        transfers,
        kernelLaunches,
        outstanding,
        averageLatencyMs: completed ? latency / completed : 0,
        busyMs,
        freeBytes: memory.freeBytes,
        totalBytes: memory.totalBytes,
      };
    });
  }

  /** A StreamPool view over every device (what the Coordinator takes); it owns nothing. */
  get streamPool(): StreamPool {
    this.assertAlive();
    return (this.#spanning ??= new SpanningStreamPool(this, `${this.label}/all devices`));
  }

  /** A Coordinator whose operations run on any device of the pool (placed by acquire() unless they name a stream). */
  coordinator(descriptor: CoordinatorDescriptor = {}): Coordinator {
    return new Coordinator(this.streamPool, descriptor);
  }

  /** Disposes every device's StreamPool (their streams, after their work). */
  protected releaseNative(): void {
    this.#spanning?.dispose();
    for (const p of this.pools) p.dispose();
  }
}
