export { TripleBuffer, type TripleBufferSlot, type TripleBufferOptions, type StagedBuffer, type SlotState } from './overlap/triple-buffer.js';
export {
  AsyncCoordinator,
  type AsyncCoordinatorDescriptor,
  type AsyncCoordinatorOptions,
  type ComputeFn,
  type ComputeOptions,
  type CoordinatorStreams,
  type AsyncOperationId,
  type AsyncOperationKind,
  type OperationOptions,
  type AsyncOperationStatus,
  type SettledAsyncOperation,
  type TransferOptions,
} from './async-coordinator.js';
export { AsyncOperationError, AsyncDependencyError } from './errors.js';
export { OperationError, DependencyFailedError, OperationTimeoutError } from '../orchestration/errors.js';
export { StageManager, type PipelineStage, type PipelineStats, type StageIO, type StageLaunch, type StageManagerOptions, type IterationResult } from './stages/stage-manager.js';
export {
  ManagedContext,
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
  type BatchDispatch,
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
  type GradientDispatcherOptions,
  type VectorDispatcherOptions,
  type InterpolationItem,
} from './batching/batch-dispatchers.js';
export { GpuBatcher, gradientBatcher, lerpBatcher, slerpBatcher } from './batching/gpu-batcher.js';
