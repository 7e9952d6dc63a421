/**
 * Redis connections of the queue: one way to name a server (a URL or ioredis options, checked,
 * shown without credentials), clients that reconnect with a capped backoff for as long as Redis is
 * away (a worker or a front outlives a Redis restart) and whose commands either wait for it (a
 * worker's) or fail within a bound (a client's), one wording of why Redis is unavailable, and a
 * one-shot check that fails fast at start-up instead.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { QueueUnavailableError } from './errors.js';
import { clip, integerOption, shownValue } from '../runtime/value-checks.js';

/** Where Redis is: a URL (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS) or ioredis options. */
export type QueueConnection = string | RedisOptions;

/** Longest wait between reconnection attempts, ms: a restarted Redis is found within this. */
export const MAX_RECONNECT_DELAY_MS = 2000;

/** Reconnection delay after `times` failed attempts: doubling from 50 ms, capped, with jitter so many clients do not reconnect in step. */
export function reconnectDelay(times: number): number {
  const base = Math.min(MAX_RECONNECT_DELAY_MS, 50 * 2 ** Math.min(times, 10));
  return Math.round(base * (0.75 + Math.random() * 0.25));
}

/**
 * `url` with everything between its scheme and its last `@` (a user and a password, whatever
 * characters they hold: an unencoded `/` or `@` included) shown as `***`: the one redaction of
 * every message, log line and usage error that shows a Redis URL.
 */
export function redactRedisUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^]*@/i, (_all, scheme: string | undefined) => `${scheme ?? ''}***@`);
}

/** ioredis options that hold a number of ms, which ioredis hands to a timer (a bad one was an uncaught RangeError from that timer). */
const MS_OPTIONS = [
  'connectTimeout',
  'commandTimeout',
  'socketTimeout',
  'blockingTimeout',
  'maxLoadingRetryTime',
] as const;

/** Checks the ioredis options the queue relies on, naming the first bad one (TypeError or RangeError), before any client is made. */
function checkRedisOptions(o: RedisOptions, field: string): void {
  for (const key of MS_OPTIONS) {
    const v: unknown = o[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > 2 ** 31 - 1))
      throw new RangeError(`${field}.${key} must be an integer of ms in [1, 2147483647], got ${shownValue(v)}`);
  }
  const port: unknown = o.port;
  if (port !== undefined && (typeof port !== 'number' || !Number.isSafeInteger(port) || port < 1 || port > 65535))
    throw new RangeError(`${field}.port must be an integer in [1, 65535], got ${shownValue(port)}`);
  const db: unknown = o.db;
  if (db !== undefined && (typeof db !== 'number' || !Number.isSafeInteger(db) || db < 0 || db > 65535))
    throw new RangeError(`${field}.db must be a database number in [0, 65535], got ${shownValue(db)}`);
  for (const key of ['host', 'path', 'username', 'password'] as const) {
    const v: unknown = o[key];
    if (v !== undefined && typeof v !== 'string')
      throw new TypeError(`${field}.${key} must be a string, got ${typeof v}`);
  }
  const retry: unknown = o.retryStrategy;
  if (retry !== undefined && typeof retry !== 'function')
    throw new TypeError(`${field}.retryStrategy must be a function, got ${shownValue(retry)}`);
  const keepAlive: unknown = o.keepAlive;
  if (
    keepAlive !== undefined &&
    (typeof keepAlive !== 'number' || !Number.isSafeInteger(keepAlive) || keepAlive < 0 || keepAlive > 2 ** 31 - 1)
  )
    throw new RangeError(`${field}.keepAlive must be an integer of ms >= 0, got ${shownValue(keepAlive)}`);
}

