/**
 * The checks of createServer()'s options, all made before anything is built: a bad option is
 * refused at createServer() with a TypeError or RangeError naming its path (`limits.maxSamples`),
 * never found later by a request (a limit silently off, a 500, a request never answered).
 */
import type { FastifyBaseLogger } from 'fastify';
import { MAX_TIMEOUT_MS } from '../runtime/timeout.js';
import { BATCH_KINDS } from './batch.js';
import {
  clip,
  integerOption,
  knownKeys,
  member,
  positiveInteger,
  shownValue as shown,
} from '../runtime/value-checks.js';
import { SERIES_LABEL_NAMES } from './metrics.js';
import { DEFAULT_LIMITS, type CreateServerOptions, type ServerLimits } from './options.js';
import { JOB_ID_RANDOM_CHARS } from './job-service.js';
import { JOB_ID_CHARS, MAX_JOB_ID_LENGTH } from './schemas.js';

/**
 * The largest binary body limit, 2 GiB on every Node line: a body is read into one pooled Buffer
 * of a power-of-two size class, and 2^31 is the largest class every supported line allocates
 * (buffer.constants.MAX_LENGTH is 2^32 on Node 20 but 2^53 - 1 on 22+, so it bounds nothing there).
 */
export const MAX_BODY_BYTES = 2 ** 31;
/** The largest JSON body: its text must fit one string (V8: 2^29 - 24 characters), with room to spare. */
const MAX_JSON_BODY_BYTES = 256 * 2 ** 20;
/** The largest `maxPending`, as `serve --max-pending`: far more sockets than one process can hold. */
export const MAX_PENDING = 2 ** 24;
/** The longest `Retry-After` advertised: a day. */
const MAX_RETRY_AFTER_S = 86_400;

/** Options that are callbacks (their declared types are functions). */
const FUNCTION_OPTIONS = [
  'jobs',
  'info',
  'peersReady',
  'onLost',
  'onLoadSample',
  'clusterMetrics',
] as const satisfies readonly (keyof CreateServerOptions)[];
const STRING_OPTIONS = ['unavailableReason', 'jobIdPrefix'] as const satisfies readonly (keyof CreateServerOptions)[];
/** Every option createServer() takes: a key not here is a typo, refused by name (the Record makes a new option fail to compile until it is listed). */
const KNOWN_OPTIONS = Object.keys({
  engine: true,
  unavailableReason: true,
  batchers: true,
  limits: true,
  logger: true,
  extraFlags: true,
  ownsEngine: true,
  jobIdPrefix: true,
  jobs: true,
  exposeProcessInfo: true,
  info: true,
  metricsLabels: true,
  peersReady: true,
  onLost: true,
  onLoadSample: true,
  clusterMetrics: true,
  remoteJobs: true,
} satisfies Record<keyof CreateServerOptions, true>);
const BOOLEAN_OPTIONS = ['ownsEngine', 'exposeProcessInfo'] as const satisfies readonly (keyof CreateServerOptions)[];
/** The members of JobEngineLike the server calls (the others it only shows in `/v1/info`). */
const ENGINE_METHODS = ['submit', 'stats', 'close'] as const;
/** What the server calls of an engine when the engine has them (pinned request bodies). */
const OPTIONAL_ENGINE_METHODS = ['hostBuffer', 'releaseHostBuffer'] as const;
/** Prometheus's rule for label names (those starting with `__` are its own). */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The entries of an option object whose keys are those of `defaults` (a typo is refused, naming
 * the known keys), without those left undefined (they take the default).
 */
function givenEntries<T extends object>(path: string, value: unknown, defaults: T): Partial<T> {
  const known = Object.keys(defaults);
  if (value === undefined) return {};
  if (!isRecord(value))
    throw new TypeError(`${path} must be an object with some of ${known.join(', ')}, got ${shown(value)}`);
  knownKeys(value, known, path);
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A limit that is a number of ms where 0 turns it off. */
function checkMsOrOff(path: string, v: unknown): void {
  if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v))
    throw new RangeError(`${path} must be a finite number of ms >= 0 (0 turns it off), got ${shown(v)}`);
}

/** A limit in ms, bounded as a Node timer: a longer timer fires at once. */
function checkTimerMs(path: string, v: unknown): void {
  if (typeof v !== 'number' || !(v > 0) || v > MAX_TIMEOUT_MS)
    throw new RangeError(`${path} must be a number of ms in (0, ${MAX_TIMEOUT_MS}], got ${shown(v)}`);
}

