/**
 * Every route of the server, one module per resource. Adding a route: a new module exporting
 * `(app, state) => void`, and one line here.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerState } from '../state.js';
import { batchRoutes } from './batch.js';
import { healthRoutes } from './health.js';
import { infoRoutes } from './info.js';
import { jobRoutes } from './jobs.js';
import { metricsRoutes } from './metrics.js';
import { syncRoutes } from './sync.js';

/** Registers some routes on a server, reading what they need from its state. */
export type RouteModule = (app: FastifyInstance, state: ServerState) => void;

/** The server's routes, in registration order. */
export const ROUTES: readonly RouteModule[] = [
  syncRoutes,
  jobRoutes,
  batchRoutes,
  healthRoutes,
  metricsRoutes,
  infoRoutes,
];
