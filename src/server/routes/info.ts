/**
 * `GET /v1/info`: what this server serves (version, readiness, engine, flags, batch kinds,
 * limits, the caller's `info` such as devices). Process details (pid, Node version, memory,
 * uptime) only with `exposeProcessInfo`: they help an attacker more than a client.
 */
import type { FastifyInstance } from 'fastify';
import { BUILTIN_FLAGS } from '../../engine/parameters.js';
import { ERROR_RESPONSES, LIMITS_SCHEMA } from '../response-schemas.js';
import { routeModule } from './route-module.js';

/** The process's memory: resident set, the JavaScript heap in use, and memory outside it held by JavaScript objects (Buffers, typed arrays). */
function memoryFigures(): { rssBytes: number; heapUsedBytes: number; externalBytes: number } {
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed, externalBytes: m.external };
}

const NUMBER = { type: 'number' } as const;
const STRING = { type: 'string' } as const;

/** The answers of the info route. */
const INFO_RESPONSES = {
  200: {
    type: 'object',
    required: ['name', 'version', 'ready', 'reason', 'engine', 'flags', 'batch', 'limits'],
    // The caller's `info` (CreateServerOptions.info) adds fields of its own choosing (devices, versions).
    additionalProperties: true,
    properties: {
      name: STRING,
      version: STRING,
      ready: { type: 'boolean' },
      reason: { type: ['string', 'null'] },
      engine: {
        type: ['object', 'null'],
        properties: { label: STRING, precision: STRING, lanes: NUMBER, devices: { type: 'array', items: NUMBER } },
      },
      flags: { type: 'array', items: STRING },
      batch: { type: 'array', items: STRING },
      limits: LIMITS_SCHEMA,
      // With exposeProcessInfo only.
      node: STRING,
      pid: NUMBER,
      uptimeS: NUMBER,
      rssBytes: NUMBER,
      heapUsedBytes: NUMBER,
      externalBytes: NUMBER,
    },
  },
  ...ERROR_RESPONSES,
} as const;

/** The info route. */
export const infoRoutes = routeModule('tscuda-info-routes', async (app: FastifyInstance) => {
  app.get('/v1/info', { schema: { response: INFO_RESPONSES } }, async () => {
    const { config, gpu } = app;
    const { options } = config;
    const process_ =
      options.exposeProcessInfo === true
        ? {
            node: process.versions.node,
            pid: process.pid,
            uptimeS: (Date.now() - config.startedAt) / 1000,
            ...memoryFigures(),
          }
        : {};
    return {
      name: 'tscuda',
      version: config.version,
      ready: gpu.notReadyReason() === null,
      reason: gpu.notReadyReason(),
      engine: gpu.describe(),
      flags: [...BUILTIN_FLAGS, ...config.paramContext.extraFlags],
      batch: app.batchers.kinds,
      limits: config.limits,
      ...process_,
      ...options.info?.(),
    };
  });
});
