/**
 * The server's plugins through fastify-plugin (the fastify team's own package for it): a shared
 * part is not encapsulated, so what it decorates and hooks belongs to the registering instance and
 * every route registered after it sees it; fastify checks each plugin's named dependencies and
 * required decorators when it is registered, and refuses to load it without them.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions } from 'fastify';

/** What fastify checks of a plugin before it loads it. */
export interface PluginMeta {
  /** The name other plugins depend on, shown in fastify's errors and printPlugins(). */
  readonly name: string;
  /** Plugins that must be registered before this one, by name (fastify refuses to load it otherwise). */
  readonly dependencies?: readonly string[] | undefined;
  /** Decorators the instance must have when this plugin is registered (fastify refuses to load it otherwise). */
  readonly decorators?: { readonly fastify?: readonly (keyof FastifyInstance)[] | undefined } | undefined;
}

/** The fastify major version the server's plugins are written for. */
const FASTIFY_RANGE = '5.x';

function wrap<Options extends FastifyPluginOptions>(
  plugin: FastifyPluginAsync<Options>,
  meta: PluginMeta,
  encapsulate: boolean,
): FastifyPluginAsync<Options> {
  return fp(plugin, {
    fastify: FASTIFY_RANGE,
    name: meta.name,
    encapsulate,
    ...(meta.dependencies ? { dependencies: [...meta.dependencies] } : {}),
    ...(meta.decorators?.fastify ? { decorators: { fastify: [...meta.decorators.fastify] } } : {}),
  });
}

/** `plugin`, named and encapsulated (a route module), checked by fastify for `meta`'s dependencies and decorators. */
export function withMeta<Options extends FastifyPluginOptions>(
  plugin: FastifyPluginAsync<Options>,
  meta: PluginMeta,
): FastifyPluginAsync<Options> {
  return wrap(plugin, meta, true);
}

/**
 * `plugin` as a shared part of the server: not encapsulated, so what it decorates and hooks is the
 * registering instance's, seen by every route registered after it.
 */
export function sharedPlugin<Options extends FastifyPluginOptions>(
  plugin: FastifyPluginAsync<Options>,
  meta: PluginMeta,
): FastifyPluginAsync<Options> {
  return wrap(plugin, meta, false);
}