/** The limits of createServer's `limits` option over the defaults, checked. */
export function resolveLimits(given: unknown): ServerLimits {
  const own = givenEntries('limits', given, DEFAULT_LIMITS);
  const retention = {
    ...DEFAULT_LIMITS.jobRetention,
    ...givenEntries('limits.jobRetention', own.jobRetention, DEFAULT_LIMITS.jobRetention),
  };
  const limits: ServerLimits = { ...DEFAULT_LIMITS, ...own, jobRetention: retention };
  for (const name of ['maxEventLoopDelayMs', 'maxTurnMs', 'maxBatchDelayMs'] as const)
    checkMsOrOff(`limits.${name}`, limits[name]);
  if (limits.maxBatchDelayMs > MAX_TIMEOUT_MS)
    throw new RangeError(
      `limits.maxBatchDelayMs must be at most ${MAX_TIMEOUT_MS} ms (a Node timer), got ${limits.maxBatchDelayMs}`,
    );
  for (const name of [
    'bodyLimitBytes',
    'jsonBodyLimitBytes',
    'bodyTimeoutMs',
    'headersTimeoutMs',
    'maxBodyBytesInFlight',
    'maxSamples',
    'maxBatchItems',
    'maxBatchDim',
    'maxBatchDims',
    'maxJsonResultValues',
  ] as const)
    positiveInteger(limits[name], `limits.${name}`);
  positiveInteger(retention.maxFinished, 'limits.jobRetention.maxFinished');
  for (const name of ['bodyTimeoutMs', 'headersTimeoutMs', 'defaultTimeoutMs', 'maxTimeoutMs'] as const)
    checkTimerMs(`limits.${name}`, limits[name]);
  checkTimerMs('limits.jobRetention.ttlMs', retention.ttlMs);
  // 0 is allowed: every POST is refused, while GETs (health, metrics, job status) are answered.
  integerOption('limits.maxPending', limits.maxPending, 0, 0, MAX_PENDING);
  // Sent as the Retry-After header, whose value is whole seconds.
  integerOption('limits.retryAfterS', limits.retryAfterS, 0, 0, MAX_RETRY_AFTER_S);
  // A default above the default ceiling raises the ceiling (`serve --timeout 900000`); both given and crossed is a mistake.
  if (limits.defaultTimeoutMs > limits.maxTimeoutMs && own.maxTimeoutMs === undefined)
    limits.maxTimeoutMs = limits.defaultTimeoutMs;
  if (limits.defaultTimeoutMs > limits.maxTimeoutMs)
    throw new RangeError(
      `limits.defaultTimeoutMs (${limits.defaultTimeoutMs}) must be at most limits.maxTimeoutMs (${limits.maxTimeoutMs})`,
    );
  if (limits.bodyLimitBytes > MAX_BODY_BYTES)
    throw new RangeError(
      `limits.bodyLimitBytes must be at most ${MAX_BODY_BYTES} (2 GiB: larger binary bodies do not fit the body pool's largest buffer), got ${limits.bodyLimitBytes}`,
    );
  if (limits.jsonBodyLimitBytes > MAX_JSON_BODY_BYTES)
    throw new RangeError(
      `limits.jsonBodyLimitBytes must be at most ${MAX_JSON_BODY_BYTES} (JSON text must fit a string; send large signals binary), got ${limits.jsonBodyLimitBytes}`,
    );
  // A JSON body never gets more room than a binary one, and one body of either always fits the bodies' bound.
  limits.jsonBodyLimitBytes = Math.min(limits.jsonBodyLimitBytes, limits.bodyLimitBytes);
  limits.maxBodyBytesInFlight = Math.max(limits.maxBodyBytesInFlight, limits.bodyLimitBytes);
  return limits;
}

/** Checks createServer()'s options other than `limits` (resolveLimits) and `logger` (fastify's own), each against its declared type. */
export function checkOptions(options: unknown): asserts options is CreateServerOptions {
  if (!isRecord(options)) throw new TypeError(`createServer options must be an object, got ${shown(options)}`);
  knownKeys(options, KNOWN_OPTIONS, 'createServer options');
  checkEngine(options.engine);
  checkBatchers(options.batchers);
  const flags = options.extraFlags;
  if (flags !== undefined) {
    if (!Array.isArray(flags))
      throw new TypeError(`extraFlags must be an array of strings (registered stage names), got ${shown(flags)}`);
    flags.forEach((flag: unknown, i) => {
      if (typeof flag !== 'string')
        throw new TypeError(`extraFlags[${i}] must be a string (a registered stage name), got ${shown(flag)}`);
    });
  }
  for (const name of FUNCTION_OPTIONS)
    if (options[name] !== undefined && typeof options[name] !== 'function')
      throw new TypeError(`${name} must be a function, got ${shown(options[name])}`);
  for (const name of STRING_OPTIONS)
    if (options[name] !== undefined && typeof options[name] !== 'string')
      throw new TypeError(`${name} must be a string, got ${shown(options[name])}`);
  for (const name of BOOLEAN_OPTIONS)
    if (options[name] !== undefined && typeof options[name] !== 'boolean')
      throw new TypeError(`${name} must be a boolean, got ${shown(options[name])}`);
  if (options.metricsLabels !== undefined) checkMetricsLabels(options.metricsLabels);
  if (options.jobIdPrefix !== undefined) checkJobIdPrefix(options.jobIdPrefix as string);
  checkLogger(options.logger);
  const remote = options.remoteJobs;
  if (remote !== undefined) {
    if (!isRecord(remote))
      throw new TypeError(`remoteJobs must be an object with get and delete, got ${shown(remote)}`);
    for (const name of ['get', 'delete'])
      if (typeof remote[name] !== 'function')
        throw new TypeError(`remoteJobs.${name} must be a function, got ${shown(remote[name])}`);
  }
}

