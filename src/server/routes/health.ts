/** `GET /v2/health/live` and `/v2/health/ready` (KServe v2 paths): live while the process serves, ready while GPU work can run. */
import type { FastifyInstance } from 'fastify';
import { notReadyReason, type ServerState } from '../state.js';

/** Registers the health routes. */
export function healthRoutes(app: FastifyInstance, state: ServerState): void {
  app.get('/v2/health/live', async () => ({ live: true }));
  app.get('/v2/health/ready', async (_request, reply) => {
    const reason = notReadyReason(state);
    if (reason === null) return { ready: true };
    if (state.closing === null && state.lostError !== null && state.options.peersReady?.() === true)
      return { ready: true, note: 'this worker is leaving; another serves' };
    return reply.code(503).send({ ready: false, reason });
  });
}
