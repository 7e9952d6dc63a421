/**
 * Admission of jobs into the queue by what waits in Redis: a ledger beside BullMQ's keys lists
 * every job whose samples wait for a worker (its id, its bytes, when its samples expire), and one
 * script checks the limits and enters a job atomically, so fronts on any number of hosts never
 * admit past them together. A job leaves the ledger when a worker starts it, when it is cancelled
 * or withdrawn, and when its samples expire (each admission first drops the expired entries), so
 * the ledger is exact without any process having to stay alive for it.
 */
import type { Redis } from 'ioredis';

/** The ledger's keys: a sorted set of ids by expiry, a hash of ids to bytes, and the bytes' total. */
export interface LedgerKeys {
  expiries: string;
  sizes: string;
  total: string;
}

/** The ledger keys of queue `name` under `prefix`. */
export function ledgerKeys(prefix: string, name: string): LedgerKeys {
  const base = `${prefix}:${name}:admission`;
  return { expiries: `${base}:expiries`, sizes: `${base}:sizes`, total: `${base}:bytes` };
}

/** Expired entries dropped per admission at most (the rest go at the next ones): the script stays short. */
const EXPIRED_PER_ADMISSION = 256;

/** Drops one entry (ARGV[1]) from the ledger; 1 when it was there. Shared by both scripts. */
const RELEASE_LUA = `
local function release(id)
  local bytes = redis.call('HGET', KEYS[2], id)
  if bytes then
    redis.call('DECRBY', KEYS[3], bytes)
    redis.call('HDEL', KEYS[2], id)
  end
  return redis.call('ZREM', KEYS[1], id)
end
`;

/** ARGV: now, id, bytes, expiresAt, maxJobs, maxBytes. Returns {0, jobs, bytes} when admitted, {1, ...} over the jobs limit, {2, ...} over the bytes limit. */
const ADMIT_LUA = `${RELEASE_LUA}
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ${EXPIRED_PER_ADMISSION})
for _, id in ipairs(expired) do release(id) end
local jobs = redis.call('ZCARD', KEYS[1])
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
if jobs + 1 > tonumber(ARGV[5]) then return {1, jobs, total} end
if total + tonumber(ARGV[3]) > tonumber(ARGV[6]) then return {2, jobs, total} end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('INCRBY', KEYS[3], ARGV[3])
return {0, jobs + 1, total + tonumber(ARGV[3])}
`;

const LEAVE_LUA = `${RELEASE_LUA}
return release(ARGV[1])
`;

/** A client with the ledger's scripts defined (ioredis sends them by hash, loading them once). */
interface LedgerClient {
  tscudaAdmit(
    expiries: string,
    sizes: string,
    total: string,
    ...argv: (string | number)[]
  ): Promise<[number, number, number]>;
  tscudaLeave(expiries: string, sizes: string, total: string, id: string): Promise<number>;
}

function withScripts(client: Redis): LedgerClient {
  const c = client as Redis & Partial<LedgerClient>;
  if (c.tscudaAdmit === undefined) {
    client.defineCommand('tscudaAdmit', { numberOfKeys: 3, lua: ADMIT_LUA });
    client.defineCommand('tscudaLeave', { numberOfKeys: 3, lua: LEAVE_LUA });
  }
  return c as Redis & LedgerClient;
}

/** Why a job was not admitted, or null when it was (and is now in the ledger). */
export type Refusal =
  { limit: 'jobs'; waiting: number; max: number } | { limit: 'bytes'; waiting: number; max: number } | null;

/** The ledger of one queue on one Redis client. */
export class Admission {
  readonly #client: LedgerClient;
  readonly #keys: LedgerKeys;

  constructor(client: Redis, keys: LedgerKeys) {
    this.#client = withScripts(client);
    this.#keys = keys;
  }

  /** Enters job `id` with `bytes` of samples that expire after `ttlMs`, unless that would exceed `maxJobs` or `maxBytes` waiting. */
  async admit(id: string, bytes: number, ttlMs: number, maxJobs: number, maxBytes: number): Promise<Refusal> {
    const { expiries, sizes, total } = this.#keys;
    const now = Date.now();
    const [verdict, jobs, waitingBytes] = await this.#client.tscudaAdmit(
      expiries,
      sizes,
      total,
      now,
      id,
      bytes,
      now + ttlMs,
      maxJobs,
      maxBytes,
    );
    if (verdict === 1) return { limit: 'jobs', waiting: jobs, max: maxJobs };
    if (verdict === 2) return { limit: 'bytes', waiting: waitingBytes, max: maxBytes };
    return null;
  }

  /** Takes job `id` out of the ledger (started, cancelled, withdrawn); true when it was there. */
  async leave(id: string): Promise<boolean> {
    const { expiries, sizes, total } = this.#keys;
    return (await this.#client.tscudaLeave(expiries, sizes, total, id)) === 1;
  }
}
