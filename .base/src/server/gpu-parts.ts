/**
 * The GPU side of a serve process: the job engine on this worker's device and the batchers of
 * the batch endpoints. Everything CUDA is imported here, lazily, so a machine without a GPU
 * (CudaUnavailableError) still gets a serving process without an engine.
 */
import type { JobEngineOptions } from '../engine/types.js';
import type { BatchFactories } from './batch.js';
import type { WorkerConfig } from './protocol.js';
import type { WorkerParts } from './worker.js';

/** The engine a serve worker builds (a JobEngine: JobEngineLike plus registerStage). */
export type ServeEngine = import('../engine/job-engine.js').JobEngine;

/** Builds the engine and the batchers for one worker; throws (CudaUnavailableError, ...) without a GPU. */
export async function buildGpuParts(config: WorkerConfig): Promise<WorkerParts & { engine: ServeEngine }> {
  // Loaded here, not at the top: without a CUDA driver the import or the constructor throws,
  // and the caller serves without an engine.
  const { JobEngine } = await import('../engine/job-engine.js');
  const device = config.device ?? config.devices?.[0] ?? 0;
  const options: JobEngineOptions = { device, label: `serve[${device}]` };
  if (config.lanes !== undefined) options.lanes = config.lanes;
  if (config.maxQueued !== undefined) options.maxQueued = config.maxQueued;
  if (config.precision !== undefined) options.precision = config.precision;
  const engine = new JobEngine(options);
  const [{ gradientBatcher, lerpBatcher, slerpBatcher }, { Device }] = await Promise.all([import('../pipeline/batching/gpu-batcher.js'), import('../runtime/device.js')]);
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

/** buildGpuParts, or a process without an engine and the reason (no driver, no device). */
export async function buildPartsOrNone(config: WorkerConfig): Promise<WorkerParts> {
  try {
    return await buildGpuParts(config);
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    const message = error instanceof Error ? error.message : String(error);
    return { engine: null, unavailableReason: name === 'CudaUnavailableError' ? `no CUDA driver: ${message}` : `no GPU engine: ${message}` };
  }
}
