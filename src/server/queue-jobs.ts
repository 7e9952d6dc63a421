/**
 * The asynchronous job routes over the Redis queue (`tscuda serve --redis`): `POST /v1/jobs`,
 * `GET /v1/jobs/:id` and `DELETE /v1/jobs/:id` in the shapes of the in-memory routes of
 * createServer (same bodies, parameters, status codes and error format), but any server
 * instance on any host answers any job id, and the server needs no GPU: the jobs run on
 * `tscuda worker` processes. Plus a readiness probe that is 200 while Redis answers.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JobSpec } from '../engine/types.js';
import type { JobQueue, QueueJobResult, SubmitOptions } from '../queue/index.js';
import { decodeBinarySignal, decodeJsonSignal, encodeBinaryResultParts, encodeJsonResult, responseFormat } from './codec.js';
import { HttpError, invalidField, toHttpError } from './errors.js';
import { headerParams, paramsFromStrings, parseJobParams, sampleDtype, type RawParams } from './params.js';
import { JOB_BODY_SCHEMA, JOB_ID_PARAMS } from './schemas.js';

/** Options of registerQueueJobRoutes(). */
export interface QueueJobRoutesOptions {
  /** The queue the jobs go through (the caller owns it: close it after the server). */
  queue: JobQueue;
  /** Most samples in one job (413 beyond); default 2^26, as createServer. */
  maxSamples?: number | undefined;
  /** Largest binary body, bytes, when this function adds the binary body parser itself; default 256 MiB. */
  bodyLimitBytes?: number | undefined;
  /** `timeout` of a request that gives none (the job's time on the worker's engine), ms; default 30000. */
  defaultTimeoutMs?: number | undefined;
  /** Largest `timeout` a request may ask for, ms; default 600000. */
  maxTimeoutMs?: number | undefined;
  /** Flags of stages registered on the workers' engines. */
  extraFlags?: readonly string[] | undefined;
  /** `Retry-After` of a 503 while Redis is away, seconds; default 1. */
  retryAfterS?: number | undefined;
  /** Options of every submit (priority, attempts). */
  submit?: SubmitOptions | undefined;
  /** Path of the readiness probe (200 while Redis answers, 503 with the reason); default '/v2/health/queue'. */
  readinessPath?: string | undefined;
}

/** Why the queue cannot take jobs now, or null when it can. */
export function queueNotReadyReason(queue: JobQueue): string | null {
  return queue.reachable ? null : `the job queue's Redis (${queue.where}) is not reachable; reconnecting`;
}

/** Maps what the queue threw onto the server's errors; the rest as toHttpError does. */
export function queueHttpError(error: unknown, retryAfterS = 1): HttpError {
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'QueueUnavailableError') return new HttpError(503, 'queue_unavailable', message, { retryable: true, retryAfterS, cause: error });
  if (name === 'ResultTooLargeError') return new HttpError(413, 'result_too_large', message, { field: 'signal', cause: error });
  return toHttpError(error, retryAfterS);
}

function queryStrings(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (query === null || typeof query !== 'object') return out;
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) {
    if (typeof v !== 'string') throw invalidField(k, 'is given more than once');
    out[k] = v;
  }
  return out;
}

/** The JSON body of a finished job's result: the in-memory route's, plus who ran it (`queue`). */
function jsonResult(result: QueueJobResult): Record<string, unknown> {
  return { ...encodeJsonResult(result), queue: result.queue };
}

