/**
 * How a route module is declared: an encapsulated fastify plugin (its routes and route hooks are
 * its own) that fastify refuses to load on an instance without the server's shared parts, so a
 * route cannot be registered where admission, accounting, the pooled bodies or the GPU's
 * lifecycle would not see it.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { withMeta } from '../plugins/shared-plugin.js';

/** Registers some routes on a server; what they use is the server's decorators (SERVER_DECORATORS). */
export type RouteModule = FastifyPluginAsync;

/**
 * The decorators of the server's plugins (plugins/), which every route module may use: its settings
 * (`config`), `metrics` and `accounting`, load shedding (`shedding`), the pooled `bodies`, the
 * `batchers`, and the GPU's lifecycle (`gpu`) with its job service (`jobs`).
 */
export const SERVER_DECORATORS = [
  'config',
  'metrics',
  'accounting',
  'shedding',
  'bodies',
  'batchers',
  'gpu',
  'jobs',
] as const satisfies readonly (keyof FastifyInstance)[];

/** `register` as a route module named `name`: fastify checks, when it is registered, that the instance has every SERVER_DECORATORS. */
export function routeModule(name: string, register: (app: FastifyInstance) => Promise<void>): RouteModule {
  return withMeta(register, { name, decorators: { fastify: SERVER_DECORATORS } });
}
