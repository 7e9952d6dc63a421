/** `POST /v1/batch/{gradient,lerp,slerp}`: small items through a batcher per kind and vector length. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BATCH_KINDS, parseBatchItems } from '../batch.js';
import { responseFormat } from '../codec.js';
import { HttpError, invalidField } from '../errors.js';
import { ERROR_RESPONSES } from '../response-schemas.js';
import { BATCH_BODY_SCHEMA } from '../schemas.js';
import { routeModule } from './route-module.js';

/** A batch body must be JSON: anything else is 415 before fastify looks for a parser. */
function requireJson(request: FastifyRequest): void {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    throw new HttpError(
      415,
      'unsupported_media_type',
      `content-type: batch requests are JSON (application/json), got ${JSON.stringify(type.slice(0, 100))}`,
      {
        field: 'content-type',
      },
    );
}

/** The JSON answers of a batch request: one output vector per item, in order (binary: packed bytes, no schema). */
const BATCH_RESPONSES = {
  200: {
    type: 'object',
    required: ['outputs'],
    properties: { outputs: { type: 'array', items: { type: 'array', items: { type: 'number' } } } },
  },
  ...ERROR_RESPONSES,
} as const;

/** The batch routes. */
export const batchRoutes = routeModule('tscuda-batch-routes', async (app: FastifyInstance) => {
  const { limits } = app.config;
  for (const kind of BATCH_KINDS) {
    const endpoint = `/v1/batch/${kind}`;
    const onRequest = (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void => {
      try {
        requireJson(request);
        done();
      } catch (error) {
        done(error as Error);
      }
    };
    app.post(
      endpoint,
      { schema: { body: BATCH_BODY_SCHEMA, response: BATCH_RESPONSES }, onRequest },
      (request, reply) =>
        app.gpu.track(async () => {
          const format = responseFormat(request.headers.accept);
          const { items, dim } = parseBatchItems(kind, request.body, limits.maxBatchItems, limits.maxBatchDim);
          // Bad input first, even with no GPU.
          const timeoutMs = (request.body as { timeout?: number | undefined }).timeout ?? limits.defaultTimeoutMs;
          if (timeoutMs > limits.maxTimeoutMs)
            throw invalidField('timeout', `must be at most ${limits.maxTimeoutMs} ms, got ${timeoutMs}`);
          if (!app.batchers.has(kind) || app.gpu.closing || app.gpu.lost) app.gpu.require();
          const batcher = app.batchers.batcherFor(kind, dim);
          const abort = new AbortController();
          // A batch request is not an engine job: its deadline is kept here, and aborts its wait in the batcher.
          let timer: NodeJS.Timeout | undefined;
          const deadline = new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              const error = new HttpError(
                504,
                'timeout',
                `the items were not computed within the timeout of ${timeoutMs} ms`,
                { field: 'timeout' },
              );
              abort.abort(error);
              reject(error);
            }, timeoutMs);
          });
          let outputs: Float32Array[];
          try {
            outputs = await app.gpu.untilLost(
              Promise.race([batcher.submit(items, { wait: false, signal: abort.signal }), deadline]),
              (error) => abort.abort(error),
            );
          } finally {
            clearTimeout(timer);
            deadline.catch(() => undefined);
          }
          app.metrics.batchSize.observe({ endpoint }, items.length);
          if (format === 'binary') {
            const packed = new Float32Array(outputs.length * dim);
            outputs.forEach((o, i) => packed.set(o, i * dim));
            return reply
              .type('application/octet-stream')
              .header('x-tscuda-fields', `outputs=f32[${outputs.length},${dim}]`)
              .send(Buffer.from(packed.buffer));
          }
          return reply.send({ outputs: outputs.map((o) => Array.from(o)) });
        }),
    );
  }
});
