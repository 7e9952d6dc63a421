/** Coordinator.executeParallel(): one function on every stream of a pool at once, awaited through the pool's completion tracking. */
import type { OperationKind } from '../report/timeline.js';
import type { Stream } from '../runtime/stream.js';
import { toError } from './host-calls.js';
import type { StreamPool } from './stream-pool.js';

/**
 * Runs `fn` on every stream of `pool` (each call enqueues that stream's share) and resolves with
 * the results once all of that work has completed. If some calls throw, the others' work still
 * completes first; then it rejects with the first error.
 */
export async function onEveryStream<T>(
  pool: StreamPool,
  fn: (stream: Stream, index: number) => T,
  options: { kind?: OperationKind | undefined; name?: string | undefined },
): Promise<T[]> {
  const kind = options.kind ?? 'other';
  const streams = pool.streams;
  const results = new Array<T>(streams.length);
  const completions = streams.map(
    (stream, index) =>
      new Promise<void>((resolve, reject) => {
        pool.submit(
          stream,
          kind,
          (s) => (results[index] = fn(s, index)),
          { name: options.name ?? `parallel#${index}` },
          (error) => (error ? reject(error) : resolve()),
        );
      }),
  );
  // Every stream's share completes (or fails) before the first failure is reported.
  const settled = await Promise.allSettled(completions);
  for (const s of settled) if (s.status === 'rejected') throw toError(s.reason);
  return results;
}
