/**
 * BlobStores: the Redis servers that hold a queue's samples and results. By default that is the
 * queue's own Redis. Moving the bytes is most of Redis' work for large jobs (a 1 MiB job is 2 MiB
 * written and 2 MiB read, a MiB of it kept for resultTtlMs; measured on a 2-vCPU host with
 * bench/probe/queue-costs.ts: 7-8 ms of Redis CPU per 1 MiB job, of which 0.6-0.7 ms for the
 * queue's own scripts), and one Redis runs commands on one thread, so past one Redis' worth of
 * bytes per second the bytes go to several: a job's bytes live on the store its id picks, every
 * client and worker of the queue lists the same stores in the same order (a job records how many
 * its client listed, so a worker listing another number fails it with that reason).
 */
import type { BlobPool } from './blob-pool.js';
import { BlobPool as Pool } from './blob-pool.js';
import {
  answersWithin,
  checkConnection,
  checkDatabase,
  nextReady,
  PATIENT,
  type QueueConnection,
  type RedisPatience,
} from './connection.js';

/** Most blob stores of a queue. */
export const MAX_BLOB_STORES = 64;

/** Checks a `blobStores` option: the Redis connections, 1 .. MAX_BLOB_STORES of them; undefined means the queue's own. */
export function blobStoresOption(value: unknown, own: QueueConnection): QueueConnection[] {
  if (value === undefined) return [own];
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_BLOB_STORES)
    throw new TypeError(
      `blobStores must be a list of 1 to ${MAX_BLOB_STORES} Redis connections, got ${Array.isArray(value) ? `${value.length}` : typeof value}`,
    );
  return value.map((c, i) => checkConnection(c, `blobStores[${i}]`));
}

/** The store (0 .. count-1) that holds job `id`'s bytes: FNV-1a of the id (ids are random, so the jobs spread evenly). */
export function storeOf(id: string, count: number): number {
  if (count <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/** One BlobPool per store. */
export class BlobStores {
  readonly #pools: BlobPool[];
  readonly #connections: readonly QueueConnection[];

  constructor(
    connections: readonly QueueConnection[],
    name: string,
    connectionsPerStore: number,
    patience: RedisPatience = PATIENT,
  ) {
    this.#connections = connections;
    this.#pools = connections.map(
      (c, i) => new Pool(c, connections.length === 1 ? name : `${name}-s${i}`, connectionsPerStore, patience),
    );
  }

  /** How many stores. */
  get count(): number {
    return this.#pools.length;
  }

  /** The pool of the store that holds job `id`'s bytes. */
  forJob(id: string): BlobPool {
    return this.#pools[storeOf(id, this.#pools.length)]!;
  }

  /** Whether every store answers now. */
  get ready(): boolean {
    return this.#pools.every((p) => p.ready);
  }

  /** Resolves once every store is ready, or after `ms`, or once `signal` aborts (the owner closes). */
  async whenReady(ms: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (const pool of this.#pools) {
      if (pool.ready) continue;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted === true) return false;
      await nextReady(pool.control, left, signal);
    }
    return this.ready;
  }

  /**
   * Rejects with QueueUnavailableError when a store refuses the database its connection names
   * (checkDatabase); waits for a store that is away. Stores on database 0 are not asked.
   */
  async checkDatabases(): Promise<void> {
    await Promise.all(this.#pools.map((pool, i) => checkDatabase(pool.control, this.#connections[i]!)));
  }

  /** Pings every store within `timeoutMs`: true when all answered. */
  async ping(timeoutMs: number): Promise<boolean> {
    if (!this.ready) return false;
    return (await Promise.all(this.#pools.map((p) => answersWithin(p.control, timeoutMs)))).every(Boolean);
  }

  /** Drops every connection. */
  disconnect(): void {
    for (const pool of this.#pools) pool.disconnect();
  }
}
