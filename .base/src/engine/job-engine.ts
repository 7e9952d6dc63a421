/**
 * The FFT job engine of seed 000 (GpuEngine) on the GPU: lanes (one compute stream each, with its
 * events and reused pinned/device buffers, sharing their device's two copy streams) on one or
 * several devices, over the CUDA-free core's queue, job state machine and statistics.
 */
import { Device } from '../runtime/device.js';
import { HostBuffer } from '../runtime/memory/host-buffer.js';
import { EngineCore } from './engine-core.js';
import { Stream } from '../runtime/stream.js';
import { GpuLane, type CopyStreams, type LaneShared } from './gpu-lane.js';
import { StageRegistry, type Stage } from './stages.js';
import type { JobEngineOptions } from './types.js';

/** Default lanes (streams) per device. */
export const DEFAULT_LANES = 4;
/** Default jobs each lane holds on the GPU at once. */
export const DEFAULT_LANE_DEPTH = 2;
/** Default device memory one lane's chunk may use. */
export const DEFAULT_LANE_MEMORY_BYTES = 1 << 30;

/** The device ordinals an options object selects. */
function deviceOrdinals(options: JobEngineOptions): number[] {
  if (options.devices !== undefined) {
    if (options.devices === 'all') return Array.from({ length: Device.count() }, (_, i) => i);
    if (!Array.isArray(options.devices) || options.devices.length === 0)
      throw new TypeError(`devices must be 'all' or a non-empty array of ordinals, got ${JSON.stringify(options.devices)}`);
    const count = Device.count();
    for (const d of options.devices) if (!Number.isInteger(d) || d < 0 || d >= count) throw new RangeError(`devices: no device ${String(d)} (this machine has ${count})`);
    return [...new Set(options.devices)];
  }
  const d = options.device;
  if (d === undefined) return [0];
  if (typeof d === 'number') return [Device.get(d).ordinal];
  if (!(d instanceof Device)) throw new TypeError('device must be a Device or an ordinal');
  return [d.ordinal];
}

/**
 * The job engine: `submit()` a batch of series with flags (stft, cycles, wavelet, registered
 * stages) and get a Job whose `result` settles when its lane's finished event completes.
 *
 * ```ts
 * const engine = new JobEngine({ lanes: 4 });
 * const x = engine.hostBuffer('f32', 8 * 4096); // pinned: submitted without a copy
 * fill(x);
 * const job = engine.submit({ data: x, batch: 8, fs: 1000, flags: ['stft', 'cycles'], passBand: [5, 50], bands: [[1, 10], [10, 40]] });
 * const { filtered, spectrum, bandPowers, dominant } = await job.result;
 * await engine.close();
 * ```
 */
export class JobEngine extends EngineCore {
  readonly #shared: LaneShared & { lent: Map<ArrayBufferLike, HostBuffer<'f32' | 'f64'>> };
  readonly #firstDevice: number;
  readonly #copyStreams: readonly Stream[];

