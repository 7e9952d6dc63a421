/**
 * batcher_items_per_s and batcher_p99_ms: BATCHER_BENCH.clients concurrent submitters, each
 * awaiting `submit()` of a small request before sending the next (closed loop), through a
 * Batcher whose dispatch is trivial (returns the items as outputs), so the numbers are the
 * Batcher's own cost. items/s: items completed / wall time; p99: submit-to-resolve latency
 * of every request.
 */
import { Batcher } from '../../src/pipeline/index.js';
import { BATCHER_BENCH } from '../harness/metrics.js';
import { percentile, summarize } from '../harness/stats.js';
import type { TscudaBenchmark } from './types.js';

export interface BatcherRun {
  itemsPerSecond: number;
  latenciesMs: Float64Array;
  batches: number;
  fillRate: number;
}

export interface BatcherBenchConfig {
  clients: number;
  itemsPerSubmit: number;
  maxBatchSize: number;
  maxWaitMs: number;
  channelSize: number;
  durationMs: number;
}

export async function runBatcherOnce(cfg: BatcherBenchConfig): Promise<BatcherRun> {
  const batcher = new Batcher<number, number>((items) => items, {
    maxBatchSize: cfg.maxBatchSize,
    maxWaitMs: cfg.maxWaitMs,
    channelSize: cfg.channelSize,
    label: 'bench batcher',
  });
  const request = Array.from({ length: cfg.itemsPerSubmit }, (_, i) => i);
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let items = 0;
  const t0 = performance.now();
  const deadline = t0 + cfg.durationMs;
  // Completions chain through microtasks without yielding to timers, so each client
  // watches the clock itself rather than waiting for a stop signal.
  const client = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const start = performance.now();
      const out = await batcher.submit(request);
      const ms = performance.now() - start;
      if (out.length !== request.length)
        throw new Error(`batcher returned ${out.length} outputs for ${request.length} items`);
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = ms;
      items += request.length;
    }
  };
  await Promise.all(Array.from({ length: cfg.clients }, client));
  const elapsedS = (performance.now() - t0) / 1000;
  await batcher.close();
  const m = batcher.metrics;
  return {
    itemsPerSecond: items / elapsedS,
    latenciesMs: latencies.subarray(0, count),
    batches: m.batches,
    fillRate: m.fillRate,
  };
}

export const BATCHER_BENCHMARK: TscudaBenchmark = {
  names: ['batcher_items_per_s', 'batcher_p99_ms'],
  run: async (ctx) => {
    const cfg: BatcherBenchConfig = { ...BATCHER_BENCH };
    await runBatcherOnce({ ...cfg, durationMs: Math.min(300, cfg.durationMs) }); // warm-up (JIT)
    const reps = Math.max(1, Math.min(ctx.timing.reps, 5));
    const rates: number[] = [];
    const p99s: number[] = [];
    let fill = 0;
    for (let r = 0; r < reps; r++) {
      const run = await runBatcherOnce(cfg);
      rates.push(run.itemsPerSecond);
      p99s.push(percentile(Array.from(run.latenciesMs), 0.99));
      fill += run.fillRate / reps;
    }
    // The same load as one-item submits (1024 callers of submitOne-sized requests), for the notes only.
    const single = await runBatcherOnce({ ...cfg, clients: 1024, itemsPerSubmit: 1 });
    const singleNote = `with 1-item requests from 1024 submitters instead: ${(single.itemsPerSecond / 1e6).toFixed(2)}M items/s, p99 ${percentile(Array.from(single.latenciesMs), 0.99).toFixed(2)} ms`;
    const how = `${cfg.clients} concurrent submitters of ${cfg.itemsPerSubmit}-item requests, maxBatchSize ${cfg.maxBatchSize}, maxWaitMs ${cfg.maxWaitMs}, trivial dispatch; ${reps} x ${cfg.durationMs} ms; mean batch fill ${(fill * 100).toFixed(0)}%`;
    return {
      batcher_items_per_s: { pass: summarize(rates), notes: [how, singleNote] },
      batcher_p99_ms: {
        pass: summarize(p99s),
        notes: ['p99 of submit-to-resolve latency per request, median over repetitions'],
      },
    };
  },
};
