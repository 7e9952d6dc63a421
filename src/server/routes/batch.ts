/** `POST /v1/batch/{gradient,lerp,slerp}`: small items through a batcher per kind and vector length. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BATCH_KINDS, parseBatchItems, type BatchItems, type BatchKind, type BatchSubmitter } from '../batch.js';
import { responseFormat } from '../codec.js';
import { HttpError, invalidField } from '../errors.js';
import { ERROR_RESPONSES } from '../response-schemas.js';
import { BATCH_BODY_SCHEMA } from '../schemas.js';
import { requireGpu, track, untilLost, type ServerState } from '../state.js';

/** The batcher of `kind` for vectors of `dim` floats, made on first use (at most maxBatchDims per kind). */
function batcherFor<K extends BatchKind>(state: ServerState, kind: K, dim: number): BatchSubmitter<BatchItems[K]> {
  const key = `${kind}:${dim}`;
  const known = state.batchers.get(key);
  if (known !== undefined) return known.submitter as BatchSubmitter<BatchItems[K]>;
  const factory = state.options.batchers?.[kind] as ((dim: number) => BatchSubmitter<BatchItems[K]>) | undefined;
  if (factory === undefined) throw new HttpError(503, 'batcher_unavailable', `this server has no ${kind} batcher`);
  const sameKind = [...state.batchers.values()].filter((b) => b.kind === kind).length;
  if (sameKind >= state.limits.maxBatchDims)
    throw invalidField(
      'items',
      `vectors of ${dim} values would need a new ${kind} batcher; this server serves at most ${state.limits.maxBatchDims} vector lengths per kind`,
    );
  const submitter = factory(dim);
  state.batchers.set(key, { kind, dim, submitter: submitter as BatchSubmitter<unknown> });
  return submitter;
}

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

/** Registers the batch routes. */
export function batchRoutes(app: FastifyInstance, state: ServerState): void {
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
        track(state, async () => {
          const format = responseFormat(request.headers.accept);
          const { items, dim } = parseBatchItems(
            kind,
            request.body,
            state.limits.maxBatchItems,
            state.limits.maxBatchDim,
          );
          // Bad input first, even with no GPU.
          const timeoutMs = (request.body as { timeout?: number | undefined }).timeout ?? state.limits.defaultTimeoutMs;
          if (timeoutMs > state.limits.maxTimeoutMs)
            throw invalidField('timeout', `must be at most ${state.limits.maxTimeoutMs} ms, got ${timeoutMs}`);
          if (state.options.batchers?.[kind] === undefined || state.closing !== null || state.lostError !== null)
            requireGpu(state);
          const batcher = batcherFor(state, kind, dim);
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
            outputs = await untilLost(
              state,
              Promise.race([batcher.submit(items, { wait: false, signal: abort.signal }), deadline]),
              (error) => abort.abort(error),
            );
          } finally {
            clearTimeout(timer);
            deadline.catch(() => undefined);
          }
          state.metrics.batchSize.observe({ endpoint }, items.length);
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
}
