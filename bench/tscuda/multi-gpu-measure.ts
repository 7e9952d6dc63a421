/** How the several-GPU benchmarks (multi-gpu.ts) time work on a stream and summarize repetitions. */
import { Event, type Stream } from '../../src/runtime/index.js';

/** A measured metric (median, relative spread, samples) or why it was not measured. */
export type Metric = { median: number; spread: number; samples: number[]; note?: string } | { notMeasured: string };

/** The median and relative spread of `samples`, with an optional note. */
export function summarize(samples: number[], note?: string): Metric {
  const s = [...samples].sort((a, b) => a - b);
  const m = s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return { median: m, spread: m ? (s[s.length - 1]! - s[0]!) / m : 0, samples, ...(note ? { note } : {}) };
}

/** A metric's median, when it was measured. */
export const median = (m: Metric | undefined): number | undefined => (m && 'median' in m ? m.median : undefined);

/** Milliseconds between two timing events around `iters` calls of `enqueue` on `stream`. */
export async function timeOnStream(stream: Stream, iters: number, enqueue: () => void): Promise<number> {
  using start = new Event({ context: stream.context, timing: true });
  using end = new Event({ context: stream.context, timing: true });
  start.record(stream);
  for (let i = 0; i < iters; i++) enqueue();
  end.record(stream);
  await end.done();
  return end.elapsedSince(start);
}
