/** `GET /v2/health/live` and `/v2/health/ready` (KServe v2 paths): live while the process serves, ready while GPU work can run. */
import type { FastifyInstance } from 'fastify';
import { ERROR_BODY_SCHEMA, ERROR_RESPONSES } from '../response-schemas.js';
import { routeModule } from './route-module.js';

/** `{ ready: false, reason }`: why GPU work cannot run here now. */
const NOT_READY_SCHEMA = {
  type: 'object',
  required: ['ready', 'reason'],
  properties: { ready: { type: 'boolean' }, reason: { type: 'string' } },
} as const;

/** The answers of the live route. */
const LIVE_RESPONSES = {
  200: { type: 'object', required: ['live'], properties: { live: { type: 'boolean' } } },
  ...ERROR_RESPONSES,
} as const;

/** The answers of the ready route: a 503 is either not ready or an error of the error handler (a refused request). */
const READY_RESPONSES = {
  200: {
    type: 'object',
    required: ['ready'],
    properties: { ready: { type: 'boolean' }, note: { type: 'string' } },
  },
  ...ERROR_RESPONSES,
  503: { anyOf: [NOT_READY_SCHEMA, ERROR_BODY_SCHEMA] },
} as const;

/** The health routes. */
export const healthRoutes = routeModule('tscuda-health-routes', async (app: FastifyInstance) => {
  app.get('/v2/health/live', { schema: { response: LIVE_RESPONSES } }, async () => ({ live: true }));
  app.get('/v2/health/ready', { schema: { response: READY_RESPONSES } }, async (_request, reply) => {
    const reason = app.gpu.notReadyReason();
    if (reason === null) return { ready: true };
    if (!app.gpu.closing && app.gpu.lost && app.config.options.peersReady?.() === true)
      return { ready: true, note: 'this worker is leaving; another serves' };
    return reply.code(503).send({ ready: false, reason });
  });
});
