/** `POST /v1/stft`, `/v1/cycles`, `/v1/wavelet`: one job with the endpoint's flag, answered with its result. */
import type { FastifyInstance } from 'fastify';
import { BUILTIN_FLAGS } from '../../engine/parameters.js';
import { checkJsonResultSize, responseFormat } from '../codec.js';
import { halfOutput, readJob, sendResult } from '../job-io.js';
import { runJob } from '../job-runner.js';
import { ERROR_RESPONSES, JOB_RESULT_SCHEMA } from '../response-schemas.js';
import { JOB_BODY_SCHEMA } from '../schemas.js';
import { routeModule } from './route-module.js';

/** A job body: JSON (validated by the schema) or binary samples. */
export const JOB_BODY = {
  content: { 'application/json': { schema: JOB_BODY_SCHEMA }, 'application/octet-stream': { schema: {} } },
};

/** The JSON answers of a synchronous job; its result asked for binary is sent as bytes, with no schema. */
const SYNC_RESPONSES = { 200: JOB_RESULT_SCHEMA, ...ERROR_RESPONSES } as const;

/** The synchronous job routes. */
export const syncRoutes = routeModule('tscuda-sync-routes', async (app: FastifyInstance) => {
  for (const flag of BUILTIN_FLAGS) {
    const endpoint = `/v1/${flag}`;
    app.post(endpoint, { schema: { body: JOB_BODY, response: SYNC_RESPONSES } }, (request, reply) =>
      app.gpu.track(async () => {
        const format = responseFormat(request.headers.accept);
        // Bad input is refused as such even when no GPU could run it.
        const spec = readJob(request, flag);
        const result = await runJob(request, reply, spec, endpoint);
        if (format === 'json') checkJsonResultSize(result, app.config.limits.maxJsonResultValues);
        return sendResult(reply, result, format, 200, halfOutput(spec), app.bodies);
      }),
    );
  }
});
