/**
 * `tscuda/engine`: the FFT job engine (seed 000's GpuEngine). `new JobEngine(options)`, `submit`
 * jobs with flags (stft, cycles, wavelet, envelope, decimate, registered stages; a `filter`
 * before them all), await `job.result`, read `stats()`, `close()` to drain. The CUDA-free parts (validation, errors, core, chunk planning, statistics)
 * are exported too, for servers and tests that do not load CUDA.
 */
export type {
  Band,
  BuiltinJobFlag,
  DominantCycle,
  EngineStats,
  Job,
  JobEngineLike,
  JobEngineOptions,
  JobFlag,
  JobData,
  JobDataType,
  JobHalfType,
  JobOutputArrays,
  JobFilter,
  JobParameters,
  FilterBandType,
  FilterDesign,
  OutputArray,
  ParameterValue,
  WaveArray,
  JobResult,
  JobSpec,
  JobStatus,
  LaneStats,
  DeviceStats,
  WindowSpec,
} from './types.js';
export { JobEngine, DEFAULT_LANES, DEFAULT_LANE_DEPTH, DEFAULT_LANE_MEMORY_BYTES } from './job-engine.js';
export { EngineCore, type EngineCoreOptions } from './engine-core.js';
export {
  EngineClosedError,
  EngineFullError,
  EngineLostError,
  JobCancelledError,
  JobError,
  JobTimeoutError,
  JobValidationError,
  ResultTooLargeError,
  isStickyError,
} from './errors.js';
export { allFinite, checkFiniteSamples, firstNonFinite } from './finite-samples.js';
export { StageRegistry, StageRegistrationError, type Stage, type StageContext, type StagePlacement } from './stages.js';
export {
  validateJob,
  validateJobParameters,
  checkSampleTypes,
  resolveJobWindow,
  jobSamples,
  BUILTIN_FLAGS,
  MIN_SERIES_LENGTH,
  type NormalizedJob,
  type NormalizedFilter,
  type NormalizedParameters,
  type JobFraming,
  type ValidationContext,
  type ResolvedWindow,
} from './validate.js';
export {
  JOB_FLAGS,
  JOB_OUTPUTS,
  JOB_PARAMETER_TABLE,
  JOB_PARAMETER_NAMES,
  RESULT_ARRAY_FIELDS,
  flagDef,
  outputDef,
  parameterDef,
  parameterOfField,
  type FlagDef,
  type JobParameterName,
  type NormalForm,
  type OutputDef,
  type OutputElement,
  type OutputLayout,
  type ParameterDef,
  type ParameterSource,
  type ParameterType,
  type ResultArrayField,
  type ResultShapeOf,
} from './parameters.js';
export type { JobFlagSet } from './normalized-job.js';
export {
  FILTER_BAND_TYPES,
  FILTER_DESIGNS,
  DEFAULT_FILTER_ORDER,
  DEFAULT_RIPPLE_DB,
  DEFAULT_ATTENUATION_DB,
  MAX_JOB_TAPS,
} from './job-filter.js';
export {
  allocateOutputs,
  runsAlone,
  type JobOutputs,
  type JobProgress,
  type LaneChunk,
  type LaneChunkOutcome,
  type LaneRunner,
} from './lane-runner.js';
export { DEFAULT_MAX_RESULT_BYTES } from './capacity.js';
export {
  planRowChunks,
  planFrameChunks,
  minChunkFrames,
  type RowChunk,
  type FrameChunk,
  type FrameLayout,
} from './chunks.js';
export { RecentValues, LaneStatsRecorder, engineStats, percentileOf, STATS_WINDOW, type JobSample } from './stats.js';
export { GpuLane } from './gpu-lane.js';
export type { LaneShared, LentType } from './lane-resources.js';
export type { CopyStreams } from '../pipeline/lanes/device-streams.js';