function checkEngine(engine: unknown): void {
  if (engine === undefined || engine === null) return;
  if (typeof engine !== 'object') throw new TypeError(`engine must be a JobEngineLike or null, got ${shown(engine)}`);
  const e = engine as Record<string, unknown>;
  for (const name of ENGINE_METHODS)
    if (typeof e[name] !== 'function')
      throw new TypeError(`engine.${name} must be a function (engine must be a JobEngineLike), got ${shown(e[name])}`);
  if (typeof (e.lost as { catch?: unknown } | null | undefined)?.catch !== 'function')
    throw new TypeError(`engine.lost must be a Promise (engine must be a JobEngineLike), got ${shown(e.lost)}`);
  for (const name of OPTIONAL_ENGINE_METHODS)
    if (e[name] !== undefined && typeof e[name] !== 'function')
      throw new TypeError(`engine.${name} must be a function when present, got ${shown(e[name])}`);
}

function checkBatchers(batchers: unknown): void {
  const factories = givenEntries(
    'batchers',
    batchers,
    Object.fromEntries(BATCH_KINDS.map((kind) => [kind, undefined])),
  );
  for (const [kind, factory] of Object.entries(factories))
    if (typeof factory !== 'function')
      throw new TypeError(`batchers.${kind} must be a function (dim) => batcher, got ${shown(factory)}`);
}

/** Default labels of every series: Prometheus names, string values, none of the names the server's own series use (one would overwrite the other). */
function checkMetricsLabels(labels: unknown): void {
  if (!isRecord(labels))
    throw new TypeError(`metricsLabels must be an object of label names to string values, got ${shown(labels)}`);
  for (const [name, value] of Object.entries(labels)) {
    if (!LABEL_NAME.test(name) || name.startsWith('__'))
      throw new TypeError(
        `${member('metricsLabels', name)}: not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)`,
      );
    if (SERIES_LABEL_NAMES.includes(name))
      throw new TypeError(
        `metricsLabels.${name}: the server's own series use this label (${SERIES_LABEL_NAMES.join(', ')}); pick another name`,
      );
    if (typeof value !== 'string') throw new TypeError(`metricsLabels.${name} must be a string, got ${shown(value)}`);
  }
}

/** A job id's prefix: ids go into paths and the Location header, and the job routes take only ids of JOB_ID_CHARS up to MAX_JOB_ID_LENGTH. */
function checkJobIdPrefix(prefix: string): void {
  if (!new RegExp(`^[${JOB_ID_CHARS}]*$`).test(prefix))
    throw new TypeError(
      `jobIdPrefix may hold only letters, digits, '-' and '_' (job ids go into URLs), got ${shown(prefix)}`,
    );
  const room = MAX_JOB_ID_LENGTH - JOB_ID_RANDOM_CHARS;
  if (prefix.length > room)
    throw new RangeError(
      `jobIdPrefix must be at most ${room} characters (a job id is at most ${MAX_JOB_ID_LENGTH}), got ${prefix.length}`,
    );
}

/** The methods that make an object a logger (fastify's own test), not pino's options. */
const LOGGER_METHODS = ['info', 'error', 'warn', 'debug', 'trace', 'fatal', 'child'] as const;

/** Whether `logger` is a logger of the caller's (fastify's `loggerInstance`) rather than pino's options. */
export function isLoggerInstance(logger: unknown): logger is FastifyBaseLogger {
  return isRecord(logger) && LOGGER_METHODS.every((m) => typeof logger[m] === 'function');
}

/** The logger option: a boolean, pino's options (an object without the logger methods) or a logger; a half logger is a mistake named by its missing method. */
function checkLogger(logger: unknown): void {
  if (logger === undefined || typeof logger === 'boolean') return;
  if (!isRecord(logger))
    throw new TypeError(`logger must be a boolean, pino's options or a logger, got ${shown(logger)}`);
  const present = LOGGER_METHODS.filter((m) => typeof logger[m] === 'function');
  if (present.length > 0 && present.length < LOGGER_METHODS.length)
    throw new TypeError(
      `logger has ${present.join(', ')} but not ${LOGGER_METHODS.filter((m) => !present.includes(m)).join(', ')}: a logger needs all of ${LOGGER_METHODS.join(', ')}`,
    );
}

/** The options of listen(): port 0..65535 (0 picks a free one), a host string, a positive backlog; nothing else. */
export function checkListenOptions(options: unknown): void {
  const known = ['port', 'host', 'backlog'];
  if (!isRecord(options))
    throw new TypeError(`listen() takes an options object ({ port, host, backlog }), got ${shown(options)}`);
  knownKeys(options, known, 'listen options');
  if (options.port !== undefined) integerOption('listen options.port', options.port, 0, 0, 65_535);
  if (options.host !== undefined && (typeof options.host !== 'string' || options.host === ''))
    throw new TypeError(`listen options.host must be a host name or address, got ${shown(options.host)}`);
  if (options.backlog !== undefined) positiveInteger(options.backlog, 'listen options.backlog');
}
