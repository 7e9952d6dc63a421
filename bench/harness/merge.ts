/** Merges every side's numbers into the report's rows: pure, so it is tested without a GPU. */
import { floorRatio, meetsGoal, ratio, type BenchResults, type MetricResult } from '../report/types.js';
import type { MetricSpec } from './metrics.js';
import { PEERS, type PeerName, type PeerOutcome } from './peers.js';
import { combinePasses, type Measurement, type PassSummary } from './stats.js';

/** tscuda's side of one metric. */
export interface TscudaMetricRun {
  passes: PassSummary[];
  /** How it was measured where that differs from the obvious, or what it ran on. */
  notes: string[];
  /** Set when it could not be measured: why (a module not there yet, an error). */
  notMeasured?: string;
  /** The FFI floor's passes (per-call metrics: the same driver call through koffi, no tscuda code). */
  floorPasses?: PassSummary[];
}

export interface MetricRecord extends MetricResult {
  /** tscuda / C, or null. */
  ratio: number | null;
  /** tscuda / floor, or null (no floor for this metric, or not measured). */
  floorRatio?: number | null;
  /** Whether the goal is met; null: not measured. */
  met: boolean | null;
  goalSource: MetricSpec['goalSource'];
  samples: { tscuda?: number; c?: number };
  notes: string[];
}

export interface PeerStatus {
  status: PeerOutcome['status'];
  version?: string;
  reason?: string;
}

export interface BenchRun extends BenchResults {
  metrics: MetricRecord[];
  /** CUDA runtime / cuFFT versions and the like, as found. */
  versions: Record<string, string>;
  peers: Record<PeerName, PeerStatus>;
  tscuda: { status: 'ok' | 'failed'; reason?: string };
  /** rounds: passes of the host-timed metrics, alternating C and tscuda. */
  settings: { reps: number; iters: number; rounds: number; only: string | null };
  durationS: number;
}

const PEER_TITLES: Record<PeerName, string> = { c: 'C', cupy: 'CuPy', torch: 'PyTorch', cudaPython: 'cuda-python' };

/** A peer's single value of a metric: the median of its passes' medians. */
function peerMeasurement(outcome: PeerOutcome | undefined, name: string): Measurement | null {
  if (!outcome || outcome.status !== 'ok') return null;
  const passes = outcome.passes.map((p) => p[name]).filter((m): m is NonNullable<typeof m> => m !== undefined);
  return combinePasses(passes);
}

function peerNotes(outcome: PeerOutcome | undefined, name: string, measured: boolean): string[] {
  if (!outcome || outcome.status !== 'ok') return [];
  const title = PEER_TITLES[outcome.peer];
  const notes = new Set<string>();
  for (const pass of outcome.passes) {
    const note = pass[name]?.note;
    if (note) notes.add(`${title}: ${note}`);
  }
  const error = outcome.errors[name];
  if (error !== undefined) notes.add(measured ? `${title}: one pass failed: ${error}` : `${title}: failed: ${error}`);
  return [...notes];
}

function round(v: number, digits = 6): number {
  return Number(v.toPrecision(digits));
}

/**
 * One row per selected metric, in catalogue order: each peer's value (null where absent,
 * failed or not run), tscuda's, spreads, ratio, verdict and notes.
 */
export function mergeMetrics(
  specs: readonly MetricSpec[],
  peers: Partial<Record<PeerName, PeerOutcome>>,
  tscuda: Readonly<Record<string, TscudaMetricRun>>,
): MetricRecord[] {
  const rows = specs.map((spec): MetricRecord => {
    const values: Partial<Record<PeerName, Measurement | null>> = {};
    for (const p of PEERS) values[p] = peerMeasurement(peers[p], spec.name);
    const run = tscuda[spec.name];
    const mine = run && run.notMeasured === undefined ? combinePasses(run.passes) : null;
    const notes: string[] = [];
    if (!run) notes.push('tscuda: not measured: not run');
    else if (run.notMeasured !== undefined) notes.push(`tscuda: not measured: ${run.notMeasured}`);
    else if (mine === null) notes.push('tscuda: not measured: no samples');
    if (run) notes.push(...run.notes.map((n) => `tscuda: ${n}`));
    for (const p of PEERS) notes.push(...peerNotes(peers[p], spec.name, values[p] !== null && values[p] !== undefined));
    if (spec.goalNote) notes.push(`goal: ${spec.goalNote}`);
    const c = values.c ?? null;
    const floor =
      run && run.notMeasured === undefined && run.floorPasses && run.floorPasses.length > 0
        ? combinePasses(run.floorPasses)
        : null;
    const row: MetricRecord = {
      name: spec.name,
      unit: spec.unit,
      better: spec.better,
      tscuda: mine === null ? null : round(mine.value),
      c: c === null ? null : round(c.value),
      ...(floor === null ? {} : { floor: round(floor.value) }),
      cupy: values.cupy ? round(values.cupy.value) : null,
      torch: values.torch ? round(values.torch.value) : null,
      cudaPython: values.cudaPython ? round(values.cudaPython.value) : null,
      goal: spec.goal,
      ratio: null,
      met: null,
      goalSource: spec.goalSource,
      samples: {},
      notes,
    };
    const spread: { tscuda?: number; c?: number } = {};
    if (mine !== null) {
      spread.tscuda = round(mine.spread, 3);
      row.samples.tscuda = mine.samples;
    }
    if (c !== null) {
      spread.c = round(c.spread, 3);
      row.samples.c = c.samples;
    }
    if (spread.tscuda !== undefined || spread.c !== undefined) row.spread = spread;
    const r = ratio(row);
    row.ratio = r === null ? null : round(r, 4);
    if (floor !== null) {
      const fr = floorRatio(row);
      row.floorRatio = fr === null ? null : round(fr, 4);
    }
    row.met = meetsGoal(row);
    return row;
  });
  // The issue states the await goal against C's launch + cuStreamSynchronize: say that ratio too.
  const awaitRow = rows.find((r) => r.name === 'await_completion_us');
  const syncC = peerMeasurement(peers.c, 'launch_sync_roundtrip_us');
  if (awaitRow && awaitRow.tscuda !== null && syncC !== null && syncC.value > 0) {
    awaitRow.notes.push(
      `ratio to C's launch + cuStreamSynchronize (launch_sync_roundtrip_us, ${round(syncC.value, 4)} us): ${(awaitRow.tscuda / syncC.value).toFixed(2)}×`,
    );
  }
  return rows;
}

export function peerStatuses(peers: Partial<Record<PeerName, PeerOutcome>>): Record<PeerName, PeerStatus> {
  const out = {} as Record<PeerName, PeerStatus>;
  for (const p of PEERS) {
    const o = peers[p];
    const s: PeerStatus = { status: o?.status ?? 'skipped' };
    if (o?.version !== undefined) s.version = o.version;
    if (o?.reason !== undefined) s.reason = o.reason;
    else if (!o) s.reason = 'not run';
    out[p] = s;
  }
  return out;
}
