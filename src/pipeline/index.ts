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
