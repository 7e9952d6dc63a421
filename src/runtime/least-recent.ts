/**
 * The choice of what a bounded cache frees first: the entry handed out longest ago, by a clock
 * the cache ticks on every hand-out (FftPlanCache's plans, the signal layer's tables). A hit then
 * costs one store, and the scan over the entries happens only when something must go.
 */

/** What a bounded cache keeps per entry: the tick of its last hand-out. */
export interface Used {
  used: number;
}

/** The key of the entry used longest ago among those used before tick `before`, or undefined when none was. */
export function leastRecentlyUsed<K>(entries: ReadonlyMap<K, Used>, before = Infinity): K | undefined {
  let oldestKey: K | undefined;
  let oldest = before;
  for (const [key, entry] of entries) {
    if (entry.used < oldest) {
      oldest = entry.used;
      oldestKey = key;
    }
  }
  return oldestKey;
}
