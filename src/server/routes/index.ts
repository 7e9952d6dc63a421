/**
 * Every route of the server, one module per resource (route-module.ts). Adding a route: a new
 * module declared with `routeModule(name, async (app) => ...)`, and one line here.
 */
import { batchRoutes } from './batch.js';
import { healthRoutes } from './health.js';
import { infoRoutes } from './info.js';
import { jobRoutes } from './jobs.js';
import { metricsRoutes } from './metrics.js';
import type { RouteModule } from './route-module.js';
import { syncRoutes } from './sync.js';

export { SERVER_DECORATORS, routeModule, type RouteModule } from './route-module.js';

/** The server's routes, in registration order. */
export const ROUTES: readonly RouteModule[] = [
  syncRoutes,
  jobRoutes,
  batchRoutes,
  healthRoutes,
  metricsRoutes,
  infoRoutes,
];