/** Registers the three job routes and the readiness probe on `app` (no other job routes may be registered on it). */
export function registerQueueJobRoutes(app: FastifyInstance, options: QueueJobRoutesOptions): void {
  const { queue } = options;
  const maxSamples = options.maxSamples ?? 1 << 26;
  const retryAfterS = options.retryAfterS ?? 1;
  const context = { extraFlags: options.extraFlags ?? [], defaultTimeoutMs: options.defaultTimeoutMs ?? 30_000, maxTimeoutMs: options.maxTimeoutMs ?? 600_000 };
  if (!app.hasContentTypeParser('application/octet-stream'))
    app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: options.bodyLimitBytes ?? 256 * 2 ** 20 }, (_request, body, done) => done(null, body));

  const fail = (reply: FastifyReply, error: unknown): FastifyReply => {
    const answer = queueHttpError(error, retryAfterS);
    if (answer.retryAfterS !== undefined) reply.header('retry-after', String(answer.retryAfterS));
    return reply.code(answer.statusCode).type('application/json').send(answer.toJSON());
  };

  /** The job of a request, as createServer reads it: JSON (`signal` and parameters) or binary (parameters in the query or x-tscuda-* headers). */
  const readJob = (request: FastifyRequest): JobSpec => {
    const body: unknown = request.body;
    let raw: RawParams;
    let data: Float32Array | Float64Array;
    if (Buffer.isBuffer(body)) {
      raw = paramsFromStrings({ ...headerParams(request.headers), ...queryStrings(request.query) });
      const dtype = raw.dtype === undefined ? 'f32' : sampleDtype(raw.dtype);
      delete raw.dtype;
      data = decodeBinarySignal(body, dtype);
    } else if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const first = Object.keys(queryStrings(request.query))[0];
      if (first !== undefined) throw new HttpError(400, 'unknown_field', `${first}: query parameters are read only with binary bodies; put it in the JSON body`, { field: first });
      const { signal, ...rest } = body as Record<string, unknown>;
      raw = rest;
      const dtype = raw.dtype === undefined ? 'f32' : sampleDtype(raw.dtype);
      delete raw.dtype;
      const decoded = decodeJsonSignal(signal, dtype);
      data = decoded.data;
      if (decoded.rows !== undefined) {
        if (raw.batch !== undefined && raw.batch !== decoded.rows) throw invalidField('batch', `is ${String(raw.batch)} but the signal has ${decoded.rows} rows`);
        raw.batch = decoded.rows;
      }
    } else {
      throw new HttpError(415, 'unsupported_media_type', 'body: expected a JSON object (application/json) or samples (application/octet-stream)', { field: 'content-type' });
    }
    if (data.length > maxSamples) throw new HttpError(413, 'too_many_samples', `signal: ${data.length} samples, at most ${maxSamples} per request`, { field: 'signal' });
    const parsed = parseJobParams(raw, data.length, context);
    return { ...parsed.spec, data, timeoutMs: parsed.timeoutMs };
  };

  const unknownJob = (id: string): HttpError => new HttpError(404, 'unknown_job', `id: no job ${JSON.stringify(id)} (unknown, or finished and no longer kept)`, { field: 'id' });
  const jobBodySchema = { content: { 'application/json': { schema: JOB_BODY_SCHEMA }, 'application/octet-stream': { schema: {} } } };

  app.post('/v1/jobs', { schema: { body: jobBodySchema } }, async (request, reply) => {
    try {
      const handle = await queue.submit(readJob(request), options.submit);
      const href = `/v1/jobs/${handle.id}`;
      return reply.code(202).header('location', href).send({ id: handle.id, status: 'queued', href });
    } catch (error) {
      return fail(reply, error);
    }
  });

  app.get<{ Params: { id: string } }>('/v1/jobs/:id', { schema: { params: JOB_ID_PARAMS } }, async (request, reply) => {
    try {
      const format = responseFormat(request.headers.accept);
      const view = await queue.view(request.params.id);
      if (view.status === 'unknown') throw unknownJob(view.id);
      if (view.result !== undefined) {
        if (format === 'json') return reply.send({ id: view.id, status: 'ready', result: jsonResult(view.result) });
        const b = encodeBinaryResultParts(view.result);
        return reply
          .type('application/octet-stream')
          .header('x-tscuda-job-status', 'ready')
          .header('x-tscuda-job-attempts', String(view.result.queue.attempts))
          .header('x-tscuda-fields', b.fields)
          .header('x-tscuda-result', b.meta)
          .send(b.parts.length === 1 ? b.parts[0]! : Buffer.concat(b.parts, b.byteLength));
      }
      if (view.error !== undefined) return reply.send({ id: view.id, status: view.status, error: queueHttpError(view.error, retryAfterS).toJSON().error });
      return reply.code(202).send({ id: view.id, status: view.status });
    } catch (error) {
      return fail(reply, error);
    }
  });

  app.delete<{ Params: { id: string } }>('/v1/jobs/:id', { schema: { params: JOB_ID_PARAMS } }, async (request, reply) => {
    try {
      const id = request.params.id;
      if (await queue.cancel(id)) return reply.send({ id, status: 'cancelled', deleted: false });
      const view = await queue.view(id);
      if (view.status === 'unknown') throw unknownJob(id);
      if (view.status === 'queued' || view.status === 'running')
        return reply.code(409).send(new HttpError(409, 'job_running', `id: job ${id} is running and cannot be cancelled; it finishes on its own`, { field: 'id' }).toJSON());
      await queue.forget(id);
      return reply.send({ id, status: view.status, deleted: true });
    } catch (error) {
      return fail(reply, error);
    }
  });

  app.get(options.readinessPath ?? '/v2/health/queue', async (_request, reply) => {
    const reason = queueNotReadyReason(queue);
    if (reason === null && (await queue.ping())) return { ready: true };
    return reply.code(503).send({ ready: false, reason: reason ?? `the job queue's Redis (${queue.where}) did not answer a ping` });
  });
}
