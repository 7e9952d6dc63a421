/** `GET /metrics`: the Prometheus exposition; in a cluster every worker's series, `?scope=worker` for this process only. */
import type { FastifyInstance } from 'fastify';
import { ERROR_RESPONSES } from '../response-schemas.js';
import { routeModule } from './route-module.js';

/** The metrics route. */
export const metricsRoutes = routeModule('tscuda-metrics-routes', async (app: FastifyInstance) => {
  // The exposition is Prometheus text, sent as it is: only the error answers have a JSON schema.
  app.get<{ Querystring: { scope?: string | undefined } }>(
    '/metrics',
    { schema: { response: ERROR_RESPONSES } },
    async (request, reply) => {
      const all =
        request.query.scope === 'worker' || app.config.options.clusterMetrics === undefined
          ? undefined
          : await app.config.options.clusterMetrics();
      return reply.type(app.metrics.contentType).send(all ?? (await app.metrics.expose()));
    },
  );
});
