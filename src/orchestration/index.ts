/**
 * `tscuda/orchestration`: streams and dependency graphs for user-defined work. The StreamPool
 * (streams by purpose and priority, strategies, metrics; the job engine keeps each device's lane
 * streams in one), the Coordinator (a dependency-graph scheduler for one-off operations across
 * streams: events and cuStreamWaitEvent, host steps, capture into a graph), the DevicePool (work
 * placed across GPUs), the Profiler (GPU timelines) and NCCL's communicators. The job engine uses
 * only the StreamPool; the one way tscuda runs work in overlapping stages (upload, compute,
 * download) is a Lane of `tscuda/pipeline`.
 */
export { StreamPool, type StreamPoolDescriptor, type StreamSpec, type PoolSubmitOptions } from './stream-pool.js';
export { type SettleListener, type StreamMetrics } from './pool-member.js';
export {
  chooseStream,
  recommendStrategy,
  assignWorkloads,
  WORKLOAD_PURPOSES,
  type PoolStrategy,
  type PriorityLevel,
  type StreamPurpose,
  type StreamRequest,
  type WorkloadType,
  type WorkloadAssignments,
  type StreamLoad,
} from './strategy.js';
export { Coordinator } from './coordinator.js';
export { type CoordinatorDescriptor } from './coordinator-descriptor.js';
export {
  type OperationSpec,
  type OperationState,
  type SettledOperation,
  type CompletedOperation,
} from './operation.js';
export { OperationError, DependencyFailedError, OperationTimeoutError, OperationForgottenError } from './errors.js';
export { CycleError, addEdge, topologicalOrder } from './dag.js';
export {
  StreamOrderedAllocator,
  type AllocatorStats,
  type StreamOrderedAllocatorDescriptor,
} from '../runtime/memory/allocator.js';
export { sizeClass, MIN_CLASS_BYTES } from '../runtime/memory/size-classes.js';
export { Profiler, type ProfileToken, type ProfilerDescriptor } from './profiler.js';
export type { TimelineRecord, RunReport, OperationKind, StreamReport } from '../report/timeline.js';
export { DevicePool, type DevicePoolDescriptor, type DeviceMetrics, type DeviceStreamRequest } from './device-pool.js';
export {
  chooseDevice,
  checkPlacement,
  resolveDeviceList,
  DEVICE_PLACEMENTS,
  type DevicePlacement,
  type DeviceLoad,
} from './device-placement.js';
// NCCL's safe layer (communicators and their collectives, unique ids, groups) lives in runtime/nccl, beside cuFFT's; orchestration, which coordinates work across devices, keeps exporting it.
export * from '../runtime/nccl/index.js';
