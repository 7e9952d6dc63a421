/** Statistics shared by every side of the comparison, defined as bench/native/bench.cu defines them. */

/** Linear interpolation between closest ranks (numpy's default, and bench.cu's), on sorted data. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** One pass of one metric, in the peers' protocol: spread is relative, (p90 - p10) / median. */
export interface PassSummary {
  median: number;
  spread: number;
  samples: number;
}

export function summarize(xs: readonly number[]): PassSummary {
  const sorted = Float64Array.from(xs).sort();
  const s = Array.from(sorted);
  const median = quantile(s, 0.5);
  const spread = median !== 0 ? (quantile(s, 0.9) - quantile(s, 0.1)) / median : 0;
  return { median, spread, samples: s.length };
}

/** A side's final value of one metric: `spread` is absolute, in the metric's unit (the report's ±). */
export interface Measurement {
  value: number;
  spread: number;
  samples: number;
  passes: number;
}

/**
 * Combines the passes of one side (C or tscuda) of one metric: the value is the median of the
 * pass medians (with two passes, their mean); the ± is half the p10..p90 range of the widest
 * pass, or half the pass-to-pass difference when that is larger (drift shows up, not hidden).
 */
export function combinePasses(passes: readonly PassSummary[]): Measurement | null {
  const usable = passes.filter((p) => Number.isFinite(p.median));
  if (usable.length === 0) return null;
  const medians = usable.map((p) => p.median).sort((a, b) => a - b);
  const value = quantile(medians, 0.5);
  const within = Math.max(...usable.map((p) => (Number.isFinite(p.spread) ? Math.abs(p.spread * p.median) / 2 : 0)));
  const between = (medians[medians.length - 1]! - medians[0]!) / 2;
  return {
    value,
    spread: Math.max(within, between),
    samples: usable.reduce((n, p) => n + p.samples, 0),
    passes: usable.length,
  };
}

/** p-th quantile (0..1) of unsorted values. */
export function percentile(xs: readonly number[], q: number): number {
  return quantile(Array.from(Float64Array.from(xs).sort()), q);
}