/** Checks `connection` and names the problem; throws TypeError on anything that is neither a URL nor an options object, RangeError on a bad option. */
export function checkConnection(connection: unknown, field = 'connection'): QueueConnection {
  if (typeof connection === 'string') {
    // Messages show the URL without its user and password (they end up in logs).
    const shown = clip(JSON.stringify(redactRedisUrl(connection)));
    if (!/^rediss?:\/\//.test(connection))
      throw new TypeError(`${field}: a Redis URL starts with redis:// or rediss://, got ${shown}`);
    let url: URL;
    try {
      url = new URL(connection);
    } catch {
      throw new TypeError(
        `${field}: ${shown} is not a valid URL (a password with '/', '@' or ':' must be percent-encoded)`,
      );
    }
    if (url.port === '0') throw new TypeError(`${field}: ${shown} names port 0, where no Redis listens`);
    // The path names the database: ioredis would SELECT whatever it says (`/abc` as NaN).
    if (!/^\/?(\d{1,5})?$/.test(url.pathname))
      throw new TypeError(
        `${field}: the path of a Redis URL is a database number (redis://host:port/0), got ${JSON.stringify(url.pathname)}`,
      );
    return connection;
  }
  if (typeof connection === 'object' && connection !== null && !Array.isArray(connection)) {
    checkRedisOptions(connection as RedisOptions, field);
    return connection as RedisOptions;
  }
  throw new TypeError(
    `${field}: must be a Redis URL (redis://host:port) or ioredis options, got ${connection === null ? 'null' : typeof connection}`,
  );
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
 * How a client waits for Redis. `patient` (a worker's, an event reader's, BullMQ's blocking
 * connections): `maxRetriesPerRequest: null`, a command waits through reconnections for as long
 * as Redis is away, which is what BullMQ's workers need. `bounded` (a client's, a front's): a
 * command is refused at once while the connection is down (no offline queue), rejected when the
 * connection drops under it, and times out after `commandTimeoutMs` (ioredis' own timer), so
 * nothing waits on a Redis that stopped answering.
 */
export type RedisPatience = { kind: 'patient' } | { kind: 'bounded'; commandTimeoutMs: number };

/** The `patient` kind (see RedisPatience). */
export const PATIENT: RedisPatience = { kind: 'patient' };

/** A client that keeps reconnecting with backoff while Redis is away; its commands wait as `patience` says. */
export function createRedis(connection: QueueConnection, name: string, patience: RedisPatience = PATIENT): Redis {
  const options: RedisOptions = { retryStrategy: reconnectDelay, connectionName: name, enableReadyCheck: true };
  if (patience.kind === 'patient') options.maxRetriesPerRequest = null;
  else
    Object.assign(options, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      commandTimeout: patience.commandTimeoutMs,
    });
  const client =
    typeof connection === 'string' ? new Redis(connection, options) : new Redis({ ...connection, ...options });
  // ioredis reports each failed reconnection as an 'error' event; without a listener Node would
  // throw it. The owners watch `status` (readiness) instead, and name the last error when they refuse.
  client.on('error', (error: Error) => lastErrors.set(client, error));
  client.on('ready', () => lastErrors.delete(client));
  return client;
}

const lastErrors = new WeakMap<Redis, Error>();

/** Whether Redis' words say it refused the credentials (a wrong password, or none where one is needed). */
export function isAuthRefusal(message: string): boolean {
  return /\b(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i.test(message);
}

/**
 * What went wrong with Redis at `where`, from its own words or the socket's (`WRONGPASS ...`,
 * `ECONNREFUSED ...`), as the start of a sentence: a refused password is said to be one (never
 * shown), anything else is "unreachable".
 */
export function redisFailure(where: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error ?? '');
  if (isAuthRefusal(message))
    return `Redis at ${where} refused the password (${/NOAUTH/i.test(message) ? 'NOAUTH: it needs one and none was given' : 'WRONGPASS: wrong user or password'}); check the URL's credentials`;
  return `Redis at ${where} is unreachable${message === '' ? '' : `: ${message.slice(0, 200)}`}`;
}

/** The last error `client` (from createRedis) reported, undefined when it reported none since it was last ready. */
export function lastRedisError(client: Redis): Error | undefined {
  return lastErrors.get(client);
}

/** Whether `client` answers a PING within `ms`: false when it does not, or fails (never rejects). A stopped Redis keeps its connections, so only an answer says it is there. */
export async function answersWithin(client: Pick<Redis, 'ping'>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      client.ping().then(
        (reply) => reply === 'PONG',
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `client` is ready (at once if it is), or after `ms` if it is not by then, or once `signal` aborts. */
export async function readyWithin(client: Redis, ms: number, signal?: AbortSignal): Promise<void> {
  if (client.status !== 'ready') await nextReady(client, ms, signal);
}

/** Per client, the one promise of its next 'ready' (one listener however many calls wait). */
const nextReadyOf = new WeakMap<object, Promise<void>>();
/** Per signal, the one promise of its abort (one listener however many calls wait). */
const abortOf = new WeakMap<AbortSignal, Promise<void>>();

/** The shared promise of `client`'s next 'ready' event. */
function sharedReady(client: Pick<Redis, 'once'>): Promise<void> {
  let ready = nextReadyOf.get(client);
  if (ready === undefined) {
    ready = new Promise<void>((resolve) =>
      client.once('ready', () => {
        nextReadyOf.delete(client);
        resolve();
      }),
    );
    nextReadyOf.set(client, ready);
  }
  return ready;
}

/** The shared promise of `signal`'s abort. */
function sharedAbort(signal: AbortSignal): Promise<void> {
  let aborted = abortOf.get(signal);
  if (aborted === undefined) {
    aborted = signal.aborted
      ? Promise.resolve()
      : new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    abortOf.set(signal, aborted);
  }
  return aborted;
}

/**
 * Resolves at `client`'s next 'ready' event, or after `ms`, or once `signal` aborts (its owner is
 * closing the client: a dropped client may never say so with an event, e.g. one that was
 * reconnecting). Every call waiting on one client shares one 'ready' listener, and on one signal
 * one 'abort' listener: a thousand calls waiting for a reconnection add no listener each.
 */
export async function nextReady(client: Pick<Redis, 'once'>, ms: number, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waits = [
    sharedReady(client),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, signal?.aborted === true ? 0 : ms))),
  ];
  if (signal !== undefined) waits.push(sharedAbort(signal));
  try {
    await Promise.race(waits);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits for `work` (a close; its rejection counts as settled) until `due()` has been true once and
 * `waitMs` have passed since; the countdown, once started, runs out whatever `due()` says later.
 * Resolves whether `work` settled (false: it was cut). Closes that talk to Redis are bounded so:
 * with Redis away, BullMQ's would wait for it (a worker's, even after it is back).
 */
export async function settlesWithin(
  work: Promise<unknown>,
  waitMs: number,
  due: () => boolean = () => true,
): Promise<boolean> {
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
    throw new QueueUnavailableError(`Redis at ${describeConnection(connection)} refused database ${db}: ${why}`, {
      cause: error,
    });
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
  const options: RedisOptions = {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
    // disconnect() waits this long for the socket to close (2 s by default, even for one that never
    // connected): a command that stops on an unreachable Redis would stay that long for nothing.
    disconnectTimeout: 100,
  };
  const client =
    typeof connection === 'string' ? new Redis(connection, options) : new Redis({ ...connection, ...options });
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
      throw new QueueUnavailableError(redisFailure(where, why), { cause: why });
    }
    await checkDatabase(client, connection);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
