/**
 * The fixed metric catalogue of issue 6: name, unit, which direction is better, the goal,
 * and how the harness schedules it. Pure data, so tests can check it is complete.
 */
import type { Goal } from '../report/types.js';
import { SIGNAL_OP_ROWS } from '../signal-ops/rows/index.js';
import { rowMetrics } from '../signal-ops/row.js';
import type { MetricSpec } from './metric-spec.js';

/** The Batcher configuration of batcher_items_per_s / batcher_p99_ms; its p99 goal derives from maxWaitMs. */
export const BATCHER_BENCH = {
  /** Concurrent submitters, each awaiting its submit before the next (closed loop). */
  clients: 256,
  /** Items per submit. */
  itemsPerSubmit: 8,
  maxBatchSize: 1024,
  maxWaitMs: 1,
  /** Submits accepted and not yet dispatched: larger than clients, so backpressure never engages. */
  channelSize: 4096,
  /** Wall time of one repetition. */
  durationMs: 700,
} as const;

export type { MetricGroup, MetricSpec } from './metric-spec.js';

const ratioMax = (value: number): Goal => ({ kind: 'ratio-max', value });
const ratioMin = (value: number): Goal => ({ kind: 'ratio-min', value });
const absMax = (value: number): Goal => ({ kind: 'abs-max', value });
const absMin = (value: number): Goal => ({ kind: 'abs-min', value });
const peersMin = (value: number): Goal => ({ kind: 'peers-min', value });
const floorMax = (value: number): Goal => ({ kind: 'floor-max', value });
/** Issue 26: per-call costs are judged against koffi's floor (DESIGN.md); issue 6's goal against C is kept in words. */
const floorNote = (c: string): string =>
  `issue 26: <= 1.1x the FFI floor (the same driver calls through koffi, no tscuda code, in the same passes); issue 6's goal against C was ${c}, its ratio stays in the C column`;

