/**
 * `tscuda/pipeline`: work in overlapping stages and request batching. A Lane is the one way tscuda
 * overlaps stages: a compute stream, copy streams and slots whose events order each piece of
 * work's upload, compute and download (the job engine's lanes and ManagedContext's steps are
 * Lanes; a TripleBuffer hands the same slots out by hand). The AsyncCoordinator and the
 * StageManager are fronts of orchestration's Coordinator, for dependency graphs of one-off
 * operations; the Batcher gathers small requests into batches.
 */
export { Lane, DEFAULT_LANE_SLOTS, MAX_LANE_SLOTS, type LaneDescriptor, type SlotWork } from './lanes/lane.js';
export { LaneBusyError } from './lanes/errors.js';
export type { LaneSlot } from './lanes/lane-slots.js';
export type { LaneView, PinnedArrays } from './lanes/lane-view.js';
export { deviceStreams, type CopyStreams, type DeviceStreams } from './lanes/device-streams.js';
export { ComputeGraphs, type ComputeMode } from './lanes/compute-graphs.js';
export {
  TripleBuffer,
  type TripleBufferSlot,
  type TripleBufferDescriptor,
  type TripleBufferOptions,
  type SlotState,
} from './overlap/triple-buffer.js';
export { StagedBuffer, type StagedBufferDescriptor, type StagedCopyOptions } from '../runtime/memory/staged-buffer.js';
export { AsyncCoordinator } from './async-coordinator.js';
export {
  type AsyncCoordinatorDescriptor,
  type AsyncCoordinatorOptions,
  type CoordinatorStreams,
} from './async-coordinator-descriptor.js';
export {
  type ComputeFn,
  type ComputeOptions,
  type AsyncOperationId,
  type AsyncOperationKind,
  type OperationOptions,
  type AsyncOperationStatus,
  type SettledAsyncOperation,
  type TransferOptions,
} from './async-operation.js';
export { AsyncOperationError, AsyncDependencyError } from './errors.js';
export { OperationError, DependencyFailedError, OperationTimeoutError } from '../orchestration/errors.js';
export {
  StageManager,
  type PipelineStage,
  type PipelineStats,
  type StageIO,
  type StageLaunch,
  type StageManagerDescriptor,
  type StageManagerOptions,
  type IterationResult,
} from './stages/stage-manager.js';
export {
  ManagedContext,
  type ManagedContextDescriptor,
  type ManagedContextOptions,
  type ManagedMode,
  type ManagedStreamPurpose,
  type StepDefinition,
  type StepIO,
  type ConfigSource,
  type TelemetryReader,
} from './overlap/managed-context.js';
export {
  Batcher,
  BatcherClosedError,
  BatcherDispatchError,
  BatcherFullError,
  BatcherTimeoutError,
  type BatchDispatch,
  type BatcherDescriptor,
  type CloseOptions,
  type BatchInfo,
  type BatcherMetrics,
  type BatcherOptions,
  type SubmitOptions,
  type AutoTuneOptions,
  type TunedParameters,
} from './batching/batcher.js';
export {
  createGradientDispatcher,
  createLerpDispatcher,
  createSlerpDispatcher,
  type GpuBatchDispatcher,
  type GradientDispatcherDescriptor,
  type GradientDispatcherOptions,
  type VectorDispatcherDescriptor,
  type VectorDispatcherOptions,
  type InterpolationItem,
} from './batching/batch-dispatchers.js';
export { GpuBatcher, gradientBatcher, lerpBatcher, slerpBatcher } from './batching/gpu-batcher.js';
