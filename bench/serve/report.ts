/**
 * The serve bench's headline metrics (issue 12's goals against the Python peer, each with the HTTP
 * floor of the same load and process count beside it where the floor part measured one) and the
 * sweep's Markdown.
 */
import type { SweepRow } from './load.js';
import type { FloorRow } from './floors.js';
import { THROUGHPUT_MIX } from './mixes.js';
import type { Settings } from './settings.js';
import { BATCH_DIM, BATCH_ITEMS, type SweepPart } from './sweep.js';

/** One headline metric: tscuda's figure, the Python peer's, the HTTP floor's (same load, same process count), the goal. */
export interface Metric {
  name: string;
  unit: string;
  tscuda: number | null;
  python: number | null;
  floor: number | null;
  goal: string;
  pass: boolean | null;
}

/** What the Python peer measured. */
export interface PythonPart {
  rps64: number | null;
  p99At64: number | null;
  gsamplesPerS: number | null;
  version: string | null;
}

/** The fault run's two figures. */
export interface FaultFigures {
  unanswered: number | null;
  recoveryS: number | null;
}

const ratio = (a: number | null, b: number | null): number | null =>
  a === null || b === null || b === 0 ? null : a / b;

/** The headline metrics. */
export function headlineMetrics(
  s: Settings,
  sweep: SweepPart,
  py: PythonPart,
  floors: readonly FloorRow[],
  inProcessGs: number | null,
  fault: FaultFigures,
): Metric[] {
  const floorOf = (name: string, workers: number): FloorRow | undefined =>
    floors.find((r) => r.name === name && r.workers === workers);
  const small = floorOf('small f32', s.workers);
  const large = floorOf('16x65536 f32', s.throughputWorkers);
  return [
    {
      name: 'serve_stft_rps',
      unit: `req/s at c=64 (${s.workers} worker${s.workers === 1 ? '' : 's'})`,
      tscuda: sweep.rps64,
      python: py.rps64,
      floor: small?.floor.rps ?? null,
      goal: '>= 2x Python',
      pass: ratio(sweep.rps64, py.rps64) === null ? null : ratio(sweep.rps64, py.rps64)! >= 2,
    },
    {
      name: 'serve_stft_p99_ms',
      unit: 'ms at c=64',
      tscuda: sweep.p99At64,
      python: py.p99At64,
      floor: small?.floor.p99Ms ?? null,
      goal: '<= Python',
      pass: sweep.p99At64 === null || py.p99At64 === null ? null : sweep.p99At64 <= py.p99At64,
    },
    {
      name: 'serve_stft_gsamples_per_s',
      unit: `Gsamples/s (${THROUGHPUT_MIX.batch}x${THROUGHPUT_MIX.n}, c=${s.throughputConcurrency}, tscuda serve --workers ${s.throughputWorkers}; Python one process)`,
      tscuda: sweep.gsamplesPerS,
      python: py.gsamplesPerS,
      floor: large === undefined ? null : (large.floor.rps * THROUGHPUT_MIX.batch * THROUGHPUT_MIX.n) / 1e9,
      goal: `>= 0.7 x in-process ${inProcessGs?.toFixed(3) ?? '?'}`,
      pass: sweep.gsamplesPerS === null || inProcessGs === null ? null : sweep.gsamplesPerS >= 0.7 * inProcessGs,
    },
    {
      name: 'serve_batch_items_per_s',
      unit: `items/s (${BATCH_ITEMS} x dim ${BATCH_DIM} per request, c=64)`,
      tscuda: sweep.batchItemsPerS,
      python: null,
      floor: null,
      goal: 'measured',
      pass: sweep.batchItemsPerS === null ? null : sweep.batchItemsPerS > 0,
    },
    {
      name: 'serve_lost_requests',
      unit: 'requests without a response (sweep)',
      tscuda: sweep.ready ? sweep.lost : null,
      python: null,
      floor: null,
      goal: '0, and zero 5xx',
      pass: sweep.ready ? sweep.lost === 0 && sweep.fiveXX === 0 : null,
    },
    {
      name: 'serve_fault_unanswered',
      unit: 'requests without a response (fault run)',
      tscuda: fault.unanswered,
      python: null,
      floor: null,
      goal: '0',
      pass: fault.unanswered === null ? null : fault.unanswered === 0,
    },
    {
      name: 'serve_fault_recovery_s',
      unit: 's, worst fault to replacement serving',
      tscuda: fault.recoveryS,
      python: null,
      floor: null,
      goal: '<= 5',
      pass: fault.recoveryS === null ? null : fault.recoveryS <= 5,
    },
  ];
}

const fmt = (v: number | null, digits = 2): string =>
  v === null ? '—' : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(digits);

/** The headline metrics and the sweep as Markdown. */
export function sweepMarkdown(metrics: readonly Metric[], rows: readonly SweepRow[]): string[] {
  return [
    '| metric | unit | tscuda | Python peer | HTTP floor | goal | met |',
    '| --- | --- | ---: | ---: | ---: | --- | --- |',
    ...metrics.map(
      (m) =>
        `| ${m.name} | ${m.unit} | ${fmt(m.tscuda)} | ${fmt(m.python)} | ${fmt(m.floor)} | ${m.goal} | ${m.pass === null ? 'not measured' : m.pass ? 'yes' : 'no'} |`,
    ),
    '',
    '## Sweep (perf_analyzer columns)',
    '',
    '| server | concurrency | throughput (req/s) | p50 ms | p90 ms | p99 ms | errors | non-2xx | event-loop lag p99 ms | GPU busy |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.server} | ${r.concurrency} | ${r.throughputRps.toFixed(0)} | ${r.p50Ms} | ${r.p90Ms} | ${r.p99Ms} | ${r.errors} | ${r.non2xx} | ${r.eventLoopLagP99Ms === null ? '—' : r.eventLoopLagP99Ms.toFixed(1)} | ${r.gpuBusyFraction === null ? '—' : r.gpuBusyFraction.toFixed(2)} |`,
    ),
    '',
  ];
}
