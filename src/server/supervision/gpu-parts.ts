/**
 * The GPU side of a serve process: the job engine on this worker's device and the batchers of
 * the batch endpoints. Everything CUDA is imported here, lazily, so a machine without a GPU
 * (CudaUnavailableError) still gets a serving process without an engine.
 */
import type { JobEngineOptions } from '../../engine/types.js';
import type { BatchFactories } from '../batch.js';
import type { WorkerConfig } from './protocol.js';
import type { WorkerParts } from './worker.js';

/** The engine a serve worker builds (a JobEngine: JobEngineLike plus registerStage). */
export type ServeEngine = import('../../engine/job-engine.js').JobEngine;

/** Builds the engine and the batchers for one worker; throws (CudaUnavailableError, ...) without a GPU. */
export async function buildGpuParts(config: WorkerConfig): Promise<WorkerParts & { engine: ServeEngine }> {
  // Loaded here, not at the top: without a CUDA driver the import or the constructor throws,
  // and the caller serves without an engine.
  const { JobEngine } = await import('../../engine/job-engine.js');
  const device = config.device ?? config.devices?.[0] ?? 0;
  const options: JobEngineOptions = { device, label: `serve[${device}]` };
  if (config.lanes !== undefined) options.lanes = config.lanes;
  if (config.maxQueued !== undefined) options.maxQueued = config.maxQueued;
  if (config.precision !== undefined) options.precision = config.precision;
  const engine = new JobEngine(options);
  const [{ gradientBatcher, lerpBatcher, slerpBatcher }, { Device }] = await Promise.all([import('../../pipeline/batching/gpu-batcher.js'), import('../../runtime/device.js')]);
  const context = Device.get(device).context;
  const common = (dim: number, label: string) => ({ dim, label, context, maxBatchSize: config.batchMaxSize ?? 256, maxWaitMs: config.batchMaxWaitMs ?? 1, channelSize: 4096 });
  const batchers: BatchFactories = {
    gradient: (dim) => gradientBatcher(common(dim, 'gradient')),
    lerp: (dim) => lerpBatcher(common(dim, 'lerp')),
    slerp: (dim) => slerpBatcher(common(dim, 'slerp')),
  };
  const properties = Device.get(device).properties;
  return { engine, batchers, info: () => ({ devices: [{ ordinal: device, ...properties }] }) };
}

/** Driver answers that mean "this machine has no GPU for us", as opposed to a fault of this configuration. */
const NO_GPU_STATUSES: ReadonlySet<string> = new Set(['CUDA_ERROR_NO_DEVICE', 'CUDA_ERROR_INSUFFICIENT_DRIVER', 'CUDA_ERROR_SYSTEM_DRIVER_MISMATCH']);

/**
 * buildGpuParts, or a process without an engine when this machine has no GPU to give (no CUDA
 * driver or library, no visible device): the server then serves health (live 200, ready 503 with
 * the reason), info, metrics and 4xx. Any other failure (a device ordinal that does not exist, an
 * engine that cannot be built) is thrown: the worker fails its start and the service exits 1.
 */
export async function buildPartsOrNone(config: WorkerConfig): Promise<WorkerParts> {
  try {
    return await buildGpuParts(config);
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    const status = (error as { status?: unknown } | null)?.status;
    const message = error instanceof Error ? error.message : String(error);
    if (name === 'CudaUnavailableError') return { engine: null, unavailableReason: `no CUDA driver: ${message}` };
    if (typeof status === 'string' && NO_GPU_STATUSES.has(status)) return { engine: null, unavailableReason: `no usable CUDA device: ${message}` };
    throw error;
  }
}
