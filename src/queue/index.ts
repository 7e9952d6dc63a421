/**
 * `tscuda/queue`: the job engine across machines, on BullMQ over Redis. A GPU host runs
 * `runQueueWorker({ connection, engine })` (or `tscuda worker --redis URL`); any process submits
 * with `new JobQueue({ connection }).submit(spec)` and awaits `handle.result`, with the same
 * fields as the engine's result. Delivery is at-least-once (a job is started again when its worker
 * dies, up to its `attempts`), results are idempotent per job id. See docs/scale-out.md.
 */
export { JobQueue, newJobId, type JobQueueOptions, type QueueCounts, type SubmitOptions } from './job-queue.js';
export type { QueueFrontLimits } from './job-queue-options.js';
export { QueueJobHandle, type QueueJobProgress } from './handle.js';
export { runQueueWorker, type QueueJobSettled, type QueueWorker, type QueueWorkerOptions } from './worker.js';
export { registerQueueMetrics, type QueueMetricsSource } from './metrics.js';
export { checkRedis, describeConnection, type QueueConnection } from './connection.js';
export {
  QueueFullError,
  QueueJobCancelledError,
  QueueJobError,
  QueueUnavailableError,
  ResultTooLargeError,
  UnknownQueueJobError,
} from './errors.js';
export type { QueueJobResult, QueueJobStatus, QueueJobView } from './outcome.js';
export type { QueueRunInfo } from './codec.js';
export {
  DEFAULT_ATTEMPTS,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_INPUT_TTL_MS,
  DEFAULT_MAX_INPUT_BYTES,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_WAITING_BYTES,
  DEFAULT_MAX_WAITING_JOBS,
  DEFAULT_PREFIX,
  DEFAULT_PRIORITY,
  DEFAULT_QUEUE_NAME,
  DEFAULT_RESULT_TTL_MS,
  type RateLimit,
} from './options.js';
