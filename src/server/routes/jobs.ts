/**
 * `POST /v1/jobs` (202 and an id), `GET /v1/jobs/:id`, `DELETE /v1/jobs/:id`. The route talks
 * only to `app.jobs` (a JobService), so where jobs are kept is replaceable.
 */
import type { FastifyInstance } from 'fastify';
import { checkJsonResultSize, encodeJsonResult, responseFormat } from '../codec.js';
import { HttpError, invalidField } from '../errors.js';
import { halfOutput, readJob, sendResult } from '../job-io.js';
import { submitKeptJob } from '../job-runner.js';
import { ERROR_DETAIL_SCHEMA, ERROR_RESPONSES, JOB_RESULT_SCHEMA } from '../response-schemas.js';
import { JOB_ID_PARAMS } from '../schemas.js';
import { BUILTIN_FLAGS } from '../../engine/parameters.js';
import { routeModule } from './route-module.js';
import { JOB_BODY } from './sync.js';

/** The synchronous endpoints, one per built-in flag (routes/sync.ts), as a message lists them. */
const SYNC_ENDPOINTS = BUILTIN_FLAGS.map((flag) => `/v1/${flag}`).join(', ');

const STRING = { type: 'string' } as const;

/** `{ id, status }`: a job still queued or running (202). */
const JOB_PENDING_SCHEMA = {
  type: 'object',
  required: ['id', 'status'],
  properties: { id: STRING, status: STRING },
} as const;

/** The answers of `POST /v1/jobs`: the new job's id, status and where to ask for it. */
const SUBMIT_RESPONSES = {
  202: {
    type: 'object',
    required: ['id', 'status', 'href'],
    properties: { id: STRING, status: STRING, href: STRING },
  },
  ...ERROR_RESPONSES,
} as const;

/** The JSON answers of `GET /v1/jobs/:id` (a ready result asked for binary is sent as bytes): finished with a result or an error, or still pending. */
const VIEW_RESPONSES = {
  200: {
    type: 'object',
    required: ['id', 'status'],
    properties: { id: STRING, status: STRING, result: JOB_RESULT_SCHEMA, error: ERROR_DETAIL_SCHEMA },
  },
  202: JOB_PENDING_SCHEMA,
  ...ERROR_RESPONSES,
} as const;

/** The answers of `DELETE /v1/jobs/:id`: deleted (finished) or cancelled (queued); a running job is a 409 error. */
const DELETE_RESPONSES = {
  200: {
    type: 'object',
    required: ['id', 'status', 'deleted'],
    properties: { id: STRING, status: STRING, deleted: { type: 'boolean' } },
  },
  ...ERROR_RESPONSES,
} as const;

/** The asynchronous job routes. */
export const jobRoutes = routeModule('tscuda-job-routes', async (app: FastifyInstance) => {
  const unknownJob = (id: string): HttpError =>
    new HttpError(
      404,
      'unknown_job',
      `id: no job ${JSON.stringify(id)} (unknown, or finished more than ${app.config.limits.jobRetention.ttlMs} ms ago and no longer kept)`,
      {
        field: 'id',
      },
    );

  app.post('/v1/jobs', { schema: { body: JOB_BODY, response: SUBMIT_RESPONSES } }, (request, reply) =>
    app.gpu.track(async () => {
      const spec = readJob(request, undefined);
      // A stored result does not say which 16-bit type its waves' bits are (nor does one another worker holds).
      if (halfOutput(spec) !== undefined)
        throw invalidField(
          'outputDtype',
          `${spec.outputDtype} waves are returned by the synchronous endpoints (${SYNC_ENDPOINTS}); /v1/jobs returns f32 or f64`,
        );
      const { id, status } = await submitKeptJob(request, spec);
      return reply
        .code(202)
        .header('location', `/v1/jobs/${id}`)
        .send({ id, status, href: `/v1/jobs/${id}` });
    }),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/jobs/:id',
    { schema: { params: JOB_ID_PARAMS, response: VIEW_RESPONSES } },
    async (request, reply) => {
      const format = responseFormat(request.headers.accept);
      const view = await app.jobs.view(request.params.id);
      if (view === undefined) throw unknownJob(request.params.id);
      if (view.result !== undefined) {
        if (format === 'binary') return sendResult(reply.header('x-tscuda-job-status', 'ready'), view.result, format);
        checkJsonResultSize(view.result, app.config.limits.maxJsonResultValues);
        return reply.send({ id: view.id, status: 'ready', result: encodeJsonResult(view.result) });
      }
      if (view.error !== undefined) return reply.send({ id: view.id, status: view.status, error: view.error });
      return reply.code(202).send({ id: view.id, status: view.status });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/jobs/:id',
    { schema: { params: JOB_ID_PARAMS, response: DELETE_RESPONSES } },
    async (request, reply) => {
      const answer = await app.jobs.delete(request.params.id);
      if (answer === undefined) throw unknownJob(request.params.id);
      if (answer.statusCode >= 400) app.accounting.failed(request, 'INVALID');
      return reply.code(answer.statusCode).send(answer.body);
    },
  );
});
