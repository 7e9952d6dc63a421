/**
 * The several-GPU bench's results in the main bench's shape (BenchRun: gpu, driver, cuda, commit,
 * date, metrics [{ name, unit, better, tscuda, c, cupy, torch, cudaPython, goal, ratio, met, ... }],
 * versions, peers, settings, durationS), written as bench/results/multi-gpu-<gpu>-<date>.{json,md,svg}
 * so the main bench's reports render it and a run never overwrites the main bench's files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricRecord, BenchRun, PeerStatus } from '../harness/merge.js';
import { resultsBaseName } from '../harness/naming.js';
import { fullMarkdown } from '../harness/output.js';
import type { PeerName } from '../harness/peers.js';
import { toRatioChartSvg } from '../report/chart.js';
import { meetsGoal, ratio, type Goal } from '../report/types.js';

/** One side's value: its median and relative spread (p90 - p10) / median, or why it was not measured. */
export type Side =
  | { median: number; spread: number; samples: number | readonly number[]; note?: string | undefined }
  | { notMeasured: string }
  | undefined;

const value = (s: Side): number | null => (s && 'median' in s && Number.isFinite(s.median) ? s.median : null);

/** A MetricRecord from tscuda's side and the peers' (null where a side did not run). */
export function metricRecord(spec: {
  name: string;
  unit: string;
  better?: 'higher' | 'lower';
  goal: Goal | null;
  tscuda: Side;
  c?: Side;
  torch?: Side;
  notes: readonly string[];
}): MetricRecord {
  const notes = [...spec.notes];
  for (const [who, side] of [
    ['tscuda', spec.tscuda],
    ['C', spec.c],
    ['PyTorch', spec.torch],
  ] as const) {
    if (side && 'notMeasured' in side) notes.push(`${who}: not measured: ${side.notMeasured}`);
    else if (side?.note) notes.push(`${who}: ${side.note}`);
  }
  const spread = (s: Side): number | undefined => (s && 'median' in s ? Math.abs(s.spread * s.median) / 2 : undefined);
  const base = {
    name: spec.name,
    unit: spec.unit,
    better: spec.better ?? 'higher',
    tscuda: value(spec.tscuda),
    c: value(spec.c),
    cupy: null,
    torch: value(spec.torch),
    cudaPython: null,
    goal: spec.goal,
    spread: {
      ...(spread(spec.tscuda) !== undefined ? { tscuda: spread(spec.tscuda)! } : {}),
      ...(spread(spec.c) !== undefined ? { c: spread(spec.c)! } : {}),
    },
  };
  const samples = (s: Side): number | undefined =>
    s && 'median' in s ? (typeof s.samples === 'number' ? s.samples : s.samples.length) : undefined;
  return {
    ...base,
    ratio: ratio(base),
    met: meetsGoal(base),
    goalSource: 'issue',
    samples: {
      ...(samples(spec.tscuda) !== undefined ? { tscuda: samples(spec.tscuda)! } : {}),
      ...(samples(spec.c) !== undefined ? { c: samples(spec.c)! } : {}),
    },
    notes,
  };
}

/** Writes the run as <dir>/multi-gpu-<gpu>-<yyyymmdd>.{json,md,svg}; returns the JSON's path. */
export function writeMultiGpuRun(run: BenchRun, dir: string, date: Date): string {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `multi-gpu-${resultsBaseName(run.gpu, date)}`);
  writeFileSync(`${base}.json`, JSON.stringify(run, null, 2) + '\n');
  writeFileSync(`${base}.md`, fullMarkdown(run));
  writeFileSync(`${base}.svg`, toRatioChartSvg(run) + '\n');
  return `${base}.json`;
}

/** The peers as the main bench lists them: C and PyTorch ran (or why not); CuPy and cuda-python have no several-GPU part. */
export function peerStatuses(
  c: Side,
  torch: { version?: string | undefined; reason?: string | undefined },
): Record<PeerName, PeerStatus> {
  const none: PeerStatus = { status: 'skipped', reason: 'no several-GPU part' };
  return {
    c:
      c && 'median' in c
        ? { status: 'ok', version: 'cuMemcpyPeerAsync loop built with nvcc in this run' }
        : { status: 'failed', reason: c && 'notMeasured' in c ? c.notMeasured : 'not run' },
    cupy: none,
    torch:
      torch.reason === undefined
        ? { status: 'ok', ...(torch.version ? { version: torch.version } : {}) }
        : { status: 'absent', reason: torch.reason },
    cudaPython: none,
  };
}
