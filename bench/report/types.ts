/** Benchmark results and the judgements made on them; pure, so reports render anywhere. */

/** A goal on one metric: the ratio kinds compare tscuda with the native C baseline. */
export type Goal =
  /** tscuda / c <= value */
  | { kind: 'ratio-max'; value: number }
  /** tscuda / c >= value */
  | { kind: 'ratio-min'; value: number }
  /** tscuda <= value, in the metric's unit */
  | { kind: 'abs-max'; value: number }
  /** tscuda >= value, in the metric's unit */
  | { kind: 'abs-min'; value: number }
  /** tscuda / the best of the Python peers (CuPy, PyTorch) >= value: "ahead of the peers" (issue 11's job metrics) */
  | { kind: 'peers-min'; value: number }
  /** tscuda / floor <= value: per-call costs against the same driver call through koffi with no tscuda code (issue 26) */
  | { kind: 'floor-max'; value: number };

export interface MetricResult {
  name: string;
  unit: string;
  better: 'lower' | 'higher';
  /** null: not measured (peer missing, or the run failed). */
  tscuda: number | null;
  c: number | null;
  /**
   * The FFI floor: the same driver call(s) through koffi with no tscuda code, measured in the same
   * passes (median of the passes, like the others); per-call metrics only, absent elsewhere.
   */
  floor?: number | null | undefined;
  cupy: number | null;
  torch: number | null;
  cudaPython: number | null;
  goal: Goal | null;
  /** Run-to-run spread, in the metric's unit; rendered as ±. */
  spread?: { tscuda?: number; c?: number };
}

export interface BenchResults {
  gpu: string;
  driver: string;
  cuda: string;
  commit: string;
  date: string;
  metrics: MetricResult[];
}

function usable(v: number | null): v is number {
  return v !== null && Number.isFinite(v);
}

/** tscuda / c, or null where either is missing or c is 0 (no meaningful ratio). */
export function ratio(m: MetricResult): number | null {
  if (!usable(m.tscuda) || !usable(m.c) || m.c === 0) return null;
  return m.tscuda / m.c;
}

export function isRatioGoal(g: Goal): g is Extract<Goal, { kind: 'ratio-max' | 'ratio-min' }> {
  return g.kind === 'ratio-max' || g.kind === 'ratio-min';
}

/** tscuda / floor, or null where either is missing or the floor is 0. */
export function floorRatio(m: MetricResult): number | null {
  const f = m.floor ?? null;
  if (!usable(m.tscuda) || !usable(f) || f === 0) return null;
  return m.tscuda / f;
}

/** tscuda / the best (by `better`) of CuPy and PyTorch, or null where tscuda or both peers are missing. */
export function peerRatio(m: MetricResult): number | null {
  const peers = [m.cupy, m.torch].filter(usable);
  if (!usable(m.tscuda) || peers.length === 0) return null;
  const best = m.better === 'higher' ? Math.max(...peers) : Math.min(...peers);
  if (best === 0) return null;
  return m.better === 'higher' ? m.tscuda / best : best / m.tscuda;
}

/** null when there is no goal or the values it needs were not measured: unknown, not failed. */
export function meetsGoal(m: MetricResult): boolean | null {
  const g = m.goal;
  if (g === null) return null;
  const v = isRatioGoal(g)
    ? ratio(m)
    : g.kind === 'peers-min'
      ? peerRatio(m)
      : g.kind === 'floor-max'
        ? floorRatio(m)
        : m.tscuda;
  if (!usable(v)) return null;
  return g.kind === 'ratio-max' || g.kind === 'abs-max' || g.kind === 'floor-max' ? v <= g.value : v >= g.value;
}

/** Up to four significant digits without trailing zeros: goals are round numbers someone typed. */
function goalNumber(v: number): string {
  return Number(v.toPrecision(4)).toString();
}

/** e.g. '≤ 1.1× C', '≥ 50 GB/s'. */
export function describeGoal(g: Goal, unit = ''): string {
  const op = g.kind === 'ratio-max' || g.kind === 'abs-max' || g.kind === 'floor-max' ? '≤' : '≥';
  if (isRatioGoal(g)) return `${op} ${goalNumber(g.value)}× C`;
  if (g.kind === 'floor-max') return `${op} ${goalNumber(g.value)}× floor`;
  if (g.kind === 'peers-min') return `${op} ${goalNumber(g.value)}× best peer`;
  return `${op} ${goalNumber(g.value)}${unit === '' ? '' : ` ${unit}`}`;
}

/** About three significant digits, no exponent for ordinary magnitudes; null -> '—'. */
export function formatNumber(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a < 1e-4 || a >= 1e9) return v.toExponential(2);
  return v.toFixed(Math.max(0, 2 - Math.floor(Math.log10(a))));
}

export function formatRatio(r: number | null): string {
  return r === null ? '—' : `${r.toFixed(2)}×`;
}

export function goalMark(met: boolean | null): string {
  return met === null ? '—' : met ? '✓' : '✗';
}
