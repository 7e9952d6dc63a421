/** The results as a fixed-width text table, for terminals and logs. */
import {
  describeGoal,
  floorRatio,
  formatNumber,
  formatRatio,
  goalMark,
  meetsGoal,
  ratio,
  type BenchResults,
  type MetricResult,
} from './types.js';

/** 'floor': the same driver call through koffi with no tscuda code (per-call metrics), and tscuda's ratio to it. */
export const COLUMNS = [
  'metric',
  'unit',
  'C',
  'CuPy',
  'PyTorch',
  'cuda-python',
  'floor',
  'tscuda',
  'tscuda/C',
  'tscuda/floor',
  'goal',
  'met',
] as const;

/** Which columns hold text (left-aligned); the rest are numbers (right-aligned). */
export const TEXT_COLUMNS: ReadonlySet<number> = new Set([0, 1, 10]);

function withSpread(v: number | null, spread: number | undefined): string {
  const s = formatNumber(v);
  // Two significant digits: a spread is itself noisy, more would be false precision.
  return v === null || spread === undefined ? s : `${s} ±${Number(spread.toPrecision(2))}`;
}

/** One row of cells per metric, in COLUMNS order; shared by the text and markdown tables. */
export function metricRow(m: MetricResult): string[] {
  return [
    m.name,
    m.unit,
    withSpread(m.c, m.spread?.c),
    formatNumber(m.cupy),
    formatNumber(m.torch),
    formatNumber(m.cudaPython),
    formatNumber(m.floor),
    withSpread(m.tscuda, m.spread?.tscuda),
    formatRatio(ratio(m)),
    formatRatio(floorRatio(m)),
    m.goal === null ? '—' : describeGoal(m.goal, m.unit),
    goalMark(meetsGoal(m)),
  ];
}

/** Code points, not UTF-16 units, so that ✓ and × count as one column. */
function width(s: string): number {
  return [...s].length;
}

function pad(s: string, w: number, right: boolean): string {
  const fill = ' '.repeat(Math.max(0, w - width(s)));
  return right ? fill + s : s + fill;
}

export function formatTable(results: BenchResults): string {
  const rows = [COLUMNS.slice(), ...results.metrics.map(metricRow)];
  const widths = COLUMNS.map((_, c) => Math.max(...rows.map((r) => width(r[c] ?? ''))));
  const line = (r: readonly string[]): string =>
    r
      .map((cell, c) => pad(cell, widths[c] ?? 0, !TEXT_COLUMNS.has(c) && c !== COLUMNS.length - 1))
      .join('  ')
      .trimEnd();
  const [head, ...body] = rows;
  return [line(head ?? []), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n') + '\n';
}
