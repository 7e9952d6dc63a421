/** `GET /metrics`: the Prometheus exposition; in a cluster every worker's series, `?scope=worker` for this process only. */
import type { FastifyInstance } from 'fastify';
import type { ServerState } from '../state.js';

/** Registers the metrics route. */
export function metricsRoutes(app: FastifyInstance, state: ServerState): void {
  app.get<{ Querystring: { scope?: string | undefined } }>('/metrics', async (request, reply) => {
    const all =
      request.query.scope === 'worker' || state.options.clusterMetrics === undefined
        ? undefined
        : await state.options.clusterMetrics();
    return reply.type(state.metrics.contentType).send(all ?? (await state.metrics.expose()));
  });
}