  constructor(options: JobEngineOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError('JobEngine options must be an object');
    const precision = options.precision ?? 'f32';
    if (precision !== 'f32' && precision !== 'f64') throw new TypeError(`precision must be 'f32' or 'f64', got ${String(precision)}`);
    const perDevice = options.lanes ?? DEFAULT_LANES;
    if (!Number.isSafeInteger(perDevice) || perDevice < 1) throw new RangeError(`lanes must be a positive integer, got ${String(perDevice)}`);
    const laneMemoryBytes = options.laneMemoryBytes ?? DEFAULT_LANE_MEMORY_BYTES;
    if (!Number.isSafeInteger(laneMemoryBytes) || laneMemoryBytes < 1 << 16)
      throw new RangeError(`laneMemoryBytes must be an integer of at least 64 KiB, got ${String(laneMemoryBytes)}`);
    const laneDepth = options.laneDepth ?? DEFAULT_LANE_DEPTH;
    if (!Number.isSafeInteger(laneDepth) || laneDepth < 1 || laneDepth > 8) throw new RangeError(`laneDepth must be an integer in 1..8, got ${String(laneDepth)}`);
    const label = options.label ?? 'engine';
    const shared = { precision, stages: new StageRegistry(), lent: new Map<ArrayBufferLike, HostBuffer<'f32' | 'f64'>>(), laneMemoryBytes, laneDepth };
    const ordinals = deviceOrdinals(options);
    const lanes: GpuLane[] = [];
    const copyStreams: Stream[] = [];
    try {
      // One pair of copy streams per device, shared by its lanes (CopyStreams says why).
      const copies = new Map<number, CopyStreams>();
      for (const d of ordinals) {
        const context = Device.get(d).context;
        const copyIn = new Stream({ context, label: `${label} device ${d} copies in` });
        copyStreams.push(copyIn);
        const copyOut = new Stream({ context, label: `${label} device ${d} copies out` });
        copyStreams.push(copyOut);
        copies.set(d, { copyIn, copyOut });
      }
      // Lanes interleave devices (d0 l0, d1 l0, d0 l1, ...), so round robin on ties spreads over devices.
      for (let l = 0; l < perDevice; l++) for (const d of ordinals) lanes.push(new GpuLane(Device.get(d).context, lanes.length, shared, label, copies.get(d)!));
    } catch (e) {
      for (const lane of lanes) lane.dispose();
      for (const stream of copyStreams) stream.dispose();
      throw e;
    }
    super({ runners: lanes, precision, ...(options.maxQueued !== undefined ? { maxQueued: options.maxQueued } : {}), label });
    this.#shared = shared;
    this.#copyStreams = copyStreams;
    this.#firstDevice = ordinals[0]!;
  }

  protected override stageNames(): ReadonlySet<string> {
    return this.#shared.stages.names();
  }

  /**
   * Registers a stage a job can name in its flags: `run(ctx)` enqueues kernels on `ctx.stream` over
   * the lane's buffers, after the forward FFT (`after: 'fft'`) or the inverse (`after: 'inverse'`).
   */
  registerStage(name: string, stage: Stage): void {
    this.#shared.stages.register(name, stage);
  }

  /**
   * Lends a pinned array of `length` samples: fill it and submit it (or subarrays of it) as `data`;
   * the lane copies it to the device without a host copy when `dtype` is the engine's precision.
   * It stays valid until `releaseHostBuffer(array)` or `close()`; do not write to it while a job that
   * reads it is queued or running.
   */
  hostBuffer(dtype: 'f32', length: number): Float32Array;
  hostBuffer(dtype: 'f64', length: number): Float64Array;
  hostBuffer(dtype: 'f32' | 'f64', length: number): Float32Array | Float64Array {
    if (this.closed) throw new Error(`engine "${this.label}" is closed: no more host buffers`);
    if (dtype !== 'f32' && dtype !== 'f64') throw new TypeError(`hostBuffer dtype must be 'f32' or 'f64', got ${String(dtype)}`);
    const host = HostBuffer.alloc(dtype, length, { device: this.#firstDevice, portable: this.devices.length > 1, label: `${this.label} lent ${dtype} x${length}` });
    const array = host.array as Float32Array | Float64Array;
    this.#shared.lent.set(array.buffer, host);
    return array;
  }

  /** Frees an array lent by hostBuffer() (no job reading it may be pending); true when it was one. */
  releaseHostBuffer(array: Float32Array | Float64Array): boolean {
    const host = this.#shared.lent.get(array.buffer);
    if (!host) return false;
    this.#shared.lent.delete(array.buffer);
    host.dispose();
    return true;
  }

  protected override disposeShared(): void {
    // After the lanes: their last copies were on these streams.
    for (const stream of this.#copyStreams) if (!stream.disposed) stream.dispose();
    for (const host of this.#shared.lent.values()) if (!host.disposed) host.dispose();
    this.#shared.lent.clear();
  }
}
