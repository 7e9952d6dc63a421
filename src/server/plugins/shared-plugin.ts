/**
 * A server plugin whose decorators and hooks belong to the instance that registers it, so the
 * routes registered after it (each in its own encapsulated context) see them. This is what the
 * fastify-plugin package does, through the symbols fastify itself reads (`skip-override`, the
 * display name, `plugin-meta` with its name and dependencies): three properties are not worth a
 * dependency.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions } from 'fastify';

/** What fastify reads of a plugin before it loads it (lib/plugin-utils.js). */
export interface PluginMeta {
  /** The name other plugins depend on, shown in fastify's errors and printPlugins(). */
  readonly name: string;
  /** Plugins that must be registered before this one, by name (fastify refuses to load it otherwise). */
  readonly dependencies?: readonly string[] | undefined;
  /** Decorators the instance must have when this plugin is registered (fastify refuses to load it otherwise). */
  readonly decorators?: { readonly fastify?: readonly (keyof FastifyInstance)[] | undefined } | undefined;
}

/** `plugin`, named, and checked by fastify for `meta`'s dependencies and decorators when it is registered. */
export function withMeta<Options extends FastifyPluginOptions>(
  plugin: FastifyPluginAsync<Options>,
  meta: PluginMeta,
): FastifyPluginAsync<Options> {
  return Object.assign(plugin, {
    [Symbol.for('fastify.display-name')]: meta.name,
    [Symbol.for('plugin-meta')]: meta,
  });
}

/**
 * `plugin` as a shared part of the server: not encapsulated (fastify's `skip-override`), so what
 * it decorates and hooks is the registering instance's, seen by every route registered after it.
 */
export function sharedPlugin<Options extends FastifyPluginOptions>(
  plugin: FastifyPluginAsync<Options>,
  meta: PluginMeta,
): FastifyPluginAsync<Options> {
  return Object.assign(withMeta(plugin, meta), { [Symbol.for('skip-override')]: true });
}
