/**
 * The parameters of a binary job request, parsed and validated once per distinct query rather
 * than once per request. A client of a synchronous route sends its samples with the same query
 * (`?dtype=f32&batch=4&fs=1000&passBand=20,200...`) request after request; reading those strings
 * (paramsFromStrings) and running the engine's validation on them (checkJobParams) was about a
 * tenth of a small request's CPU on the server, for the same answer each time. The outcome depends
 * on nothing but what the key holds (the route's flag, the body's byte count, the query text, the
 * server's precision and its ParamContext, which owns the cache), so a query seen before gets the
 * verdict it got then: only successes are kept (a refusal is worked out, and its error built,
 * anew). Requests with x-tscuda-* headers, JSON bodies and kept jobs (`/v1/jobs`) are not cached,
 * nor queries with stageParams or a filter (objects a stage or filter design could hold on to).
 * The arrays of a cached spec are frozen: every request's spec shares them, so one that changed
 * them would fail rather than change another request's parameters. CUDA-free.
 */
import type { BuiltinJobFlag } from '../engine/types.js';
import type { NormalizedParameters } from '../engine/validate.js';
import type { Precision } from '../runtime/fft/precision.js';
import type { ParamContext, ParsedJob, SampleDtype } from './params.js';

/** What a binary request's query came to: its sample type, its parsed spec and what validation made of it. */
export interface CheckedQuery {
  readonly dtype: SampleDtype;
  readonly parsed: ParsedJob;
  readonly parameters: NormalizedParameters;
}

/** Distinct queries kept per server: a client population's shapes, not every query ever seen. */
const MAX_ENTRIES = 256;
/** Longer queries are not kept (a key holds the whole query). */
const MAX_QUERY_CHARS = 2048;

/** Each server's cache, by its ParamContext (one per server, fixed at its creation). */
const caches = new WeakMap<ParamContext, Map<string, CheckedQuery>>();

/** The cache key of a binary request (`url` its request target), or undefined when it is not cached. */
export function queryKey(
  url: string,
  endpointFlag: BuiltinJobFlag | undefined,
  bodyBytes: number,
  precision: Precision,
): string | undefined {
  if (endpointFlag === undefined) return undefined;
  const at = url.indexOf('?');
  const query = at < 0 ? '' : url.slice(at + 1);
  if (query.length > MAX_QUERY_CHARS) return undefined;
  return `${endpointFlag} ${precision} ${bodyBytes} ${query}`;
}

/** What `key` came to before under `context`, or undefined. */
export function cachedQuery(context: ParamContext, key: string): CheckedQuery | undefined {
  return caches.get(context)?.get(key);
}

/** Keeps what `key` came to (a success: the parsed and validated parameters) under `context`. */
export function rememberQuery(context: ParamContext, key: string, checked: CheckedQuery): void {
  const spec = checked.parsed.spec;
  if (spec.stageParams !== undefined || spec.filter !== undefined) return;
  let cache = caches.get(context);
  if (cache === undefined) caches.set(context, (cache = new Map()));
  // The oldest entry goes first (Map keeps insertion order): bounded whatever the clients send.
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  for (const value of Object.values(spec)) freezeArrays(value);
  cache.set(key, checked);
}

/** Freezes `value` and the arrays within it when it is an array (flags, bands, passBand, freqs, a window tuple). */
function freezeArrays(value: unknown): void {
  if (!Array.isArray(value)) return;
  for (const item of value) freezeArrays(item);
  Object.freeze(value);
}
