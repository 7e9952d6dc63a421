/**
 * `tscuda serve --redis`: the queue front's own flags (its bounds on Redis), their usage lines,
 * and the line said at start when the queue's Redis has no memory limit.
 */
import { Redis } from 'ioredis';
import { describeConnection, type QueueConnection } from '../../queue/connection.js';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_INPUT_TTL_MS,
  DEFAULT_MAX_WAITING_BYTES,
  DEFAULT_MAX_WAITING_JOBS,
  MAX_TTL_MS,
} from '../../queue/options.js';
import type { QueueFrontLimits } from '../../queue/job-queue-options.js';
import { intOption, UsageError } from '../options.js';

/** The usage lines of the queue front's flags. */
export const QUEUE_FRONT_USAGE = `  --command-timeout MS
                      with --redis: how long a request waits for Redis before 503
                      queue_unavailable, and readiness turns 503 (default ${DEFAULT_COMMAND_TIMEOUT_MS})
  --max-waiting-jobs N
                      with --redis: jobs waiting for a worker before 429 queue_full
                      (default ${DEFAULT_MAX_WAITING_JOBS})
  --max-waiting-mb MB with --redis: MiB of samples waiting in Redis before 429 queue_full
                      (default ${DEFAULT_MAX_WAITING_BYTES / 2 ** 20})
  --input-ttl MS      with --redis: how long a job waits for a worker before it and its
                      samples expire (default ${DEFAULT_INPUT_TTL_MS}, 24 h)`;

/** The queue front's flags for parseCommandLine. */
export const QUEUE_FRONT_FLAGS = {
  'command-timeout': { type: 'string' },
  'max-waiting-jobs': { type: 'string' },
  'max-waiting-mb': { type: 'string' },
  'input-ttl': { type: 'string' },
} as const;

/** The queue front's flags as JobQueue options (undefined for the defaults); each needs --redis. */
export function queueFrontLimits(
  values: Partial<Record<keyof typeof QUEUE_FRONT_FLAGS, string>>,
  redis: string | undefined,
): QueueFrontLimits | undefined {
  const given = (Object.keys(QUEUE_FRONT_FLAGS) as (keyof typeof QUEUE_FRONT_FLAGS)[]).filter(
    (name) => values[name] !== undefined,
  );
  if (given.length === 0) return undefined;
  if (redis === undefined) throw new UsageError(`--${given[0]} needs --redis`);
  const waitingMb = intOption('max-waiting-mb', values['max-waiting-mb'], 1, 2 ** 20);
  return {
    commandTimeoutMs: intOption('command-timeout', values['command-timeout'], 10, 600_000),
    maxWaitingJobs: intOption('max-waiting-jobs', values['max-waiting-jobs'], 1, 1e9),
    maxWaitingBytes: waitingMb === undefined ? undefined : waitingMb * 2 ** 20,
    inputTtlMs: intOption('input-ttl', values['input-ttl'], 1, MAX_TTL_MS),
  };
}

/**
 * One line when the queue's Redis has no `maxmemory` (it would grow until the host runs out), or
 * evicts keys (it would drop queued jobs); undefined when it is set with `noeviction`, or when
 * Redis does not say (CONFIG refused by an ACL, a managed Redis).
 */
export async function redisMemoryWarning(connection: QueueConnection, timeoutMs = 2000): Promise<string | undefined> {
  const options = {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    enableOfflineQueue: false,
  };
  const client =
    typeof connection === 'string' ? new Redis(connection, options) : new Redis({ ...connection, ...options });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const [, maxmemory] = (await client.config('GET', 'maxmemory')) as [string, string];
    const [, policy] = (await client.config('GET', 'maxmemory-policy')) as [string, string];
    const where = describeConnection(connection);
    const advice = 'set maxmemory and maxmemory-policy noeviction (docs/scale-out.md, "Redis memory")';
    if (maxmemory === '0')
      return `Redis at ${where} has no maxmemory: queued samples can fill the host's memory; ${advice}`;
    if (policy !== 'noeviction')
      return `Redis at ${where} evicts keys (maxmemory-policy ${policy}): queued jobs can be dropped; ${advice}`;
    return undefined;
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}
