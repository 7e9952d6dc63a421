/**
 * A job request in and its result out, shared by the routes that run jobs: the signal and
 * parameters read from a JSON or binary body (checked by the engine's rules before any GPU is
 * needed), the pooled memory a job reads and writes, and the result written as JSON or binary.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JobValidationError } from '../engine/errors.js';
import type { BuiltinJobFlag, Job, JobData, JobEngineLike, JobHalfType, JobResult, JobSpec } from '../engine/types.js';
import { checkSampleTypes } from '../engine/validate.js';
import {
  decodeBinarySignal,
  decodeJsonSignal,
  encodeBinaryResultParts,
  encodeJsonResult,
  type ResponseFormat,
} from './codec.js';
import { clip } from '../runtime/value-checks.js';
import { HttpError, invalidField, toHttpError } from './errors.js';
import {
  SIXTEEN_BIT_DTYPES,
  checkJobParams,
  headerParams,
  paramsFromStrings,
  sampleDtype,
  type RawParams,
  type SampleDtype,
} from './params.js';
import type { PooledBodies } from './plugins/bodies.js';
import { markChecked } from './fusion/checked-specs.js';
import { cachedQuery, queryKey, rememberQuery, type CheckedQuery } from './query-cache.js';
import type { Precision } from '../runtime/fft/precision.js';

/** Binary answers of at least this many bytes are written part by part instead of joined. */
const STREAM_RESULT_BYTES = 1 << 20;

/** A query as strings; a parameter given twice is refused, `__proto__` and the like are plain unknown names. */
export function queryStrings(query: unknown): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (query === null || typeof query !== 'object') return out;
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) {
    if (typeof v !== 'string') throw invalidField(clip(k), 'is given more than once');
    out[k] = v;
  }
  return out;
}

/** Every value of each header (a repeated one is seen as such); light-my-request's injected requests have only the joined ones. */
function distinctHeaders(request: FastifyRequest): Readonly<Record<string, string | string[] | undefined>> {
  return (request.raw.headersDistinct as typeof request.raw.headersDistinct | undefined) ?? request.headers;
}

/** Whether any header line of the request is named x-tscuda-* (read from the raw lines: Node builds headersDistinct anew on each read). */
function hasTscudaHeader(request: FastifyRequest): boolean {
  const lines = request.raw.rawHeaders as string[] | undefined;
  if (lines === undefined) return true;
  for (let i = 0; i < lines.length; i += 2) if (/^x-tscuda-/i.test(lines[i]!)) return true;
  return false;
}

/** A binary request's parameters: its query and its x-tscuda-* headers, each name given once in all. */
function binaryParamStrings(request: FastifyRequest): Record<string, string> {
  const fromQuery = queryStrings(request.query);
  if (!hasTscudaHeader(request)) return fromQuery;
  const fromHeaders = headerParams(distinctHeaders(request));
  for (const name of Object.keys(fromHeaders))
    if (name in fromQuery)
      throw invalidField(name, `is given both in the query and as x-tscuda-${name.toLowerCase()}: give it once`);
  return { ...fromHeaders, ...fromQuery };
}

/**
 * The signal and parameters of a job request, from a JSON or a binary body. Both default to the
 * engine's precision (f32 without an engine); a binary body may also hold 16-bit samples (`dtype`
 * i16, f16, bf16: the job's `data` is then an Int16Array or the f16/bf16 bits, with `dtype` and
 * `scale`). The engine's rules check every parameter here, so bad input is refused as such even
 * when no GPU could run it; and every sample is finite (a JSON signal's numbers as they are
 * decoded, a binary body's by the scan of engine/finite-samples.ts), before the request is fused
 * with others or queued. The server's parts are read from the request's instance (`request.server`).
 */
