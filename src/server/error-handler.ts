/**
 * The one place an error becomes a response: HttpErrors as they are; fastify's own errors
 * (validation, content type, body limit, malformed JSON) as the documented `{ error: {...} }`
 * with their 4xx; anything else through toHttpError's class table, an unexpected error as a
 * 500 whose body names only a correlation id, the error itself logged under that id. Also the
 * answers for no route (404) and for a known path asked with another method (405 with Allow).
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clip } from '../runtime/value-checks.js';
import { HttpError, toHttpError } from './errors.js';
import type { ServerMetrics } from './metrics.js';
import type { ServerLimits } from './options.js';
import type { FailureAccounting } from './plugins/accounting.js';

/** What the error handler uses: the limits its answers name, the accounting of failures, and whether internal errors have a logger. */
export interface ErrorContext {
  readonly limits: ServerLimits;
  readonly accounting: FailureAccounting;
  /** Counts the failures answered on the socket (lingeringClose), which no onResponse hook sees. */
  readonly metrics: ServerMetrics;
  /** Whether the server has a logger: an internal error is logged there, else written to stderr. */
  readonly logged: boolean;
}

/** A fastify error, as the handler reads it. */
interface FastifyError extends Error {
  statusCode?: number | undefined;
  code?: string | undefined;
  validation?:
    | {
        instancePath?: string | undefined;
        params?: Record<string, unknown> | undefined;
        message?: string | undefined;
      }[]
    | undefined;
  validationContext?: string | undefined;
}

function validationField(
  error: { instancePath?: string | undefined; params?: Record<string, unknown> | undefined },
  context: string | undefined,
): string {
  const path = (error.instancePath ?? '')
    .split('/')
    .filter((p) => p !== '')
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('');
  const extra = error.params?.additionalProperty ?? error.params?.missingProperty;
  const name = typeof extra === 'string' ? (path === '' ? extra : `${path}.${extra}`) : path;
  return name === '' ? (context ?? 'body') : name;
}

/** A body whose content type no reader takes (or that names none). */
function unsupportedMediaType(request: FastifyRequest): HttpError {
  const type = request.headers['content-type'];
  const what = type === undefined ? 'missing' : `${clip(type)} is not accepted`;
  return new HttpError(
    415,
    'unsupported_media_type',
    `content-type: ${what}; send application/json or application/octet-stream`,
    { field: 'content-type' },
  );
}

/** fastify's own error codes and the answer each gets. */
const FASTIFY_ERRORS: Record<
  string,
  (error: FastifyError, request: FastifyRequest, context: ErrorContext) => HttpError
> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (_e, request) => unsupportedMediaType(request),
  FST_ERR_CTP_BODY_TOO_LARGE: (e, _r, context) =>
    new HttpError(
      413,
      'body_too_large',
      `body: ${e.message.includes('limit') ? e.message : `larger than the limit of ${context.limits.bodyLimitBytes} bytes`}`,
      { field: 'body' },
    ),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    new HttpError(400, 'malformed_json', 'body: empty, expected a JSON object', { field: 'body' }),
  FST_ERR_CTP_INVALID_JSON_BODY: (e) =>
    new HttpError(400, 'malformed_json', `body: malformed JSON (${clip(e.message)})`, { field: 'body' }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: (e) =>
    new HttpError(400, 'invalid_content_length', clip(e.message), { field: 'content-length' }),
  FST_ERR_CTP_INVALID_TYPE: (_e, request) => unsupportedMediaType(request),
  FST_ERR_BAD_URL: (_e, request) =>
    new HttpError(400, 'bad_url', `url: ${clip(request.url)} is not a valid URL (bad percent-encoding)`, {
      field: 'url',
    }),
  FST_ERR_MAX_PARAM_LENGTH: () =>
    new HttpError(414, 'uri_too_long', `url: a path parameter is longer than ${MAX_PARAM_CHARS} characters`, {
      field: 'url',
    }),
  FST_ERR_ASYNC_CONSTRAINT: () => new HttpError(400, 'bad_request', 'the request could not be routed'),
};

