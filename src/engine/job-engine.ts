/**
 * The FFT job engine of seed 000 (GpuEngine) on the GPU: lanes (one compute stream each, with its
 * events and reused pinned/device buffers, sharing their device's two copy streams; a StreamPool
 * per device holds those streams) on one or several devices, over the CUDA-free core's queue, job
 * state machine and statistics.
 */
import { Device } from '../runtime/device.js';
import { resolvePlacement } from '../runtime/defaults.js';
import { HostBuffer } from '../runtime/memory/host-buffer.js';
import type { StreamPool } from '../orchestration/stream-pool.js';
import { deviceStreams, type DeviceStreams } from '../pipeline/lanes/device-streams.js';
import { coreOptions } from './capacity.js';
import { EngineCore } from './engine-core.js';
import { GpuLane } from './gpu-lane.js';
import type { LaneShared, LentType } from './lane-resources.js';
import { StageRegistry, type Stage } from './stages.js';
import type { EngineStats, JobData, JobEngineOptions, JobHalfType } from './types.js';
import { knownKeys, positiveInteger } from '../runtime/value-checks.js';

/** The element types hostBuffer() lends. */
const LENT_TYPES: readonly LentType[] = ['f32', 'f64', 'i16', 'f16', 'bf16'];

/** Default lanes (streams) per device. */
export const DEFAULT_LANES = 4;
/** Default jobs each lane holds on the GPU at once. */
export const DEFAULT_LANE_DEPTH = 2;
/** Default device memory one lane's chunk may use. */
export const DEFAULT_LANE_MEMORY_BYTES = 1 << 30;

/** Every option of JobEngineOptions (the compiler keeps this list whole). */
const OPTION_KEYS = {
  device: true,
  devices: true,
  context: true,
  lanes: true,
  laneDepth: true,
  precision: true,
  maxQueued: true,
  maxResultBytes: true,
  label: true,
  laneMemoryBytes: true,
  computeGraphs: true,
} as const satisfies Record<keyof JobEngineOptions, true>;

/**
 * Copy-in/copy-out stream pairs per device: 1, unless TSCUDA_ENGINE_COPY_PAIRS (1..8) says
 * otherwise. A knob for A/B runs (bench/probe/engine-copy-pairs.sh), not an option: on an H100,
 * 2 and 4 pairs moved the STFT jobs no more than run-to-run noise (bench/results/logs).
 */
function copyPairsFromEnvironment(): number {
  const text = process.env.TSCUDA_ENGINE_COPY_PAIRS;
  if (text === undefined || text === '') return 1;
  const pairs = Number(text);
  if (!Number.isSafeInteger(pairs) || pairs < 1 || pairs > 8)
    throw new RangeError(`TSCUDA_ENGINE_COPY_PAIRS must be an integer in 1..8, got ${JSON.stringify(text)}`);
  return pairs;
}