export const METRICS: readonly MetricSpec[] = [
  {
    name: 'launch_empty_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: floorNote('1.1x'),
  },
  {
    name: 'launch_4args_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: floorNote('1.1x'),
  },
  {
    name: 'launch_sync_roundtrip_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: floorNote('none (1.2x derived from await-after-launch)'),
  },
  {
    name: 'await_completion_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: `${floorNote('1.2x')}; the floor is launch + cuStreamQuery once per setImmediate turn. C's value is launch + cuEventRecord + cuEventQuery spin (bench.cu); the issue's reference, launch + cuStreamSynchronize, is launch_sync_roundtrip_us's C value, and the ratio to it is noted too`,
  },
  {
    name: 'event_record_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: floorNote('1.2x'),
  },
  {
    name: 'event_query_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: floorNote('1.2x'),
  },
  {
    name: 'h2d_pinned_gbps',
    unit: 'GB/s',
    better: 'higher',
    goal: ratioMin(0.97),
    goalSource: 'issue',
    group: 'native',
    interleave: false,
  },
  {
    name: 'd2h_pinned_gbps',
    unit: 'GB/s',
    better: 'higher',
    goal: ratioMin(0.97),
    goalSource: 'issue',
    group: 'native',
    interleave: false,
  },
  {
    name: 'bidir_pinned_gbps',
    unit: 'GB/s',
    better: 'higher',
    goal: ratioMin(0.95),
    goalSource: 'issue',
    group: 'native',
    interleave: false,
  },
  {
    name: 'h2d_pageable_gbps',
    unit: 'GB/s',
    better: 'higher',
    goal: ratioMin(0.97),
    goalSource: 'derived',
    group: 'native',
    interleave: false,
    goalNote: 'no goal in issue 6; the 0.97x of the pinned copies',
  },
  {
    name: 'small_copy_roundtrip_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: floorNote('none (1.2x derived from the other round trips)'),
  },
  {
    name: 'alloc_free_async_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: `${floorNote('1.5x')}; the floor is cuMemAllocAsync + cuMemFreeAsync, which tscuda's allocator avoids once warm`,
  },
  {
    name: 'graph_replay_per_kernel_us',
    unit: 'us',
    better: 'lower',
    goal: ratioMax(1.2),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
  },
  {
    name: 'coordinator_edge_us',
    unit: 'us',
    better: 'lower',
    goal: floorMax(1.1),
    goalSource: 'issue',
    group: 'native',
    interleave: true,
    goalNote: floorNote('1.3x'),
  },
  {
    name: 'fft_c2c_4096x8192_ms',
    unit: 'ms',
    better: 'lower',
    goal: ratioMax(1.05),
    goalSource: 'issue',
    group: 'native',
    interleave: false,
  },
  {
    name: 'fft_z2z_4096x8192_ms',
    unit: 'ms',
    better: 'lower',
    goal: ratioMax(1.05),
    goalSource: 'issue',
    group: 'native',
    interleave: false,
  },
  {
    name: 'pipeline_overlap_efficiency',
    unit: 'fraction',
    better: 'higher',
    goal: absMin(0.9),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
  },
  {
    name: 'pipeline_speedup_vs_sequential',
    unit: '×',
    better: 'higher',
    goal: absMin(2.5),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
  },
  {
    name: 'batcher_items_per_s',
    unit: 'items/s',
    better: 'higher',
    goal: absMin(2_000_000),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
  },
  {
    name: 'batcher_p99_ms',
    unit: 'ms',
    better: 'lower',
    goal: absMax(BATCHER_BENCH.maxWaitMs + 1),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
    goalNote: `maxWaitMs (${BATCHER_BENCH.maxWaitMs} ms) + 1 ms`,
  },
  {
    name: 'event_loop_lag_p99_ms',
    unit: 'ms',
    better: 'lower',
    goal: absMax(5),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
  },
  {
    name: 'compile_event_loop_lag_p99_ms',
    unit: 'ms',
    better: 'lower',
    goal: absMax(5),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
    goalNote: 'issue 10: event-loop lag during a 1-second Program.compileAsync()',
  },
  // Issue 11: the job engine (bench/tscuda/engine.ts, peers in bench/peers/stft_job_peer.py).
  {
    name: 'stft_job_gsamples_per_s',
    unit: 'Gsamples/s',
    better: 'higher',
    goal: peersMin(1),
    goalSource: 'issue',
    group: 'peers',
    interleave: false,
    goalNote: 'ahead of the best of CuPy and PyTorch doing the same job; its PCIe goal is stft_job_pcie_fraction',
  },
  {
    name: 'stft_job_pcie_fraction',
    unit: 'fraction',
    better: 'higher',
    goal: absMin(0.8),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
    goalNote:
      'stft_job_gsamples_per_s over the PCIe bound min(pinned H2D, D2H) GB/s / 4 B per sample, both measured in the same run',
  },
  {
    name: 'stft_job_pageable_gsamples_per_s',
    unit: 'Gsamples/s',
    better: 'higher',
    goal: peersMin(1),
    goalSource: 'derived',
    group: 'peers',
    interleave: false,
    goalNote: "issue 11 asks only that it be reported; the pinned job's goal, against the peers' own pageable runs",
  },
  {
    name: 'cwt_job_gsamples_per_s',
    unit: 'Gsamples/s',
    better: 'higher',
    goal: peersMin(1),
    goalSource: 'issue',
    group: 'peers',
    interleave: false,
  },
  {
    name: 'engine_event_loop_lag_p99_ms',
    unit: 'ms',
    better: 'lower',
    goal: absMax(5),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
  },
  // Issue 26: 16-bit samples (bench/tscuda/engine-i16.ts, peers in bench/peers/stft_job16.py).
  {
    name: 'stft_job_i16_gsamples_per_s',
    unit: 'Gsamples/s',
    better: 'higher',
    goal: peersMin(1),
    goalSource: 'issue',
    group: 'peers',
    interleave: false,
    goalNote:
      'i16 in, f16 filtered wave out, otherwise the job of stft_job_gsamples_per_s; ahead of CuPy and PyTorch doing the same 16-bit job; its link goal is stft_job_i16_bound_fraction',
  },
  {
    name: 'stft_job_i16_bound_fraction',
    unit: 'fraction',
    better: 'higher',
    goal: absMin(0.8),
    goalSource: 'issue',
    group: 'tscuda-only',
    interleave: false,
    goalNote:
      'stft_job_i16_gsamples_per_s over min(pinned H2D, D2H) GB/s / 2 B per sample, both measured in the same run',
  },
  // Issue 41: the signal operations (bench/signal-ops/rows/, peers in bench/peers/signal_ops_peer.py).
  ...SIGNAL_OP_ROWS.flatMap(rowMetrics),
];

/** The metric names issue 6 fixes, in its order. */
export const METRIC_NAMES: readonly string[] = METRICS.map((m) => m.name);

export function metricSpec(name: string): MetricSpec {
  const spec = METRICS.find((m) => m.name === name);
  if (!spec) throw new Error(`unknown metric ${name}`);
  return spec;
}

/** Metrics whose name matches `only` (unanchored, like the peers' --only), in catalogue order. */
export function selectMetrics(only: RegExp | null): MetricSpec[] {
  return METRICS.filter((m) => only === null || only.test(m.name));
}

/**
 * An --only pattern for the native program and the peers that selects exactly `names`:
 * the harness filters with JavaScript's RegExp, the children with POSIX ERE and Python's re,
 * so they get exact names rather than the user's pattern.
 */
export function exactNamesPattern(names: readonly string[]): string {
  for (const n of names) if (!/^[a-z0-9_]+$/.test(n)) throw new Error(`metric name ${n} is not [a-z0-9_]+`);
  return `^(${names.join('|')})$`;
}