/** The answer to `error` for `request`. */
export function answerFor(context: ErrorContext, error: FastifyError, request: FastifyRequest): HttpError {
  if (error instanceof HttpError) return error;
  if (error.validation !== undefined && error.validation.length > 0) {
    const first = error.validation[0]!;
    const field = clip(validationField(first, error.validationContext));
    const unknown = first.params?.additionalProperty !== undefined;
    // An enum's refusal names the values it takes, as the binary path's headers do.
    const allowed = Array.isArray(first.params?.allowedValues)
      ? ` (${(first.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})`
      : '';
    return new HttpError(
      400,
      unknown ? 'unknown_field' : 'invalid_field',
      `${field}: ${unknown ? 'unknown parameter' : `${first.message ?? 'is invalid'}${allowed}`}`,
      { field },
    );
  }
  const known = error.code === undefined ? undefined : FASTIFY_ERRORS[error.code];
  if (known !== undefined) return known(error, request, context);
  if (error instanceof SyntaxError)
    return new HttpError(400, 'malformed_json', `body: malformed JSON (${clip(error.message)})`, { field: 'body' });
  // A fastify or Node refusal of the request itself (4xx with an FST_ code): its status, our shape.
  if (
    typeof error.statusCode === 'number' &&
    error.statusCode >= 400 &&
    error.statusCode < 500 &&
    typeof error.code === 'string' &&
    error.code.startsWith('FST_')
  )
    return new HttpError(error.statusCode, error.code.replace(/^FST_ERR_/, '').toLowerCase(), clip(error.message));
  return toHttpError(error, context.limits.retryAfterS);
}

/** Sends `error` as the documented `{ error: {...} }` body. */
export function sendError(
  context: ErrorContext,
  request: FastifyRequest,
  reply: FastifyReply,
  error: HttpError,
): FastifyReply {
  context.accounting.failed(request, error.reason);
  if (error.correlationId !== undefined) logInternal(context, request, error);
  const socket = request.raw.socket as Socket | null;
  if (!request.raw.complete && socket !== null && typeof socket.end === 'function' && !reply.sent)
    return lingeringClose(context, request, reply, socket, error);
  if (error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS));
  if (error.statusCode === 503 && error.code === 'gpu_lost') reply.header('connection', 'close');
  return reply.code(error.statusCode).type('application/json').send(error.toJSON());
}

/** Logs an unexpected error under its correlation id: to the server's logger, or to stderr when it has none (the id must lead somewhere). */
function logInternal(context: ErrorContext, request: FastifyRequest, error: HttpError): void {
  if (context.logged) {
    request.log.error({ err: error.cause, correlationId: error.correlationId }, 'internal error');
    return;
  }
  const cause = error.cause instanceof Error ? (error.cause.stack ?? error.cause.message) : String(error.cause);
  process.stderr.write(
    `tscuda server: internal error ${error.correlationId} on ${request.method} ${clip(request.url)}: ${cause}\n`,
  );
}

/** How long a refused body may go on arriving after its answer before the connection is cut. */
const LINGER_MS = 2000;
/**
 * How many bytes of a refused body are read and dropped after its answer before the connection is
 * cut: enough for what a client has in flight when the answer reaches it, far from the hundreds of
 * megabytes a fast client sends in LINGER_MS over loopback.
 */
const LINGER_BYTES = 4 * 2 ** 20;

/**
 * Answers a request whose body has not all arrived (413, 408, a bad body) and closes the
 * connection gracefully: the answer, then our end of the connection (FIN), while what the client
 * still sends is read and dropped for up to LINGER_MS and LINGER_BYTES. Closing at once would make
 * the client's kernel answer its further bytes with a reset, which can discard the answer before
 * the client reads it.
 */
