/**
 * Load shedding as a server plugin: admission asked for every request on its headers, the
 * sampler of the loop stopped on close. Decorates `shedding` (shedding/index.ts).
 */
import type { LoadShedding, Shedding } from '../shedding/index.js';
import { sharedPlugin } from './shared-plugin.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Load shedding: the requests in progress, the admitted share, the bodies' bound (shedding/index.ts). */
    readonly shedding: Shedding;
  }
}

/** Decorates `shedding` and asks it to admit each request before any other hook of the server but the error handler's checks. */
export const sheddingPlugin = sharedPlugin<{ shedding: LoadShedding }>(
  async (app, { shedding }) => {
    app.decorate('shedding', shedding);
    // Callback style, not async: every request passes here, and an async hook costs a promise each.
    app.addHook('onRequest', (request, reply, done) => shedding.admit(request, reply, done));
    app.addHook('onClose', (_instance, done) => {
      shedding.stop();
      done();
    });
  },
  { name: 'tscuda-shedding' },
);
