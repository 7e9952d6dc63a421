/**
 * How request bodies are read: binary bodies into pooled memory (shedding/body-pool.ts), JSON
 * bodies under their own smaller limit, each bounded in time (408) and counted by the bytes that
 * arrive. A JSON body is scanned as its chunks arrive (json-scan.ts), so a body that would cost the
 * heap and the event loop far more than its size (a million objects, keys or one-sample rows,
 * nesting thousands deep, more numbers than a request may carry) is refused on the chunk that
 * shows it, before the rest is read and before JSON.parse builds anything.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';
import { JOB_BOUNDS, JsonScanner, batchBounds, checkBatchCounts, checkJobCounts } from './json-scan.js';
import type { ServerMetrics } from './metrics.js';
import type { ServerLimits } from './options.js';
import { readPooledBody, type BodyStream, type ReadBodyOptions } from './shedding/body-pool.js';
import type { Shedding } from './shedding/index.js';

/** Where a binary body is read (plugins/bodies.ts: into pooled memory, kept for its request until a job takes it). */
export interface PooledBodyReader {
  read(request: FastifyRequest, payload: BodyStream, limitBytes: number, options: ReadBodyOptions): Promise<Buffer>;
}

/** What the body readers use: the limits, the pooled bodies, the bodies' bound (load shedding) and the bytes-in counter. */
export interface BodyReaderParts {
  readonly limits: ServerLimits;
  readonly bodies: PooledBodyReader;
  readonly shedding: Shedding;
  readonly metrics: ServerMetrics;
}

/** Counts a request's received body bytes under its endpoint. */
function countBytes(metrics: ServerMetrics, request: FastifyRequest): (bytes: number) => void {
  return (bytes) => {
    if (bytes > 0) metrics.bytesIn.inc({ endpoint: request.routeOptions.url ?? 'unknown' }, bytes);
  };
}

/**
 * Installs the binary and JSON body readers in place of all of fastify's: any other content type
 * (text/plain included, which fastify reads by default with neither our size nor our time limit)
 * gets its 415 before a byte of its body is read.
 */
export function installBodyReaders(app: FastifyInstance, parts: BodyReaderParts): void {
  const { limits, bodies, shedding, metrics } = parts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/octet-stream', (request, payload, done) => {
    const refused = contentEncodingError(request);
    if (refused !== undefined) return done(refused, undefined);
    bodies
      .read(request, payload, limits.bodyLimitBytes, {
        timeoutMs: limits.bodyTimeoutMs,
        onBytes: countBytes(metrics, request),
        onChunk: (chunk) => shedding.holdBody(request, chunk.byteLength),
      })
      .then(
        (body) => done(null, body),
        (error: Error) => done(error, undefined),
      );
  });
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const refused = contentEncodingError(request);
    if (refused !== undefined) return done(refused, undefined);
    const batch = (request.routeOptions.url ?? '').startsWith('/v1/batch/');
    // Scanned as it arrives: a body its route cannot take is refused on the chunk that shows it.
    const scanner = new JsonScanner(batch ? batchBounds(limits.maxBatchItems) : JOB_BOUNDS);
    // Plain (unpooled) memory: JSON text is dropped as soon as it is parsed.
    readPooledBody(payload, request.headers['content-length'], limits.jsonBodyLimitBytes, PLAIN, {
      timeoutMs: limits.bodyTimeoutMs,
      onBytes: countBytes(metrics, request),
      onChunk: (chunk) => {
        shedding.holdBody(request, chunk.byteLength);
        scanner.feed(chunk);
      },
      tooLarge: () => jsonTooLarge(limits.jsonBodyLimitBytes),
    }).then(
      (text) => {
        try {
          const counts = scanner.counts();
          if (batch) checkBatchCounts(counts, limits.maxBatchItems);
          else checkJobCounts(counts, limits.maxSamples);
          done(null, parseJson(text));
        } catch (error) {
          done(error as Error, undefined);
        }
      },
      (error: Error) => done(error, undefined),
    );
  });
}

/**
 * Bodies are read as sent: a compressed one (`content-encoding: gzip`) would be taken for samples
 * or refused as malformed JSON, so any coding but `identity` is refused by name (415, RFC 9110).
 */
function contentEncodingError(request: FastifyRequest): HttpError | undefined {
  const coding = request.headers['content-encoding'];
  if (coding === undefined || coding.trim() === '' || coding.trim().toLowerCase() === 'identity') return undefined;
  return new HttpError(
    415,
    'unsupported_media_type',
    `content-encoding: ${coding.slice(0, 100)} is not accepted; send the body uncompressed`,
    {
      field: 'content-encoding',
    },
  );
}

/** The 413 of a JSON body over its limit: it names the way large signals go. */
function jsonTooLarge(limitBytes: number): HttpError {
  return new HttpError(
    413,
    'body_too_large',
    `body: a JSON body may hold at most ${limitBytes} bytes (limits.jsonBodyLimitBytes, serve --json-limit): send large signals as a binary body (content-type: application/octet-stream, the parameters in the query or x-tscuda-* headers)`,
    { field: 'body' },
  );
}

/** A pool that keeps nothing: JSON bodies are read into fresh memory the garbage collector takes. */
const PLAIN = {
  take: (bytes: number): Buffer => Buffer.allocUnsafe(bytes),
  release: (): void => undefined,
} as unknown as Parameters<typeof readPooledBody>[3];

/** Parses a JSON body (scanned as it arrived: json-scan.ts); `__proto__` keys are refused by name. */
export function parseJson(text: Buffer): unknown {
  if (text.byteLength === 0)
    throw new HttpError(400, 'malformed_json', 'body: empty, expected a JSON object', { field: 'body' });
  let value: unknown;
  try {
    value = JSON.parse(text.toString('utf8'));
  } catch (error) {
    throw new HttpError(400, 'malformed_json', `body: malformed JSON (${(error as Error).message.slice(0, 100)})`, {
      field: 'body',
    });
  }
  if (text.includes('"__proto__"')) {
    const path = protoKey(value, '');
    if (path !== undefined)
      throw new HttpError(400, 'forbidden_field', `${path}: the key __proto__ is not allowed`, { field: path });
  }
  return value;
}

/** The path of the first own `__proto__` key in `value` (depth-first), or undefined. */
function protoKey(value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (v !== null && typeof v === 'object') {
        const found = protoKey(v, `${path}[${i}]`);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  }
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return path === '' ? '__proto__' : `${path}.__proto__`;
  for (const [k, v] of Object.entries(value)) {
    const found = protoKey(v, path === '' ? k : `${path}.${k}`);
    if (found !== undefined) return found;
  }
  return undefined;
}
