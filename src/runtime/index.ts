export {
  Device,
  driverVersion,
  type DeviceAvailability,
  type OptionalLibrary,
  type DeviceProperties,
  type ComputeCapability,
} from './device.js';
export { Context } from './context.js';
export { Stream, resolveStream, type StreamDescriptor, type StreamPriority } from './stream.js';
export { Event, EventPool, type EventDescriptor } from './event.js';
export { CompletionPoller } from './completion.js';
export { DeviceBuffer, type DeviceBufferDescriptor } from './memory/device-buffer.js';
export type { CopyOptions } from './memory/copy-options.js';
export { HostBuffer, type HostBufferDescriptor } from './memory/host-buffer.js';
export { MemoryPool, type MemoryPoolDescriptor, type MemoryPoolUsage } from './memory/memory-pool.js';
export { Module, type ModuleDescriptor } from './module.js';
export {
  Kernel,
  type KernelParamType,
  type KernelArg,
  type LaunchConfig,
  type ExtendedLaunchConfig,
  type KernelAttributes,
  type Dim3,
} from './kernel.js';
export { DTYPES, type DType, type HostArray, type Float16ArrayLike } from './memory/dtype.js';
export { toF16, fromF16, toF16Bits, toBf16, fromBf16, f16Bits, f16Value, bf16Bits, bf16Value } from './memory/half.js';
export { Resource, DisposedError } from './resource.js';
export { ContextLostError } from './lost.js';
export { checkTimeoutMs, MAX_TIMEOUT_MS } from './timeout.js';
export { ManagedBuffer, type MemoryAdvice } from './memory/managed-buffer.js';
export { allocPitched, copy2D, type PitchedBuffer, type Copy2D } from './memory/copy-2d.js';
export {
  Program,
  CompiledProgram,
  CompileError,
  nvrtcVersion,
  nvrtcSupportedArchs,
  type ProgramDescriptor,
  type CompileOptions,
  type ProgramImageKind,
} from './program.js';
export { clearProgramMemoryCache, cacheDirectory } from './program-cache.js';
export { FftPlan, type FftExecOptions } from './fft/plan.js';
export {
  COMPLEX_OF,
  realToComplexType,
  complexToRealType,
  complexType,
  type Precision,
  type ComplexOf,
  type RealToComplex,
  type ComplexToReal,
  type ComplexToComplex,
} from './fft/precision.js';
export {
  DEFAULT_MAX_FFT_PLANS,
  FftPlanCache,
  fft,
  fftPlans,
  type FftCallOptions,
  type FftPlanCacheOptions,
} from './fft/plan-cache.js';
export type {
  FftPlanDescriptor,
  FftType,
  FftLayout,
  FftDirection,
  FftGeometry,
  FftInput,
  FftOutput,
  FftDtypes,
} from './fft/geometry.js';
export { Graph, GraphExec, type CaptureMode } from './graph.js';
export { PeerAccessUnsupportedError, type PeerAccessOptions } from './peer.js';
export { StagedBuffer, type StagedBufferDescriptor, type StagedCopyOptions } from './memory/staged-buffer.js';
export {
  BufferCache,
  DEFAULT_BUFFER_GROWTH,
  type BufferCacheDescriptor,
  type CachedDeviceOptions,
} from './memory/buffer-cache.js';
export { trimPinnedCache, pinnedCacheBytes } from './memory/pinned-cache.js';
export { resolvePlacement, type Placement, type DevicesPlacement } from './defaults.js';
export {
  selectDevices,
  parseDeviceList,
  PlacementError,
  type OrdinalPlacement,
  type PlacementFallback,
} from './placement-rules.js';
// NCCL's safe layer (several GPUs, several processes); tscuda/orchestration exports it too.
export * from './nccl/index.js';
