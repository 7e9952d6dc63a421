/**
 * The three measurement shapes of bench/native/bench.cu, with the same warm-ups and sample
 * counts, so that tscuda's numbers and C's mean the same thing:
 *   loop:      host time of `iters` calls (a loop the metric writes) then one synchronisation, per call; one warm-up loop, reps samples.
 *   per-iter:  host time of each iteration on its own; 100 warm-up iterations, reps * 200 samples.
 *   repeated:  one value per repetition (GPU-timed with events), after `warmup` untimed ones.
 */
import { summarize, type PassSummary } from '../harness/stats.js';

export const PER_ITER_SAMPLES_PER_REP = 200;
const PER_ITER_WARMUP = 100;

export interface TimingOptions {
  reps: number;
  iters: number;
}

/** Microseconds, from the same monotonic clock as performance.now(). */
const nowUs = (): number => performance.now() * 1000;

/**
 * `run(n)` makes n calls in its own loop: each metric writes the loop around its call, as
 * bench.cu's lambdas inline into its template, so no shared call site here turns
 * megamorphic and charges tscuda a dispatch per call that C does not pay.
 */
export function loopMetric(o: TimingOptions, run: (iters: number) => void, sync: () => void): PassSummary {
  const iters = o.iters;
  const one = (): number => {
    const t0 = nowUs();
    run(iters);
    sync();
    return (nowUs() - t0) / iters;
  };
  one();
  const xs: number[] = [];
  for (let r = 0; r < o.reps; r++) xs.push(one());
  return summarize(xs);
}

export function perIterMetric(o: TimingOptions, body: () => void): PassSummary {
  for (let i = 0; i < PER_ITER_WARMUP; i++) body();
  const n = o.reps * PER_ITER_SAMPLES_PER_REP;
  const xs = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = nowUs();
    body();
    xs[i] = nowUs() - t0;
  }
  return summarize(Array.from(xs));
}

/** per-iter where the iteration awaits (launch + `await stream.done()`). */
export async function perIterMetricAsync(o: TimingOptions, body: () => Promise<void>): Promise<PassSummary> {
  for (let i = 0; i < PER_ITER_WARMUP; i++) await body();
  const n = o.reps * PER_ITER_SAMPLES_PER_REP;
  const xs = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = nowUs();
    await body();
    xs[i] = nowUs() - t0;
  }
  return summarize(Array.from(xs));
}

export function repeated(o: TimingOptions, warmup: number, one: () => number): PassSummary {
  for (let i = 0; i < warmup; i++) one();
  const xs: number[] = [];
  for (let r = 0; r < o.reps; r++) xs.push(one());
  return summarize(xs);
}

export async function repeatedAsync(o: TimingOptions, warmup: number, one: () => Promise<number>): Promise<PassSummary> {
  for (let i = 0; i < warmup; i++) await one();
  const xs: number[] = [];
  for (let r = 0; r < o.reps; r++) xs.push(await one());
  return summarize(xs);
}

export function gbps(bytes: number, ms: number): number {
  return bytes / 1e9 / (ms / 1e3);
}

const noted = new Set<string>();

/** True the first time `key` is asked about in this process: notes measured once (first pass) use it. */
export function firstTime(key: string): boolean {
  if (noted.has(key)) return false;
  noted.add(key);
  return true;
}

/**
 * The same driver calls straight through koffi, with no tscuda code around them: the FFI's own
 * floor, so a ratio to C splits into koffi's share and ours. Measured every pass and logged
 * (a pass-to-pass drift then shows whether it is the FFI or tscuda's code that moved); noted
 * once, with the first pass's value.
 */
export function ffiFloorNote(o: TimingOptions, metric: string, run: (n: number) => void, sync: () => void, calls: string, log: (line: string) => void): string[] {
  const floor = loopMetric(o, run, sync);
  log(`[tscuda] ${`${metric} FFI floor`.padEnd(30)} ${floor.median.toFixed(4).padStart(12)}  spread ${floor.spread.toFixed(3)}`);
  if (!firstTime(`${metric} ffi floor`)) return [];
  return [`FFI floor, ${calls} called through koffi directly (no tscuda code): ${floor.median.toFixed(3)} us (first pass)`];
}
