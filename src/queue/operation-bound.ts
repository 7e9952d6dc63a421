/**
 * OperationBound: how long a JobQueue operation may wait for Redis, and what it says when Redis
 * is away or silent. Each operation (submit, view, cancel, forget, counts, ready) settles within
 * `commandTimeoutMs` (a submit gets time for its transfer on top): it is refused at once while the
 * client is closed or Redis was seen silent, after a short wait while a connection comes up, and
 * with QueueUnavailableError when no answer comes in time, which also makes the client unreachable
 * until Redis answers a probe again (liveness.ts). The clients are bounded too (ioredis'
 * `commandTimeout`, no offline queue: connection.ts), so a command given up on does not linger.
 */
import type { Redis } from 'ioredis';
import type { BlobStores } from './blob-stores.js';
import { answersWithin, isAuthRefusal, lastRedisError, readyWithin, redisFailure } from './connection.js';
import { QueueUnavailableError } from './errors.js';
import { Liveness } from './liveness.js';

/** How long an operation waits for Redis when it is not connected (a new client, a reconnection) before refusing, ms (at most its bound). */
export const CONNECT_WAIT_MS = 2000;

/** Names of the errors an operation passes on as they are; any other error of Redis or of a connection is a QueueUnavailableError. */
const OWN_ERRORS = new Set([
  'QueueUnavailableError',
  'QueueFullError',
  'JobCancelledError',
  'UnknownQueueJobError',
  'JobValidationError',
  'ResultTooLargeError',
]);

/** What the bound watches. */
export interface BoundTarget {
  /** The queue's name and where its Redis is, for messages. */
  name: string;
  where: string;
  queueRedis: Redis;
  stores: BlobStores;
  commandTimeoutMs: number;
  /** Aborted when the client closes: a wait for Redis ends at once. */
  closeSignal: AbortSignal;
}

/** The bound of a JobQueue's operations (see the file's comment). */
export class OperationBound {
  readonly #t: BoundTarget;
  readonly #liveness: Liveness;

  constructor(target: BoundTarget) {
    this.#t = target;
    this.#liveness = new Liveness(
      { connected: () => this.connected(), probe: (ms) => this.probe(ms) },
      target.commandTimeoutMs,
    );
  }

  /** Whether the client is open, its connections are up and Redis answers. */
  get reachable(): boolean {
    return !this.#t.closeSignal.aborted && this.connected() && this.#liveness.answering;
  }

  /** The connections are up (Redis may still not answer: `reachable` says whether it does). */
  connected(): boolean {
    return this.#t.queueRedis.status === 'ready' && this.#t.stores.ready;
  }

  /** Pings the queue's Redis and every blob store within `timeoutMs`: true when all answered (never rejects). */
  async probe(timeoutMs: number): Promise<boolean> {
    const [queue, stores] = await Promise.all([
      answersWithin(this.#t.queueRedis, timeoutMs),
      this.#t.stores.ping(timeoutMs),
    ]);
    return queue && stores;
  }

  /** Stops the probes. */
  close(): void {
    this.#liveness.close();
  }

  /**
   * Runs `op` within `commandTimeoutMs` + `extraMs` (the connection's wait included); see the
   * file's comment. Every call settles within the bound. `abandoned` aborts when the call gave up:
   * an op of several steps checks it before a step that changes something (a cancel must not
   * happen after its call said Redis was unavailable).
   */
  async run<T>(what: string, op: (abandoned: AbortSignal) => Promise<T>, extraMs = 0): Promise<T> {
    const closed = this.#t.closeSignal;
    if (closed.aborted) throw this.unavailable(what);
    const boundMs = this.#t.commandTimeoutMs + extraMs;
    const start = performance.now();
    // Silent, or refusing the password: waiting for the connection would not change the answer.
    if (!this.#liveness.answering && this.connected()) throw this.unavailable(what);
    if (!this.connected() && isAuthRefusal(lastRedisError(this.#t.queueRedis)?.message ?? ''))
      throw this.unavailable(what);
    if (!(await this.#connectedWithin(Math.min(CONNECT_WAIT_MS, boundMs)))) throw this.unavailable(what);
    let timer: NodeJS.Timeout | undefined;
    const abandoned = new AbortController();
    const silent = new Promise<never>((_, reject) => {
      const left = Math.max(0, boundMs - (performance.now() - start));
      timer = setTimeout(() => {
        this.#liveness.stalled();
        abandoned.abort();
        reject(this.unavailable(what, boundMs));
      }, left);
    });
    try {
      return await Promise.race([op(abandoned.signal), silent]);
    } catch (error) {
      if (error instanceof Error && OWN_ERRORS.has(error.name)) throw error;
      if (closed.aborted) throw this.unavailable(what);
      const message = error instanceof Error ? error.message : String(error);
      throw new QueueUnavailableError(`Redis at ${this.#t.where} failed (${what}): ${message}; retry later`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The QueueUnavailableError of an operation (`what`) refused because the client is closed, or Redis is away or silent (for `silentMs`), with what Redis last said. */
  unavailable(what: string, silentMs?: number): QueueUnavailableError {
    const t = this.#t;
    if (t.closeSignal.aborted) return new QueueUnavailableError(`queue ${t.name} is closed (${what})`);
    if (silentMs !== undefined)
      return new QueueUnavailableError(
        `Redis at ${t.where} did not answer within ${silentMs} ms (commandTimeoutMs; ${what}); retry later`,
      );
    const last = lastRedisError(t.queueRedis);
    // A refused password is said to be one, without the retry advice: retrying will not help.
    if (last !== undefined && isAuthRefusal(last.message))
      return new QueueUnavailableError(`${redisFailure(t.where, last)} (${what})`, { cause: last });
    if (!this.connected())
      return new QueueUnavailableError(`${redisFailure(t.where, last)} (${what}); retry later`, { cause: last });
    return new QueueUnavailableError(
      `Redis at ${t.where} is not answering (no answer within ${t.commandTimeoutMs} ms to a probe or an operation; ${what}); retry later`,
    );
  }

  /** Whether the connections are up now or come up within `ms` (a new client's first connection, a reconnection under way). */
  async #connectedWithin(ms: number): Promise<boolean> {
    if (this.connected()) return true;
    const deadline = Date.now() + ms;
    const signal = this.#t.closeSignal;
    await readyWithin(this.#t.queueRedis, ms, signal);
    await this.#t.stores.whenReady(Math.max(0, deadline - Date.now()), signal);
    return this.connected();
  }
}
