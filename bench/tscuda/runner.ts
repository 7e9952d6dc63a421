/** Runs tscuda's benchmarks in this process, one pass at a time, collecting passes per metric. */
import { CudaError } from '../../src/ffi/index.js';
import type { TscudaMetricRun } from '../harness/merge.js';
import { BATCHER_BENCHMARK } from './batcher.js';
import { COMPILE_BENCHMARK } from './compile.js';
import { CORE_BENCHMARKS } from './core.js';
import { ENGINE_BENCHMARK } from './engine.js';
import { ENGINE_I16_BENCHMARK } from './engine-i16.js';
import { PIPELINE_BENCHMARK } from './pipeline.js';
import { rowBenchmark } from '../signal-ops/runner.js';
import { SIGNAL_OP_ROWS } from '../signal-ops/rows/index.js';
import { NotMeasured, type BenchContext, type TscudaBenchmark } from './types.js';

/** Every tscuda benchmark, in the catalogue's order. */
export const TSCUDA_BENCHMARKS: readonly TscudaBenchmark[] = [
  ...CORE_BENCHMARKS,
  PIPELINE_BENCHMARK,
  BATCHER_BENCHMARK,
  COMPILE_BENCHMARK,
  ENGINE_BENCHMARK,
  ENGINE_I16_BENCHMARK,
  ...SIGNAL_OP_ROWS.map(rowBenchmark),
];

/** Every metric name some benchmark produces (the harness checks it covers the catalogue). */
export function producedMetricNames(): string[] {
  return TSCUDA_BENCHMARKS.flatMap((b) => [...b.names]);
}

function record(results: Record<string, TscudaMetricRun>, name: string): TscudaMetricRun {
  let r = results[name];
  if (!r) {
    r = { passes: [], notes: [] };
    results[name] = r;
  }
  return r;
}

function addNotes(r: TscudaMetricRun, notes: readonly string[] | undefined): void {
  for (const n of notes ?? []) if (!r.notes.includes(n)) r.notes.push(n);
}

function fmt(v: number): string {
  return v.toFixed(4).padStart(12);
}

/**
 * Runs every benchmark that produces one of `names`; a benchmark that throws marks its
 * metrics not measured with the reason and the pass goes on. After a sticky CUDA error the
 * context is unusable: the rest of the pass is marked with that error instead of run.
 */
export async function runTscudaPass(
  ctx: BenchContext,
  names: ReadonlySet<string>,
  results: Record<string, TscudaMetricRun>,
): Promise<void> {
  for (const bench of TSCUDA_BENCHMARKS) {
    const wanted = bench.names.filter((n) => names.has(n));
    if (wanted.length === 0) continue;
    const sticky = ctx.context.stickyError;
    if (sticky) {
      for (const n of wanted) record(results, n).notMeasured = `the CUDA context broke earlier: ${sticky.message}`;
      continue;
    }
    const t0 = performance.now();
    try {
      ctx.context.synchronize();
      const out = await bench.run(ctx);
      ctx.context.synchronize();
      const seconds = ((performance.now() - t0) / 1000).toFixed(1);
      for (const n of wanted) {
        const r = record(results, n);
        const m = out[n];
        if (!m || 'notMeasured' in m) {
          const why = m?.notMeasured ?? 'the benchmark produced no value';
          if (r.passes.length === 0) r.notMeasured = why;
          ctx.log(`[tscuda] ${n.padEnd(30)} NOT MEASURED: ${why}`);
          continue;
        }
        r.passes.push(m.pass);
        if (m.floor) (r.floorPasses ??= []).push(m.floor);
        addNotes(r, m.notes);
        if (r.notMeasured !== undefined) {
          addNotes(r, [`an earlier pass: ${r.notMeasured}`]);
          delete r.notMeasured;
        }
        const floor = m.floor
          ? `  floor ${m.floor.median.toFixed(4)} (${(m.pass.median / m.floor.median).toFixed(2)}x)`
          : '';
        ctx.log(
          `[tscuda] ${n.padEnd(30)} ${fmt(m.pass.median)}  spread ${m.pass.spread.toFixed(3)}  n=${m.pass.samples}${floor}  (${seconds} s)`,
        );
      }
    } catch (e) {
      const reason = e instanceof NotMeasured ? e.message : `failed: ${e instanceof Error ? e.message : String(e)}`;
      for (const n of wanted) {
        const r = record(results, n);
        // A later pass failing does not undo an earlier pass's value; say so instead.
        if (r.passes.length === 0) r.notMeasured = reason;
        else addNotes(r, [`a later pass ${reason}`]);
        ctx.log(`[tscuda] ${n.padEnd(30)} ${e instanceof NotMeasured ? 'NOT MEASURED' : 'FAILED'}: ${reason}`);
      }
      if (!(e instanceof NotMeasured) && e instanceof Error && e.stack && !(e instanceof CudaError && e.sticky))
        ctx.log(e.stack.split('\n').slice(1, 6).join('\n'));
    }
  }
}
