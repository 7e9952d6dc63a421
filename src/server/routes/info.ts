/**
 * `GET /v1/info`: what this server serves (version, readiness, engine, flags, batch kinds,
 * limits, the caller's `info` such as devices). Process details (pid, Node version, memory,
 * uptime) only with `exposeProcessInfo`: they help an attacker more than a client.
 */
import type { FastifyInstance } from 'fastify';
import { BUILTIN_FLAGS } from '../../engine/parameters.js';
import { BATCH_KINDS } from '../batch.js';
import { ERROR_RESPONSES, LIMITS_SCHEMA } from '../response-schemas.js';
import { notReadyReason, type ServerState } from '../state.js';

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

/** Registers the info route. */
export function infoRoutes(app: FastifyInstance, state: ServerState): void {
  app.get('/v1/info', { schema: { response: INFO_RESPONSES } }, async () => {
    const { engine, options } = state;
    const process_ =
      options.exposeProcessInfo === true
        ? {
            node: process.versions.node,
            pid: process.pid,
            uptimeS: (Date.now() - state.startedAt) / 1000,
            ...memoryFigures(),
          }
        : {};
    return {
      name: 'tscuda',
      version: state.version,
      ready: notReadyReason(state) === null,
      reason: notReadyReason(state),
      engine:
        engine === null
          ? null
          : { label: engine.label, precision: engine.precision, lanes: engine.laneCount, devices: engine.devices },
      flags: [...BUILTIN_FLAGS, ...state.paramContext.extraFlags],
      batch: BATCH_KINDS.filter((k) => options.batchers?.[k] !== undefined),
      limits: state.limits,
      ...process_,
      ...options.info?.(),
    };
  });
}
