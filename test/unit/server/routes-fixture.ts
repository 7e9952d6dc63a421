/**
 * The shared setup of the route tests (routes-*.test.ts): servers over a FakeEngine, closed after
 * each test (`afterEach(closeServers)` in each file), a test signal, fake batchers, a poll.
 */
import { createServer, type TscudaServer } from '../../../src/server/index.js';
import type { InterpolationInput } from '../../../src/server/batch.js';
import { fakeBatcher } from './fake-engine.js';
import { watchSerialization, type SerializationWatch } from './serialization-watch.js';

const servers: { server: TscudaServer; watch: SerializationWatch }[] = [];
/**
 * A server with request fusing off (these cases count engine submits, one per request), whose
 * JSON answers are watched: closeServers fails a test whose answer lost a field to its route's
 * response schema.
 */
export function make(options: Parameters<typeof createServer>[0] = {}): TscudaServer {
  // These cases count engine submits, one per request, and release a manual engine at once: fusing is off here (fusion*.test.ts has it on).
  const server = createServer({ ...options, limits: { maxBatchDelayMs: 0, ...options.limits } });
  servers.push({ server, watch: watchSerialization(server.app) });
  return server;
}
/** The watch of the JSON answers of a server make() made. */
export function watchOf(server: TscudaServer): SerializationWatch {
  const made = servers.find((s) => s.server === server);
  if (made === undefined) throw new Error('watchOf: not a server of make(), or already closed');
  return made.watch;
}
/** Closes every server make() made; each route test file runs it after each test. Throws when an answer lost a field. */
export async function closeServers(): Promise<void> {
  const closing = servers.splice(0);
  await Promise.all(closing.map((s) => s.server.close()));
  const lost = closing.flatMap((s) => s.watch.mismatches);
  if (lost.length > 0) throw new Error(`answers that lost fields to their response schemas:\n${lost.join('\n')}`);
}

/** Polls `what` until it holds (a loaded CI machine can take far longer than a fixed sleep), failing after 10 s. */
export async function waitFor(what: () => boolean, label: string): Promise<void> {
  const t0 = performance.now();
  while (!what()) {
    if (performance.now() - t0 > 10_000) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A test signal of `n` samples (a sine and a ramp). */
export function signal(n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.sin(i * 0.3) + i * 0.01);
}

/** The reference of the lerp and slerp fake batchers. */
export const lerp = (item: InterpolationInput): Float32Array =>
  Float32Array.from(item.a, (a, i) => a + item.t * (item.b[i]! - a));
/** Fake batchers of the /v1/batch endpoints. */
export const batchers = {
  gradient: () => fakeBatcher<ArrayLike<number>>((v) => Float32Array.from(v, (x) => 2 * x)),
  lerp: () => fakeBatcher(lerp),
  slerp: () => fakeBatcher(lerp),
};