function lingeringClose(
  context: ErrorContext,
  request: FastifyRequest,
  reply: FastifyReply,
  socket: Socket,
  error: HttpError,
): FastifyReply {
  reply.hijack();
  context.metrics.fail(request.routeOptions.url ?? 'unknown', error.reason);
  socket.write(rawErrorResponse(error));
  socket.end();
  let dropped = 0;
  request.raw.on('data', (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > LINGER_BYTES) socket.destroy();
  });
  request.raw.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  return reply;
}

/** Turns a route pattern (`/v1/jobs/:id`) into a test of a request path. */
function pathPattern(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}$`);
}

/** fastify's `frameworkErrors`: errors of the router (a bad URL, an over-long parameter) through the one error handler. */
export function frameworkErrors(
  context: ErrorContext,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    sendError(context, request, reply, answerFor(context, error, request));
  };
}

/**
 * Installs the error handler and the 404/405 answers on `app` itself, not in a plugin: called
 * before anything is registered, so it sees every route (a plugin loads only when the app boots,
 * after the routes a caller adds to `server.app` at once).
 */
export function installErrorHandling(app: FastifyInstance, context: ErrorContext): void {
  /** Each route path and its methods, for 405's Allow. */
  const routes = new Map<string, { test: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const entry = routes.get(route.url) ?? { test: pathPattern(route.url), methods: new Set<string>() };
    for (const m of methods) if (m !== 'HEAD') entry.methods.add(m);
    routes.set(route.url, entry);
  });
  app.setErrorHandler((error: FastifyError, request, reply) =>
    sendError(context, request, reply, answerFor(context, error, request)),
  );
  /** The answer to a path no route has (404), or a method its route lacks (405, with Allow). */
  const routeMiss = (request: FastifyRequest, reply: FastifyReply): HttpError => {
    const path = request.url.split('?')[0] ?? '';
    for (const { test, methods } of routes.values()) {
      if (!test.test(path)) continue;
      const allow = [...methods].sort().join(', ');
      reply.header('allow', allow);
      return new HttpError(
        405,
        'method_not_allowed',
        `${request.method} ${clip(path)}: not allowed here (allowed: ${allow})`,
        { field: 'method' },
      );
    }
    return new HttpError(404, 'not_found', `${request.method} ${clip(request.url)}: no such route`, { field: 'url' });
  };
  app.setNotFoundHandler((request, reply) => sendError(context, request, reply, routeMiss(request, reply)));
  // Only POST routes take a body. Any other body is refused on its headers, before it is read: it
  // would otherwise be read into memory outside maxPending's count, or hold a socket while it trickles.
  // Callback style, not async: every request passes here, and an async hook costs a promise each.
  app.addHook('onRequest', (request, reply, done) => {
    const { headers } = request;
    // Node parses a request line without a version as HTTP/0.9 (and takes any x.y): only 1.x is served.
    if (request.raw.httpVersionMajor !== 1) {
      reply.header('connection', 'close');
      sendError(context, request, reply, versionNotSupported(request.raw.httpVersion));
      return;
    }
    if (request.raw.httpVersion === '1.1' && headers.host === undefined) {
      sendError(
        context,
        request,
        reply,
        new HttpError(400, 'missing_host', 'host: an HTTP/1.1 request needs a Host header', { field: 'host' }),
      );
      return;
    }
    const hasBody =
      headers['transfer-encoding'] !== undefined ||
      (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    if (!hasBody || (request.method === 'POST' && !request.is404)) {
      done();
      return;
    }
    const error =
      request.method === 'POST' || request.is404
        ? routeMiss(request, reply)
        : new HttpError(
            400,
            'unexpected_body',
            `${request.method} ${clip(request.url.split('?')[0] ?? '')}: takes no body`,
            { field: 'body' },
          );
    sendError(context, request, reply, error);
  });
}

/**
 * The answer to a request line of an HTTP version other than 1.x: 400 (a client's mistake, never
 * a 5xx): HTTP/0.9's bare `GET /path` has no version at all, and `HTTP/2.0` as text is not how
 * HTTP/2 is spoken.
 */
function versionNotSupported(version: string): HttpError {
  const what =
    version === '0.9'
      ? 'the request line has no HTTP version (HTTP/0.9)'
      : `HTTP/${clip(version)} in a text request line`;
  return new HttpError(400, 'unsupported_http_version', `${what} is not supported: send HTTP/1.1`, {
    field: 'version',
  });
}

/** Longest path parameter (a job id) the router matches: fastify's maxParamLength. */
export const MAX_PARAM_CHARS = 100;

/** Node's HTTP parser errors and the answer each gets. */
const CLIENT_ERRORS: Record<string, [status: number, code: string, message: string, field: string | undefined]> = {
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'headers: larger than the limit', 'headers'],
  HPE_INVALID_CONTENT_LENGTH: [400, 'invalid_content_length', 'content-length: not a byte count', 'content-length'],
  HPE_UNEXPECTED_CONTENT_LENGTH: [
    400,
    'invalid_content_length',
    'content-length: not allowed with transfer-encoding: chunked',
    'content-length',
  ],
  HPE_INVALID_CHUNK_SIZE: [400, 'bad_framing', 'body: malformed chunked framing', 'transfer-encoding'],
  HPE_INVALID_TRANSFER_ENCODING: [400, 'bad_framing', 'transfer-encoding: not understood', 'transfer-encoding'],
  HPE_INVALID_METHOD: [400, 'bad_request', 'method: not an HTTP method', 'method'],
  HPE_INVALID_URL: [400, 'bad_url', 'url: not a valid request target', 'url'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'the request did not arrive in time', undefined],
};

/** `error` as the documented JSON and the headers that go with it (the connection closes after it). */
function errorPayload(error: HttpError): { body: string; headers: Record<string, string | number> } {
  const body = JSON.stringify(error.toJSON());
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  };
  if (error.retryAfterS !== undefined) headers['retry-after'] = error.retryAfterS;
  return { body, headers };
}

/** A complete HTTP/1.1 response carrying `error` as the documented JSON, closing the connection. */
export function rawErrorResponse(error: HttpError): string {
  const { body, headers } = errorPayload(error);
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\n${head.join('')}\r\n${body}`;
}

