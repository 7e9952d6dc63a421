/**
 * pipeline_overlap_efficiency, pipeline_speedup_vs_sequential and event_loop_lag_p99_ms.
 *
 * The pipeline is issue 5's balanced workload, `runBalancedPipeline({ steps, bytesPerStep,
 * mode })` -> { totalMs, perStageMs, overlapEfficiency } (bench/tscuda/balanced.ts):
 * sequential and triple-buffered runs alternate (so drift cancels in each pair's ratio);
 * efficiency is the triple run's own overlapEfficiency, speedup sequential.totalMs /
 * triple.totalMs, each the median over pairs.
 *
 * Event-loop lag: a chain of 1 ms timers runs while triple-buffered pipelines run back to
 * back for LAG_WINDOW_MS; the metric is the 99th percentile of how late the timers fire.
 */
import { startLagProbe } from '../harness/lag.js';
import { percentile, summarize, type PassSummary } from '../harness/stats.js';
import { runBalancedPipeline } from './balanced.js';
import type { MeasuredMetric, TscudaBenchmark, UnmeasuredMetric } from './types.js';

export const PIPELINE_STEPS = 64;
export const PIPELINE_BYTES_PER_STEP = 16 * 2 ** 20;
export const LAG_WINDOW_MS = 1500;
const LAG_SLICES = 5;

/** Called around the timed steps of a run (runBalancedPipeline's onTimedStart/onTimedEnd). */
interface TimedHooks {
  onTimedStart?: () => void;
  onTimedEnd?: () => void;
}

function balancedRun(mode: 'sequential' | 'triple', hooks: TimedHooks = {}): ReturnType<typeof runBalancedPipeline> {
  return runBalancedPipeline({ steps: PIPELINE_STEPS, bytesPerStep: PIPELINE_BYTES_PER_STEP, mode, ...hooks });
}

export const PIPELINE_BENCHMARK: TscudaBenchmark = {
  names: ['pipeline_overlap_efficiency', 'pipeline_speedup_vs_sequential', 'event_loop_lag_p99_ms'],
  run: async (ctx) => {
    const out: Partial<Record<string, MeasuredMetric | UnmeasuredMetric>> = {};
    const shape = `${PIPELINE_STEPS} steps of ${PIPELINE_BYTES_PER_STEP / 2 ** 20} MiB`;
    await balancedRun('sequential'); // warm-up: plans, buffers, JIT
    await balancedRun('triple');
    const pairs = Math.max(3, Math.min(ctx.timing.reps, 7));
    const speedups: number[] = [];
    const efficiencies: number[] = [];
    const oneWay: number[] = [];
    const stages: string[] = [];
    for (let i = 0; i < pairs; i++) {
      const seq = await balancedRun('sequential');
      const tri = await balancedRun('triple');
      speedups.push(seq.totalMs / tri.totalMs);
      efficiencies.push(tri.overlapEfficiency);
      oneWay.push(tri.oneWayOverlapEfficiency);
      if (i === 0) {
        const t = tri.perStageMs;
        const w = tri.oneWayStageMs;
        stages.push(
          `stages of the first pair: upload ${t.upload.toFixed(3)} / compute ${t.compute.toFixed(3)} / download ${t.download.toFixed(3)} ms with both copies on the link (alone: ${w.upload.toFixed(3)} / ${w.download.toFixed(3)} ms); iteration ${tri.msPerIteration.toFixed(3)} ms (wall time per step, fill and drain included: ${tri.msPerStep.toFixed(3)} ms)`,
        );
      }
    }
    const how = `runBalancedPipeline (bench/tscuda/balanced.ts), ${shape}, ${pairs} sequential/triple pairs`;
    out.pipeline_overlap_efficiency = {
      pass: summarize(efficiencies),
      notes: [
        how,
        'slowest stage / steady-state iteration time (first to last result of the timed steps, over the steps between: fill and drain left out), the stages timed as the pipeline runs them: an upload and a download at once (PCIe gives each direction less than its one-way rate then)',
        `against the copies timed one at a time instead: ${percentile(oneWay, 0.5).toFixed(3)} (median): what a perfect overlap can reach is the link's two-way/one-way rate`,
        ...stages,
      ],
    };
    out.pipeline_speedup_vs_sequential = { pass: summarize(speedups), notes: [how] };
    // Lag while the pipeline runs: each run's buffer setup and calibration (blocking pinned
    // allocations) are outside the probe's windows.
    const deadline = performance.now() + LAG_WINDOW_MS;
    let runs = 0;
    const lags: number[] = [];
    while (performance.now() < deadline) {
      let probe: ReturnType<typeof startLagProbe> | undefined;
      await balancedRun('triple', {
        onTimedStart: () => (probe = startLagProbe(1)),
        onTimedEnd: () => lags.push(...(probe?.stop() ?? [])),
      });
      runs++;
    }
    out.event_loop_lag_p99_ms = {
      pass: lagPass(lags),
      notes: [
        `during the timed steps of ${runs} triple-buffered runBalancedPipeline runs (setup excluded); ${lags.length} ticks of a 1 ms timer`,
      ],
    };
    return out;
  },
};

/**
 * The p99 of all ticks' lateness; the spread is that of the p99s of consecutive slices of
 * the ticks (LAG_SLICES of them), relative to the whole p99, so the ± says how steady it was.
 */
export function lagPass(lags: readonly number[]): PassSummary {
  if (lags.length === 0) throw new Error('no timer samples');
  const p99 = percentile(lags, 0.99);
  const per = Math.max(1, Math.floor(lags.length / LAG_SLICES));
  const slices: number[] = [];
  for (let i = 0; i < LAG_SLICES && i * per < lags.length; i++) {
    slices.push(percentile(lags.slice(i * per, i === LAG_SLICES - 1 ? lags.length : (i + 1) * per), 0.99));
  }
  const spread = slices.length > 1 && p99 > 0 ? (percentile(slices, 0.9) - percentile(slices, 0.1)) / p99 : 0;
  return { median: p99, spread, samples: lags.length };
}
