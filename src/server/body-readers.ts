/**
 * How request bodies are read: binary bodies into pooled memory (shedding/body-pool.ts), JSON
 * bodies under their own smaller limit, each bounded in time (408) and counted by the bytes that
 * arrive. A JSON body is scanned once before it is parsed (json-scan.ts), so a body that would
 * cost the heap far more than its size (a million one-sample rows, nesting thousands deep, more
 * numbers than a request may carry) is refused before JSON.parse builds it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';
import { checkBatchCounts, checkJobCounts, scanJsonText, type JsonCounts } from './json-scan.js';
import { readPooledBody } from './shedding/body-pool.js';
import type { ServerState } from './state.js';

/** Counts a request's received body bytes under its endpoint. */
function countBytes(state: ServerState, request: FastifyRequest): (bytes: number) => void {
  return (bytes) => {
    if (bytes > 0) state.metrics.bytesIn.inc({ endpoint: request.routeOptions.url ?? 'unknown' }, bytes);
  };
}

/**
 * Installs the binary and JSON body readers in place of all of fastify's: any other content type
 * (text/plain included, which fastify reads by default with neither our size nor our time limit)
 * gets its 415 before a byte of its body is read.
 */
export function installBodyReaders(app: FastifyInstance, state: ServerState): void {
  const { limits } = state;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/octet-stream', (request, payload, done) => {
    const refused = contentEncodingError(request);
    if (refused !== undefined) return done(refused, undefined);
    readPooledBody(payload, request.headers['content-length'], limits.bodyLimitBytes, state.bodies, {
      timeoutMs: limits.bodyTimeoutMs,
      onBytes: countBytes(state, request),
    }).then(
      (body) => {
        state.pooledBodies.set(request, body);
        done(null, body);
      },
      (error: Error) => done(error, undefined),
    );
  });
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const refused = contentEncodingError(request);
    if (refused !== undefined) return done(refused, undefined);
    // Plain (unpooled) memory: JSON text is dropped as soon as it is parsed.
    readPooledBody(payload, request.headers['content-length'], limits.jsonBodyLimitBytes, PLAIN, {
      timeoutMs: limits.bodyTimeoutMs,
      onBytes: countBytes(state, request),
    }).then(
      (text) => {
        try {
          const batch = (request.routeOptions.url ?? '').startsWith('/v1/batch/');
          done(
            null,
            parseJson(text, (counts) => (batch ? checkBatchCounts(counts, limits.maxBatchItems) : checkJobCounts(counts, limits.maxSamples))),
          );
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
  return new HttpError(415, 'unsupported_media_type', `content-encoding: ${coding.slice(0, 100)} is not accepted; send the body uncompressed`, {
    field: 'content-encoding',
  });
}

/** A pool that keeps nothing: JSON bodies are read into fresh memory the garbage collector takes. */
const PLAIN = {
  take: (bytes: number): Buffer => Buffer.allocUnsafe(bytes),
  release: (): void => undefined,
} as unknown as Parameters<typeof readPooledBody>[3];

/** Parses a JSON body after scanning it (`check` refuses counts the route cannot take); `__proto__` keys are refused by name. */
export function parseJson(text: Buffer, check: (counts: JsonCounts) => void): unknown {
  if (text.byteLength === 0) throw new HttpError(400, 'malformed_json', 'body: empty, expected a JSON object', { field: 'body' });
  // Decoded first: the scan of the string skips numbers in native code (scanJsonText). Structural
  // characters are ASCII, which UTF-8 never uses inside a multi-byte character.
  const json = text.toString('utf8');
  check(scanJsonText(json));
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new HttpError(400, 'malformed_json', `body: malformed JSON (${(error as Error).message.slice(0, 100)})`, { field: 'body' });
  }
  if (text.includes('"__proto__"')) {
    const path = protoKey(value, '');
    if (path !== undefined) throw new HttpError(400, 'forbidden_field', `${path}: the key __proto__ is not allowed`, { field: path });
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