/**
 * fastify's `clientErrorHandler`: a request Node's parser refused (bad Content-Length, bad
 * framing, headers too large, a timeout) gets the documented error shape where the socket can
 * still take an answer; a reset connection is just closed.
 */
export function clientErrorHandler(error: Error & { code?: string | undefined }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message, field] = CLIENT_ERRORS[error.code ?? ''] ?? [
    400,
    'bad_request',
    'the request could not be parsed',
    undefined,
  ];
  socket.end(rawErrorResponse(new HttpError(status, code, message, { field })));
}

/** Answers a CONNECT (Node would close it unanswered): 405, this server is no proxy. */
export function installConnectAnswer(server: {
  on(event: 'connect', listener: (request: IncomingMessage, socket: Duplex) => void): unknown;
}): void {
  server.on('connect', (_request, socket) => {
    socket.on('error', () => socket.destroy());
    socket.end(
      rawErrorResponse(
        new HttpError(405, 'method_not_allowed', 'CONNECT: this server is not a proxy', { field: 'method' }),
      ),
    );
  });
}

/** Answers an `Expect` other than 100-continue (Node would send a bare 417 with no body): 417 in the documented shape. */
export function installExpectationAnswer(server: {
  on(event: 'checkExpectation', listener: (request: IncomingMessage, response: ServerResponse) => void): unknown;
}): void {
  server.on('checkExpectation', (request, response) => {
    const error = new HttpError(
      417,
      'expectation_failed',
      `expect: ${clip(String(request.headers.expect))} is not supported (only 100-continue)`,
      { field: 'expect' },
    );
    const { body, headers } = errorPayload(error);
    response.writeHead(error.statusCode, headers).end(body);
  });
}
