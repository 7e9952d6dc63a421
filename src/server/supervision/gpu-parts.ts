/**
 * The GPU side of a serve process: the job engine on this process's devices (one worker's
 * device, or every device of `--workers 0 --devices 0,1`) and the batchers of the batch
 * endpoints. Everything CUDA is imported here, lazily, so a machine without a GPU still gets a
 * serving process without an engine.
 */
import type { JobEngineOptions } from '../../engine/types.js';
import type { BatchFactories } from '../batch.js';
import type { WorkerConfig } from './protocol.js';
import type { WorkerParts } from './worker.js';
import { isCudaUnavailable, noDriverReason } from '../../runtime/unavailable.js';

/** The engine a serve worker builds (a JobEngine: JobEngineLike plus registerStage). */
export type ServeEngine = import('../../engine/job-engine.js').JobEngine;

/**
 * Builds the engine over `config.devices` (resolved by the one placement rule inside JobEngine:
 * a device the machine lacks, or one listed twice, throws PlacementError) and the batchers, on
 * the engine's first device; throws (CudaUnavailableError, ...) without a GPU.
 */
export async function buildGpuParts(config: WorkerConfig): Promise<WorkerParts & { engine: ServeEngine }> {
  // Loaded here, not at the top: without a CUDA driver the import or the constructor throws,
  // and the caller serves without an engine.
  const { JobEngine } = await import('../../engine/job-engine.js');
  const devices = config.devices;
  const options: JobEngineOptions = {
    devices,
    label: `serve[${devices === undefined ? '' : devices === 'all' ? 'all' : devices.join(',')}]`,
  };
  if (config.lanes !== undefined) options.lanes = config.lanes;
  if (config.maxQueued !== undefined) options.maxQueued = config.maxQueued;
  if (config.precision !== undefined) options.precision = config.precision;
  const engine = new JobEngine(options);
  try {
    const [{ gradientBatcher, lerpBatcher, slerpBatcher }, { Device }] = await Promise.all([
      import('../../pipeline/batching/gpu-batcher.js'),
      import('../../runtime/device.js'),
    ]);
    // The batchers' small vectors gain nothing from a second GPU: they run on the engine's first device.
    const context = Device.get(engine.devices[0]!).context;
    const common = (dim: number, label: string) => ({
      dim,
      label,
      context,
      maxBatchSize: config.batchMaxSize ?? 256,
      maxWaitMs: config.batchMaxWaitMs ?? 1,
      channelSize: 4096,
    });
    const batchers: BatchFactories = {
      gradient: (dim) => gradientBatcher(common(dim, 'gradient')),
      lerp: (dim) => lerpBatcher(common(dim, 'lerp')),
      slerp: (dim) => slerpBatcher(common(dim, 'slerp')),
    };
    const properties = new Map(engine.devices.map((d) => [d, Device.get(d).properties] as const));
    return { engine, batchers, info: () => ({ devices: deviceInfo(engine, properties) }) };
  } catch (error) {
    await engine.close();
    throw error;
  }
}

/** Every device of the engine for `/v1/info`: its properties, its lanes and what they ran (engine.stats().devices). */
function deviceInfo(engine: ServeEngine, properties: ReadonlyMap<number, object>): Record<string, unknown>[] {
  let stats: ReturnType<ServeEngine['stats']>['devices'] = [];
  try {
    stats = engine.stats().devices;
  } catch {
    // Statistics are a courtesy here: info still lists the devices.
  }
  return engine.devices.map((ordinal) => {
    const s = stats.find((d) => d.device === ordinal);
    return {
      ordinal,
      ...properties.get(ordinal),
      ...(s === undefined ? {} : { lanes: s.lanes, jobs: s.jobs, errors: s.errors }),
    };
  });
}

/** Driver answers that mean "this machine has no GPU for us", as opposed to a fault of this configuration. */
const NO_GPU_STATUSES: ReadonlySet<string> = new Set([
  'CUDA_ERROR_NO_DEVICE',
  'CUDA_ERROR_INSUFFICIENT_DRIVER',
  'CUDA_ERROR_SYSTEM_DRIVER_MISMATCH',
]);

/**
 * buildGpuParts, or a process without an engine when this machine has no GPU to give (no CUDA
 * driver or library, no visible device): the server then serves health (live 200, ready 503 with
 * the reason), info, metrics and 4xx. Any other failure (a device ordinal that does not exist, an
 * engine that cannot be built) is thrown: the worker fails its start and the service exits 1.
 */
export async function buildPartsOrNone(config: WorkerConfig): Promise<WorkerParts> {
  try {
    // Asked first: the placement rule refuses "no device visible" like a missing ordinal, but a
    // machine without a GPU serves without an engine, it does not fail its start.
    const { Device } = await import('../../runtime/device.js');
    const availability = Device.available();
    if (!availability.ok) return { engine: null, unavailableReason: `no usable CUDA device: ${availability.reason}` };
    return await buildGpuParts(config);
  } catch (error) {
    const status = (error as { status?: unknown } | null)?.status;
    const message = error instanceof Error ? error.message : String(error);
    if (isCudaUnavailable(error)) return { engine: null, unavailableReason: noDriverReason(error) };
    if (typeof status === 'string' && NO_GPU_STATUSES.has(status))
      return { engine: null, unavailableReason: `no usable CUDA device: ${message}` };
    throw error;
  }
}
