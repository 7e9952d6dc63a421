/**
 * A check that a server's JSON answers keep every property their handlers sent: fastify
 * serializes an answer by its route's response schema, which leaves out what the schema does not
 * list. Each JSON payload is recorded before serialization and compared, parsed, with the body
 * that was sent; a difference is a missing (or changed) field of a response schema.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** What a watched server sent that differs from what its handlers gave. */
export interface SerializationWatch {
  /** One line per answer whose sent body is not the payload it was given: method, url, status, both bodies. */
  readonly mismatches: string[];
  /** The routes (`METHOD /url` as registered) that sent a JSON answer, with the statuses they sent. */
  readonly answered: Map<string, Set<number>>;
}

/** Watches every JSON answer of `app` (before its first request). */
export function watchSerialization(app: FastifyInstance): SerializationWatch {
  const given = new WeakMap<FastifyRequest, string>();
  const watch: SerializationWatch = { mismatches: [], answered: new Map() };
  app.addHook('preSerialization', async (request, _reply, payload) => {
    // JSON.stringify is what the answer would be with no schema: NaN becomes null, undefined properties vanish.
    given.set(request, JSON.stringify(payload));
    return payload;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const before = given.get(request);
    if (before === undefined || typeof payload !== 'string') return payload;
    const route = `${request.method} ${request.routeOptions.url ?? '(no route)'}`;
    watch.answered.set(route, (watch.answered.get(route) ?? new Set()).add(reply.statusCode));
    if (!isDeepStrictEqual(JSON.parse(payload), JSON.parse(before)))
      watch.mismatches.push(
        `${request.method} ${request.url} ${reply.statusCode}: sent ${payload.slice(0, 400)}, handler gave ${before.slice(0, 400)}`,
      );
    return payload;
  });
  return watch;
}
