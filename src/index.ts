/**
 * `tscuda`: the nouns a CUDA program in TypeScript needs (devices, streams, memory, kernels, FFT
 * plans, graphs, the stream pool and coordinator, the pipeline pieces, the job engine) and the
 * errors they raise. Everything else has a subpath (several GPUs: DevicePool and NCCL's
 * Communicator in `tscuda/orchestration`; the GPU batchers in `tscuda/pipeline`):
 * `tscuda/runtime` (the whole runtime: pools of events, 2-D copies, dtypes, ...), `tscuda/ffi`
 * (generated bindings and their checked forms), `tscuda/kernels` (typed launchers of the shipped
 * kernels), `tscuda/orchestration` (strategies, device pools, NCCL), `tscuda/signal` (scipy.signal
 * on the GPU), `tscuda/pipeline` (lanes, overlap, stages, batching), `tscuda/engine` (the FFT job engine)
 * and `tscuda/server` (the HTTP server).
 */
// The runtime: devices, streams, events, memory, modules and kernels, NVRTC, cuFFT, graphs.
export {
  Device,
  Context,
  Stream,
  Event,
  DeviceBuffer,
  HostBuffer,
  ManagedBuffer,
  MemoryPool,
  StagedBuffer,
  Module,
  Kernel,
  Program,
  FftPlan,
  FftPlanCache,
  fft,
  Graph,
  DisposedError,
  CompileError,
  ContextLostError,
  trimPinnedCache,
  toF16,
  fromF16,
  toBf16,
  fromBf16,
  resolvePlacement,
  PlacementError,
} from './runtime/index.js';
export type * from './runtime/index.js';
// Errors every layer raises.
export { CudaError, CudaUnavailableError } from './ffi/errors.js';
// Scripting without whole kernels (CuPy's ElementwiseKernel / ReductionKernel).
export { elementwise, reduction } from './kernels/index.js';
export type {
  ElementwiseDescriptor,
  ElementwiseFunction,
  ReductionDescriptor,
  ReductionFunction,
} from './kernels/index.js';
// Orchestration across streams.
export { StreamPool, Coordinator, Profiler, DevicePool } from './orchestration/index.js';
export type {
  DevicePoolDescriptor,
  DevicePlacement,
  StreamPoolDescriptor,
  CoordinatorDescriptor,
  OperationSpec,
  PoolStrategy,
  StreamPurpose,
  RunReport,
  TimelineRecord,
} from './orchestration/index.js';
// Lanes (work in overlapping stages: upload, compute, download), the pipelines built on them, and request batching.
export { Lane, TripleBuffer, AsyncCoordinator, StageManager, ManagedContext, Batcher } from './pipeline/index.js';
export type { BatcherDescriptor, BatchDispatch, LaneDescriptor, ManagedContextDescriptor } from './pipeline/index.js';
// The FFT job engine and the errors its submit() and jobs raise (a program that submits catches these).
export {
  JobEngine,
  JobValidationError,
  JobError,
  JobCancelledError,
  JobTimeoutError,
  EngineFullError,
  EngineClosedError,
  EngineLostError,
} from './engine/index.js';
export type { JobSpec, JobResult, Job, JobStatus, JobEngineOptions, EngineStats } from './engine/index.js';