export function readJob(request: FastifyRequest, endpointFlag: BuiltinJobFlag | undefined): JobSpec {
  const { config, gpu, jobs } = request.server;
  const { limits } = config;
  const precision = gpu.precision;
  const body: unknown = request.body;
  let raw: RawParams = {};
  let data: JobData;
  let dtype: SampleDtype;
  /** A binary request's query seen before: its parameters as they were parsed and validated then (query-cache.ts). */
  let known: CheckedQuery | undefined;
  let key: string | undefined;
  if (Buffer.isBuffer(body)) {
    key = hasTscudaHeader(request) ? undefined : queryKey(request.url, endpointFlag, body.byteLength, precision);
    known = key === undefined ? undefined : cachedQuery(config.paramContext, key);
    if (known !== undefined) dtype = known.dtype;
    else {
      raw = paramsFromStrings(binaryParamStrings(request));
      dtype = raw.dtype === undefined ? precision : sampleDtype(raw.dtype);
      delete raw.dtype;
    }
    data = decodeBinarySignal(body, dtype);
  } else if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    // Query parameters and x-tscuda-* headers are read only with binary bodies: ignoring one would run the job with the default instead.
    const query = Object.keys(queryStrings(request.query))[0];
    // Only whether one is there: the joined headers do (Node's headersDistinct is built anew on each read).
    const header = Object.keys(headerParams(request.headers))[0];
    const misplaced =
      query !== undefined ? clip(query) : header !== undefined ? `x-tscuda-${header.toLowerCase()}` : undefined;
    if (misplaced !== undefined)
      throw new HttpError(
        400,
        'unknown_field',
        `${misplaced}: query parameters and x-tscuda-* headers are read only with binary bodies; put it in the JSON body`,
        {
          field: misplaced,
        },
      );
    const { signal, ...rest } = body as Record<string, unknown>;
    raw = rest;
    dtype = raw.dtype === undefined ? precision : sampleDtype(raw.dtype);
    // JSON numbers are floats: 16-bit samples would be rounded or wrapped on the way in, silently.
    if (SIXTEEN_BIT_DTYPES.includes(dtype))
      throw invalidField(
        'dtype',
        `${dtype} samples travel in binary bodies (application/octet-stream); a JSON signal is numbers, stored as f32 or f64`,
      );
    delete raw.dtype;
    const decoded = decodeJsonSignal(signal, dtype as Precision, limits.maxSamples);
    data = decoded.data;
    if (decoded.rows !== undefined) {
      if (raw.batch !== undefined && raw.batch !== decoded.rows)
        throw invalidField('batch', `is ${clip(String(raw.batch))} but the signal has ${decoded.rows} rows`);
      raw.batch = decoded.rows;
    }
  } else {
    throw new HttpError(
      415,
      'unsupported_media_type',
      'body: expected a JSON object (application/json) or samples (application/octet-stream)',
      { field: 'content-type' },
    );
  }
  if (data.length > limits.maxSamples)
    throw new HttpError(
      413,
      'too_many_samples',
      `signal: ${data.length} samples, at most ${limits.maxSamples} per request`,
      { field: 'signal' },
    );
  const { parsed, parameters } = known ?? checkJobParams(raw, data.length, config.paramContext, endpointFlag);
  if (known === undefined && key !== undefined) rememberQuery(config.paramContext, key, { dtype, parsed, parameters });
  const spec: JobSpec = { ...parsed.spec, data, ...(SIXTEEN_BIT_DTYPES.includes(dtype) ? { dtype } : {}) };
  try {
    // The samples' type with `scale` and `outputDtype` (scale on f32 data, outputDtype i16): the engine's own
    // check; a binary body's samples scanned for NaN too (decodeJsonSignal refused a JSON signal's), unless
    // the job goes where they are searched anyway: a service whose submit scans them in its own precision
    // (a queue), or an engine that searches them on the GPU (the fuser scans the requests it fuses).
    const scannedThere = (endpointFlag === undefined && jobs.scansSamples) || gpu.checksSamples;
    checkSampleTypes(spec, { finite: Buffer.isBuffer(body) && !scannedThere, precision });
  } catch (error) {
    if (error instanceof JobValidationError) throw toHttpError(error, 1);
    throw error;
  }
  // The fuser takes these parameters as they are rather than validating them again (checked-specs.ts).
  markChecked(spec, parameters);
  return spec;
}

/** The 16-bit type a job's waves come back in (its `outputDtype` f16/bf16), which names their Uint16Arrays in a response. */
export function halfOutput(spec: Pick<JobSpec, 'outputDtype'>): JobHalfType | undefined {
  return spec.outputDtype === 'f16' || spec.outputDtype === 'bf16' ? spec.outputDtype : undefined;
}

/**
 * Writes a job's result as JSON or binary (a large binary answer part by part, not joined first);
 * `half`: the job's `outputDtype` when it asked for f16/bf16 waves (halfOutput()). With `pool`, a
 * smaller answer of several parts is joined in pooled memory, handed back once the response is
 * done: a fresh Buffer per answer was most of a small request's garbage (external memory, which
 * brings on full collections).
 */
export function sendResult(
  reply: FastifyReply,
  result: JobResult,
  format: ResponseFormat,
  code = 200,
  half?: JobHalfType,
  pool?: Pick<PooledBodies, 'take' | 'release'>,
): FastifyReply {
  if (format === 'binary') {
    const b = encodeBinaryResultParts(result, half);
    const r = reply
      .code(code)
      .type('application/octet-stream')
      .header('x-tscuda-fields', b.fields)
      .header('x-tscuda-result', b.meta);
    if (b.parts.length === 1) return r.send(b.parts[0]!);
    if (b.byteLength >= STREAM_RESULT_BYTES)
      return r.header('content-length', String(b.byteLength)).send(Readable.from(b.parts));
    if (pool === undefined || b.byteLength === 0) return r.send(Buffer.concat(b.parts, b.byteLength));
    const joined = pool.take(b.byteLength);
    let at = 0;
    for (const part of b.parts) at += part.copy(joined, at);
    // 'close' comes after the last byte was handed to the socket, and when the connection goes first.
    reply.raw.once('close', () => pool.release(joined));
    return r.send(joined);
  }
  return reply.code(code).send(encodeJsonResult(result, half));
}

/**
 * A pooled array for the filtered wave of a synchronous stft job (its largest result: the size of
 * its input), so the response's biggest part is not fresh memory each time: in the engine's
 * precision, or the bits of 16-bit waves (outputDtype f16/bf16) in a Uint16Array.
 */
export function pooledFiltered(
  bodies: Pick<PooledBodies, 'take'>,
  spec: JobSpec,
  precision: Precision,
): { buffer: Buffer; array: Float32Array | Float64Array | Uint16Array } | undefined {
  if (!spec.flags.includes('stft') || spec.into?.filtered !== undefined) return undefined;
  const n = spec.data.length;
  const half = halfOutput(spec) !== undefined;
  const buffer = bodies.take(n * (half ? 2 : precision === 'f32' ? 4 : 8));
  const array = half
    ? new Uint16Array(buffer.buffer, buffer.byteOffset, n)
    : precision === 'f32'
      ? new Float32Array(buffer.buffer, buffer.byteOffset, n)
      : new Float64Array(buffer.buffer, buffer.byteOffset, n);
  return { buffer, array };
}
