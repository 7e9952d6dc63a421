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

/**
 * loopMetric of `run` and of `floor` (the same driver calls through koffi alone) in alternating
 * repetitions (run, floor, then floor, run, ...), after one warm-up loop of each: both see the
 * same clocks, queue depths and caches, so their ratio is what tscuda's code adds, not what
 * moved between two loops measured one after the other (a per-call cost of 0.2 us drifts by
 * more than the 10% the goal allows between back-to-back loops).
 */
export function pairedLoopMetric(
  o: TimingOptions,
  run: (iters: number) => void,
  floor: (iters: number) => void,
  sync: () => void,
): { pass: PassSummary; floor: PassSummary } {
  const iters = o.iters;
  const one = (body: (iters: number) => void): number => {
    const t0 = nowUs();
    body(iters);
    sync();
    return (nowUs() - t0) / iters;
  };
  one(run);
  one(floor);
  const ours: number[] = [];
  const raw: number[] = [];
  for (let r = 0; r < o.reps; r++) {
    if (r % 2 === 0) {
      ours.push(one(run));
      raw.push(one(floor));
    } else {
      raw.push(one(floor));
      ours.push(one(run));
    }
  }
  return { pass: summarize(ours), floor: summarize(raw) };
}

export function repeated(o: TimingOptions, warmup: number, one: () => number): PassSummary {
  for (let i = 0; i < warmup; i++) one();
  const xs: number[] = [];
  for (let r = 0; r < o.reps; r++) xs.push(one());
  return summarize(xs);
}

export async function repeatedAsync(
  o: TimingOptions,
  warmup: number,
  one: () => Promise<number>,
): Promise<PassSummary> {
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

/** A metric's FFI floor of one pass and the note naming the calls it made (first pass only). */
export interface FfiFloor {
  floor: PassSummary;
  notes: string[];
}

/**
 * A loop metric and its FFI floor: the same driver calls straight through koffi, with no tscuda
 * code around them, the per-call goal (issue 26: tscuda <= 1.1x it), so a ratio to C splits into
 * koffi's share and ours. Both loops run in alternating repetitions (pairedLoopMetric) every pass
 * and the floor is logged, so a pass-to-pass drift shows whether the FFI or tscuda's code moved;
 * reported as the `floor` of the results (median of the passes). `floorPerIter` and
 * `floorPerIterAsync` measure the per-iteration shapes.
 */
export function pairedWithFloor(
  o: TimingOptions,
  metric: string,
  run: (n: number) => void,
  floor: (n: number) => void,
  sync: () => void,
  calls: string,
  log: (line: string) => void,
): FfiFloor & { pass: PassSummary } {
  const both = pairedLoopMetric(o, run, floor, sync);
  const f = floorOf(metric, both.floor, `${calls} (in repetitions alternating with tscuda's)`, log);
  return { pass: both.pass, ...f };
}

/**
 * A per-iteration metric and its FFI floor in alternating blocks of PER_ITER_SAMPLES_PER_REP
 * iterations (ours, floor, then floor, ours, ...), after the warm-up of each: as pairedLoopMetric,
 * both see the same clocks, queue depths and caches (a ~10 us round trip drifts by more than the
 * 10% the goal allows between two runs measured one after the other).
 */
export function pairedPerIterWithFloor(
  o: TimingOptions,
  metric: string,
  body: () => void,
  floor: () => void,
  calls: string,
  log: (line: string) => void,
): FfiFloor & { pass: PassSummary } {
  for (let i = 0; i < PER_ITER_WARMUP; i++) (body(), floor());
  const ours: number[] = [];
  const raw: number[] = [];
  const block = (f: () => void, into: number[]): void => {
    for (let i = 0; i < PER_ITER_SAMPLES_PER_REP; i++) {
      const t0 = nowUs();
      f();
      into.push(nowUs() - t0);
    }
  };
  for (let r = 0; r < o.reps; r++) {
    if (r % 2 === 0) (block(body, ours), block(floor, raw));
    else (block(floor, raw), block(body, ours));
  }
  return {
    pass: summarize(ours),
    ...floorOf(metric, summarize(raw), `${calls} (in blocks alternating with tscuda's)`, log),
  };
}

/** pairedPerIterWithFloor for iterations that await. */
export async function pairedPerIterWithFloorAsync(
  o: TimingOptions,
  metric: string,
  body: () => Promise<void>,
  floor: () => Promise<void>,
  calls: string,
  log: (line: string) => void,
): Promise<FfiFloor & { pass: PassSummary }> {
  for (let i = 0; i < PER_ITER_WARMUP; i++) (await body(), await floor());
  const ours: number[] = [];
  const raw: number[] = [];
  const block = async (f: () => Promise<void>, into: number[]): Promise<void> => {
    for (let i = 0; i < PER_ITER_SAMPLES_PER_REP; i++) {
      const t0 = nowUs();
      await f();
      into.push(nowUs() - t0);
    }
  };
  for (let r = 0; r < o.reps; r++) {
    if (r % 2 === 0) (await block(body, ours), await block(floor, raw));
    else (await block(floor, raw), await block(body, ours));
  }
  return {
    pass: summarize(ours),
    ...floorOf(metric, summarize(raw), `${calls} (in blocks alternating with tscuda's)`, log),
  };
}

function floorOf(metric: string, floor: PassSummary, calls: string, log: (line: string) => void): FfiFloor {
  log(
    `[tscuda] ${`${metric} FFI floor`.padEnd(30)} ${floor.median.toFixed(4).padStart(12)}  spread ${floor.spread.toFixed(3)}`,
  );
  const notes = firstTime(`${metric} ffi floor`)
    ? [`FFI floor: ${calls} called through koffi directly (no tscuda code), in the same passes`]
    : [];
  return { floor, notes };
}