/**
 * The job engine: `submit()` a batch of series with flags (stft, cycles, wavelet, envelope,
 * decimate, registered stages; a `filter` first) and get a Job whose `result` settles when its lane's finished event completes.
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
  /** Each chunk's samples are searched for NaN and infinities on the GPU as they arrive (non-finite-check.ts). */
  readonly checksSamples = true;
  readonly #shared: LaneShared & { lent: Map<ArrayBufferLike, HostBuffer<LentType>> };
  readonly #firstDevice: number;
  readonly #lanes: readonly GpuLane[];
  /** Each device's streams (its copy streams and its lanes' compute streams). */
  readonly #streamPools: readonly StreamPool[];

  constructor(options: JobEngineOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError('JobEngine options must be an object');
    // A misspelt option (`lane: 8`) would silently mean its default.
    knownKeys(options, Object.keys(OPTION_KEYS), 'JobEngine options');
    // The core's own options first: nothing is made for an engine that its core would refuse.
    const { precision } = coreOptions(options);
    const perDevice = positiveInteger(options.lanes ?? DEFAULT_LANES, 'lanes');
    const laneMemoryBytes = options.laneMemoryBytes ?? DEFAULT_LANE_MEMORY_BYTES;
    if (!Number.isSafeInteger(laneMemoryBytes) || laneMemoryBytes < 1 << 16)
      throw new RangeError(`laneMemoryBytes must be an integer of at least 64 KiB, got ${String(laneMemoryBytes)}`);
    const laneDepth = options.laneDepth ?? DEFAULT_LANE_DEPTH;
    if (!Number.isSafeInteger(laneDepth) || laneDepth < 1 || laneDepth > 8)
      throw new RangeError(`laneDepth must be an integer in 1..8, got ${String(laneDepth)}`);
    // TSCUDA_COMPUTE_GRAPHS=0 turns them off for every engine of the process that does not say (A/B runs of a server or a bench).
    const computeGraphs = options.computeGraphs ?? process.env.TSCUDA_COMPUTE_GRAPHS !== '0';
    if (typeof computeGraphs !== 'boolean')
      throw new TypeError(`computeGraphs must be true or false, got ${String(computeGraphs)}`);
    const label = options.label ?? 'engine';
    const copyPairs = copyPairsFromEnvironment();
    const shared = {
      precision,
      stages: new StageRegistry(),
      lent: new Map<ArrayBufferLike, HostBuffer<LentType>>(),
      laneMemoryBytes,
      laneDepth,
      computeGraphs,
    };
    // The one placement rule (runtime/defaults.ts resolvePlacement): device | devices | context.
    const ordinals = resolvePlacement(options, `JobEngine "${label}"`).map((d) => d.ordinal);
    const lanes: GpuLane[] = [];
    const devices: DeviceStreams[] = [];
    try {
      // Lanes interleave devices (d0 l0, d1 l0, d0 l1, ...), so round robin on ties spreads over devices.
      const laneIndex = (l: number, d: number): number => l * ordinals.length + d;
      for (const [d, ordinal] of ordinals.entries()) {
        const laneLabels = Array.from({ length: perDevice }, (_, l) => `${label} lane ${laneIndex(l, d)}`);
        devices.push(deviceStreams(Device.get(ordinal).context, `${label} device ${ordinal}`, laneLabels, copyPairs));
      }
      for (let l = 0; l < perDevice; l++)
        for (const [d, ordinal] of ordinals.entries()) {
          const { copies, lanes: streams } = devices[d]!;
          lanes.push(
            new GpuLane(
              Device.get(ordinal).context,
              laneIndex(l, d),
              shared,
              label,
              copies[l % copies.length]!,
              streams[l]!,
            ),
          );
        }
    } catch (e) {
      for (const lane of lanes) lane.dispose();
      for (const { pool } of devices) pool.dispose();
      throw e;
    }
    super({ runners: lanes, precision, maxQueued: options.maxQueued, maxResultBytes: options.maxResultBytes, label });
    this.#lanes = lanes;
    this.#shared = shared;
    this.#streamPools = devices.map((d) => d.pool);
    this.#firstDevice = ordinals[0]!;
  }

  /** The core's statistics, with how the lanes ran their jobs' compute (graphs replayed, captured, or call by call). */
  override stats(): EngineStats {
    if (!this.#shared.computeGraphs) return super.stats();
    const computeGraphs = { eager: 0, captured: 0, replayed: 0 };
    for (const lane of this.#lanes) {
      const c = lane.computeModes;
      if (!c) continue;
      computeGraphs.eager += c.eager;
      computeGraphs.captured += c.captured;
      computeGraphs.replayed += c.replayed;
    }
    return { ...super.stats(), computeGraphs };
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
   * the lane copies it to the device without a host copy when `dtype` is the engine's precision
   * (or the job's 16-bit type: 'i16', 'f16', 'bf16'; f16/bf16 arrays hold raw bits). Arrays of the
   * job's result type passed in `into` are filled by the copy back itself. It stays valid until
   * `releaseHostBuffer(array)` or `close()`; do not write to it while a job that reads it is queued
   * or running.
   */
  hostBuffer(dtype: 'f32', length: number): Float32Array;
  hostBuffer(dtype: 'f64', length: number): Float64Array;
  hostBuffer(dtype: 'i16', length: number): Int16Array;
  hostBuffer(dtype: JobHalfType, length: number): Uint16Array;
  hostBuffer(dtype: LentType, length: number): JobData {
    if (this.closed) throw new Error(`engine "${this.label}" is closed: no more host buffers`);
    if (!LENT_TYPES.includes(dtype))
      throw new TypeError(`hostBuffer dtype must be one of ${LENT_TYPES.join(', ')}, got ${String(dtype)}`);
    const host = HostBuffer.alloc(dtype, length, {
      device: this.#firstDevice,
      portable: this.devices.length > 1,
      label: `${this.label} lent ${dtype} x${length}`,
    });
    const array = host.array as ArrayBufferView & { length: number };
    this.#shared.lent.set(array.buffer, host);
    // f16 where the runtime has Float16Array: the same memory as raw bits (the lent map is keyed by the ArrayBuffer).
    return array instanceof Uint16Array || dtype !== 'f16'
      ? (array as JobData)
      : new Uint16Array(array.buffer, array.byteOffset, array.length);
  }

  /** Frees an array lent by hostBuffer() (no job reading it may be pending); true when it was one. */
  releaseHostBuffer(array: JobData): boolean {
    const host = this.#shared.lent.get(array.buffer);
    if (!host) return false;
    this.#shared.lent.delete(array.buffer);
    host.dispose();
    return true;
  }

  protected override disposeShared(): void {
    // After the lanes: their last work (and their buffers' stream-ordered frees) was on these streams.
    for (const pool of this.#streamPools) if (!pool.disposed) pool.dispose();
    for (const host of this.#shared.lent.values()) if (!host.disposed) host.dispose();
    this.#shared.lent.clear();
  }
}
