/**
 * The one mapping of a serve configuration (the CLI's options, a worker's TSCUDA_SERVE_CONFIG)
 * to createServer()'s options: `--workers 0` in the CLI and every supervised worker build their
 * server from it, so an option is mapped in one place. CUDA-free.
 */
import type { JobEngineLike } from '../../engine/types.js';
import { JobQueue } from '../../queue/index.js';
import { queueJobService } from '../queue-job-service.js';
import type { BatchFactories } from '../batch.js';
import type { CreateServerOptions, ServerLimits } from '../options.js';
import type { WorkerConfig } from './protocol.js';

/** What a serve process builds for its server: the engine (or none, and why), the batchers, extra flags, `/v1/info` fields. */
export interface ServeParts {
  engine: JobEngineLike | null;
  /** Why there is no engine, when there is none. */
  unavailableReason?: string | undefined;
  batchers?: BatchFactories | undefined;
  extraFlags?: readonly string[] | undefined;
  info?: (() => Record<string, unknown>) | undefined;
}

/** The limits a configuration sets (createServer's defaults fill the rest and check them). */
export function serverLimits(config: WorkerConfig): Partial<ServerLimits> {
  const limits: Partial<ServerLimits> = {};
  if (config.maxPending !== undefined) limits.maxPending = config.maxPending;
  if (config.maxEventLoopDelayMs !== undefined) limits.maxEventLoopDelayMs = config.maxEventLoopDelayMs;
  if (config.maxTurnMs !== undefined) limits.maxTurnMs = config.maxTurnMs;
  if (config.defaultTimeoutMs !== undefined) limits.defaultTimeoutMs = config.defaultTimeoutMs;
  if (config.bodyLimitBytes !== undefined) limits.bodyLimitBytes = config.bodyLimitBytes;
  if (config.jsonBodyLimitBytes !== undefined) limits.jsonBodyLimitBytes = config.jsonBodyLimitBytes;
  if (config.bodyTimeoutMs !== undefined) limits.bodyTimeoutMs = config.bodyTimeoutMs;
  if (config.maxBatchDelayMs !== undefined) limits.maxBatchDelayMs = config.maxBatchDelayMs;
  return limits;
}

/** The environment variable that shows process details (pid, memory, uptime) in `/v1/info` of `tscuda serve`: `1` (tests and operators; off by default). */
export const PROCESS_INFO_ENV = 'TSCUDA_SERVE_PROCESS_INFO';

/**
 * createServer()'s options for a serve process: its parts (engine, batchers, info; the server
 * owns the engine), its logging and its limits, and process details in `/v1/info` where
 * TSCUDA_SERVE_PROCESS_INFO=1 (inherited by the workers). With `redis` (`--redis URL`) the
 * process opens its own connection to the job queue, which `/v1/jobs` then goes through (the
 * server owns and closes it). A supervised worker adds what belongs to the cluster (job id
 * prefix, metrics labels, peers, remote jobs) on top.
 */
export function serverOptions(
  config: WorkerConfig,
  parts: ServeParts,
  env: NodeJS.ProcessEnv = process.env,
): CreateServerOptions {
  return {
    engine: parts.engine,
    ownsEngine: true,
    logger: config.log === true,
    limits: serverLimits(config),
    exposeProcessInfo: env[PROCESS_INFO_ENV] === '1',
    ...(parts.unavailableReason === undefined ? {} : { unavailableReason: parts.unavailableReason }),
    ...(parts.batchers === undefined ? {} : { batchers: parts.batchers }),
    ...(parts.extraFlags === undefined ? {} : { extraFlags: parts.extraFlags }),
    ...(parts.info === undefined ? {} : { info: parts.info }),
    ...(config.redis === undefined
      ? {}
      : {
          jobs: queueJobService(
            new JobQueue({
              connection: config.redis,
              name: config.queueName,
              prefix: config.queuePrefix,
              blobStores: config.blobRedis,
              ...config.queueLimits,
            }),
            { ownsQueue: true },
          ),
        }),
  };
}
