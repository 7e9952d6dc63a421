/** `GET /metrics`: the Prometheus exposition; in a cluster every worker's series, `?scope=worker` for this process only. */
import type { FastifyInstance } from 'fastify';
import { ERROR_RESPONSES } from '../response-schemas.js';
import type { ServerState } from '../state.js';

/** Registers the metrics route. */
export function metricsRoutes(app: FastifyInstance, state: ServerState): void {
  // The exposition is Prometheus text, sent as it is: only the error answers have a JSON schema.
  app.get<{ Querystring: { scope?: string | undefined } }>(
    '/metrics',
    { schema: { response: ERROR_RESPONSES } },
    async (request, reply) => {
      const all =
        request.query.scope === 'worker' || state.options.clusterMetrics === undefined
          ? undefined
          : await state.options.clusterMetrics();
      return reply.type(state.metrics.contentType).send(all ?? (await state.metrics.expose()));
    },
  );
}
