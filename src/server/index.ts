/** tscuda/server: the embeddable HTTP server over the job engine and the batchers. */
export {
  createServer,
  DEFAULT_LIMITS,
  type CreateServerOptions,
  type LoadSample,
  type PinoOptions,
  type ServerLimits,
  type TscudaServer,
} from './create-server.js';
export type { JobAnswer, JobView, RemoteJobs } from './options.js';
export {
  localJobService,
  newJobId,
  type JobService,
  type JobServiceContext,
  type SubmittedJob,
} from './job-service.js';
export { queueJobService, queueNotReadyReason, type QueueJobServiceOptions } from './queue-job-service.js';
export { ROUTES, type RouteModule } from './routes/index.js';
// The decorators of the server's plugins, which routes and plugins registered on `server.app` use.
export type { ServerConfig } from './plugins/config.js';
export type { FailureAccounting } from './plugins/accounting.js';
export type { Batchers } from './plugins/batchers.js';
export type { PooledBodies } from './plugins/bodies.js';
export type { EngineDescription, Gpu } from './plugins/gpu.js';
export type { Shedding } from './shedding/index.js';
export { HttpError, toHttpError, internalError, isContextLoss, type ErrorBody, type FailureReason } from './errors.js';
export {
  BATCH_KINDS,
  parseBatchItems,
  type BatchFactories,
  type BatchItems,
  type BatchKind,
  type BatchSubmitter,
  type InterpolationInput,
} from './batch.js';
export {
  decodeBinarySignal,
  decodeJsonSignal,
  encodeBinaryResult,
  encodeJsonResult,
  parseFieldsHeader,
  responseFormat,
  ARRAY_FIELDS,
  DTYPE_BYTES,
  type FieldLayout,
  type ResponseFormat,
} from './codec.js';
export {
  parseJobParams,
  paramsFromStrings,
  headerParams,
  JOB_PARAMETERS,
  BUILTIN_FLAGS,
  type RawParams,
  type SampleDtype,
} from './params.js';
export { JobStore, type JobRecord, type JobRetention } from './jobs.js';
export { ServerMetrics } from './metrics.js';
export type { LoopSample } from './shedding/admission.js';
export { defaultWorkerCount, WORKERS_PER_GPU } from './supervision/default-workers.js';
