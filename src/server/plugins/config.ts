/**
 * The server's settings, read-only: its options, its resolved limits, what parameter checks need
 * and what `/v1/info` says of it. Decorates `config`.
 */
import type { CreateServerOptions, ServerLimits } from '../options.js';
import type { ParamContext } from '../params.js';
import { sharedPlugin } from './shared-plugin.js';

/** A server's settings, fixed when it is created. */
export interface ServerConfig {
  readonly options: CreateServerOptions;
  /** `options.limits` with every default filled in. */
  readonly limits: ServerLimits;
  /** What parameter checks need beyond a request (flags of registered stages, timeout bounds). */
  readonly paramContext: ParamContext;
  /** tscuda's version, from its package.json. */
  readonly version: string;
  /** When the server was created (ms since the epoch). */
  readonly startedAt: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The server's settings (plugins/config.ts). */
    readonly config: ServerConfig;
  }
}

/** Decorates `config`. */
export const configPlugin = sharedPlugin<{ config: ServerConfig }>(
  async (app, { config }) => {
    app.decorate('config', config);
  },
  { name: 'tscuda-config' },
);
