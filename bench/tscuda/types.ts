/** What tscuda's benchmark functions share. */
import type { Context, Device } from '../../src/runtime/index.js';
import type { PassSummary } from '../harness/stats.js';
import type { BenchKernels } from './kernels.js';
import type { TimingOptions } from './timing.js';

export interface BenchContext {
  device: Device;
  context: Context;
  kernels: BenchKernels;
  timing: TimingOptions;
  root: string;
  log: (line: string) => void;
}

/** Thrown where a metric cannot be measured yet (its module is not there): reported as not measured, with this reason. */
export class NotMeasured extends Error {
  override readonly name = 'NotMeasured';
}

export interface MeasuredMetric {
  pass: PassSummary;
  notes?: string[];
  /** Per-call metrics: the same driver call(s) through koffi with no tscuda code, measured in the same pass. */
  floor?: PassSummary;
}

/** A metric a benchmark could not produce while it produced others, and why. */
export interface UnmeasuredMetric {
  notMeasured: string;
}

/** One benchmark: it may produce several metrics from one run (the pipeline gives efficiency and speedup). */
export interface TscudaBenchmark {
  names: readonly string[];
  run: (ctx: BenchContext) => Promise<Partial<Record<string, MeasuredMetric | UnmeasuredMetric>>>;
}

/** Disposes in reverse order, ignoring what is already gone; the first error is rethrown after all are tried. */
export function disposeAll(...resources: ({ dispose(): void } | undefined | null)[]): void {
  let first: unknown;
  for (let i = resources.length - 1; i >= 0; i--) {
    try {
      resources[i]?.dispose();
    } catch (e) {
      first ??= e;
    }
  }
  if (first !== undefined) throw first;
}

/** A single-metric benchmark. */
export function single(
  name: string,
  run: (ctx: BenchContext) => Promise<MeasuredMetric> | MeasuredMetric,
): TscudaBenchmark {
  return { names: [name], run: async (ctx) => ({ [name]: await run(ctx) }) };
}
