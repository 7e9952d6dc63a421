/**
 * Redis connections of the queue: one way to name a server (a URL or ioredis options), clients
 * that retry with a capped backoff for as long as Redis is away (a worker or a front outlives a
 * Redis restart), and a one-shot check that fails fast at start-up instead.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { QueueUnavailableError } from './errors.js';
import { clip, integerOption } from '../runtime/value-checks.js';

/** Where Redis is: a URL (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS) or ioredis options. */
export type QueueConnection = string | RedisOptions;

/** Longest wait between reconnection attempts, ms: a restarted Redis is found within this. */
export const MAX_RECONNECT_DELAY_MS = 2000;

/** Reconnection delay after `times` failed attempts: doubling from 50 ms, capped, with jitter so many clients do not reconnect in step. */
export function reconnectDelay(times: number): number {
  const base = Math.min(MAX_RECONNECT_DELAY_MS, 50 * 2 ** Math.min(times, 10));
  return Math.round(base * (0.75 + Math.random() * 0.25));
}

/** Checks `connection` and names the problem; throws TypeError on anything that is neither a URL nor an options object. */
export function checkConnection(connection: unknown, field = 'connection'): QueueConnection {
  if (typeof connection === 'string') {
    // Messages show the URL without its user and password (they end up in logs).
    const shown = clip(JSON.stringify(connection.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1***@')));
    if (!/^rediss?:\/\//.test(connection)) throw new TypeError(`${field}: a Redis URL starts with redis:// or rediss://, got ${shown}`);
    let url: URL;
    try {
      url = new URL(connection);
    } catch {
      throw new TypeError(`${field}: ${shown} is not a valid URL`);
    }
    if (url.port === '0') throw new TypeError(`${field}: ${shown} names port 0, where no Redis listens`);
    // The path names the database: ioredis would SELECT whatever it says (`/abc` as NaN).
    if (!/^\/?(\d{1,5})?$/.test(url.pathname))
      throw new TypeError(`${field}: the path of a Redis URL is a database number (redis://host:port/0), got ${JSON.stringify(url.pathname)}`);
    return connection;
  }
  if (typeof connection === 'object' && connection !== null && !Array.isArray(connection)) return connection as RedisOptions;
  throw new TypeError(`${field}: must be a Redis URL (redis://host:port) or ioredis options, got ${connection === null ? 'null' : typeof connection}`);
}

/** The database a connection names (a URL's path, or ioredis' `db`); 0 when it names none. */
export function databaseOf(connection: QueueConnection): number {
  if (typeof connection === 'string') {
    const path = new URL(connection).pathname;
    return path.length > 1 ? Number(path.slice(1)) : 0;
  }
  return connection.db ?? 0;
}

/** `connection` for messages: host and port, never a password. */
export function describeConnection(connection: QueueConnection): string {
  if (typeof connection === 'string') {
    const url = new URL(connection);
    return `${url.protocol}//${url.hostname}:${url.port || '6379'}${url.pathname.length > 1 ? url.pathname : ''}`;
  }
  if (typeof connection.path === 'string') return `redis at ${connection.path}`;
  return `redis://${connection.host ?? '127.0.0.1'}:${connection.port ?? 6379}${connection.db ? `/${connection.db}` : ''}`;
}

/**
 * A client that keeps reconnecting with backoff while Redis is away. `maxRetriesPerRequest: null`
 * is what BullMQ's workers need (a command waits for the reconnection instead of failing);
 * callers that must answer at once check `status === 'ready'` first.
 */
export function createRedis(connection: QueueConnection, name: string): Redis {
  const options: RedisOptions = { maxRetriesPerRequest: null, retryStrategy: reconnectDelay, connectionName: name, enableReadyCheck: true };
  const client = typeof connection === 'string' ? new Redis(connection, options) : new Redis({ ...connection, ...options });
  // ioredis reports each failed reconnection as an 'error' event; without a listener Node would
  // throw it. The owners watch `status` (readiness) instead, and name the last error when they refuse.
  client.on('error', (error: Error) => lastErrors.set(client, error));
  client.on('ready', () => lastErrors.delete(client));
  return client;
}

const lastErrors = new WeakMap<Redis, Error>();

/** Why `client` (from createRedis) is not ready, as Redis or the socket said it last (`WRONGPASS ...`, `ECONNREFUSED ...`); '' when it said nothing. */
export function lastRedisError(client: Redis): string {
  const error = lastErrors.get(client);
  return error === undefined ? '' : `: ${error.message.slice(0, 200)}`;
}

/** Resolves once `client` is ready (at once if it is), or after `ms` if it is not by then, or once `signal` aborts. */
export async function readyWithin(client: Redis, ms: number, signal?: AbortSignal): Promise<void> {
  if (client.status !== 'ready') await nextReady(client, ms, signal);
}

/**
 * Resolves at `client`'s next 'ready' event, or after `ms`, or once `signal` aborts (its owner is
 * closing the client: a dropped client may never say so with an event, e.g. one that was
 * reconnecting).
 */
export function nextReady(client: Pick<Redis, 'once' | 'off'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      client.off('ready', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, signal?.aborted === true ? 0 : ms);
    client.once('ready', done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Waits for `work` (a close; its rejection counts as settled) until `due()` has been true once and
 * `waitMs` have passed since; the countdown, once started, runs out whatever `due()` says later.
 * Resolves whether `work` settled (false: it was cut). Closes that talk to Redis are bounded so:
 * with Redis away, BullMQ's would wait for it (a worker's, even after it is back).
 */
export async function settlesWithin(work: Promise<unknown>, waitMs: number, due: () => boolean = () => true): Promise<boolean> {
  let poll: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<false>((resolve) => {
    const arm = (): void => void (timer === undefined && due() && (timer = setTimeout(() => resolve(false), waitMs)));
    arm();
    if (timer === undefined) poll = setInterval(arm, SETTLE_POLL_MS);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      cut,
    ]);
  } finally {
    clearInterval(poll);
    clearTimeout(timer);
  }
}

/** How often settlesWithin looks whether its countdown is due. */
const SETTLE_POLL_MS = 100;

/**
 * Rejects with QueueUnavailableError when Redis refuses the database `connection` names (a
 * database it does not have) on `client`, a client of that connection: ioredis' own SELECT at
 * connect fails without failing the connection, which then works on database 0, silently.
 */
export async function checkDatabase(client: Pick<Redis, 'select'>, connection: QueueConnection): Promise<void> {
  const db = databaseOf(connection);
  if (db === 0) return;
  await client.select(db).catch((error: unknown) => {
    const why = error instanceof Error ? error.message : String(error);
    throw new QueueUnavailableError(`Redis at ${describeConnection(connection)} refused database ${db}: ${why}`, { cause: error });
  });
}

/**
 * Connects once and pings, within `timeoutMs`, without retrying: what a command runs at start so
 * an unreachable Redis is one clear line and exit 1 rather than a process that waits forever.
 */
export async function checkRedis(connection: QueueConnection, timeoutMs = 3000): Promise<void> {
  // Both checked first: ioredis would throw a bad timeout from a timer later, out of this call's reach.
  connection = checkConnection(connection);
  timeoutMs = integerOption('timeoutMs', timeoutMs, 3000, 1, 2 ** 31 - 1);
  const options: RedisOptions = { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, enableOfflineQueue: false };
  const client = typeof connection === 'string' ? new Redis(connection, options) : new Redis({ ...connection, ...options });
  // The socket's own error (ECONNREFUSED, ENOTFOUND, auth) says more than the command's rejection.
  let socketError: Error | undefined;
  client.on('error', (error: Error) => (socketError ??= error));
  let timer: NodeJS.Timeout | undefined;
  const where = describeConnection(connection);
  try {
    try {
      await Promise.race([
        client.connect().then(() => client.ping()),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (error) {
      const why = socketError ?? error;
      throw new QueueUnavailableError(`Redis at ${where} is unreachable: ${why instanceof Error ? why.message : String(why)}`, { cause: why });
    }
    await checkDatabase(client, connection);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
