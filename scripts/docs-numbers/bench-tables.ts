/**
 * The main bench and the several-GPU bench as the docs show them: every metric of the newest whole
 * run per host, the README's short table, and the per-call sentence whose met and missed lists are
 * the results' own verdicts (meetsGoal), so prose can never call met what the file marks missed.
 */
import { goalSummary, cell } from '../../bench/report/markdown.js';
import { COLUMNS, TEXT_COLUMNS, metricRow } from '../../bench/report/table.js';
import {
  describeGoal,
  floorRatio,
  formatNumber,
  formatRatio,
  goalMark,
  meetsGoal,
  type MetricResult,
} from '../../bench/report/types.js';
import type { BenchFile } from './results.js';

/** A Markdown table from a header and rows of cells; `right` says which columns hold numbers. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  right: (column: number) => boolean,
): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  const align = header.map((_, c) => (right(c) ? '---:' : ':---'));
  return [line(header), `| ${align.join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** `[name](base/name)`: a results file linked from a document whose path to bench/results/ is `base`. */
export function resultsLink(base: string, file: string): string {
  return `[${file}](${base}/${file})`;
}

/** The companion Markdown of a results JSON, which carries the notes and settings the tables leave out. */
function markdownOf(file: string): string {
  return file.replace(/\.json$/, '.md');
}

/** What a run was, in one line: where its full page is, when, which tree, and how many goals it met. */
export function runLine(run: BenchFile, base: string): string {
  const d = run.data;
  return `${resultsLink(base, markdownOf(run.file))}: ${d.date.slice(0, 10)}, commit \`${d.commit.slice(0, 7)}\`, driver ${d.driver}, CUDA ${d.cuda}; **${goalSummary(d)}**.`;
}

/** Every metric of one run, in the bench's own columns (bench/report/table.ts). */
export function fullTable(run: BenchFile): string {
  return markdownTable(
    COLUMNS,
    run.data.metrics.map(metricRow),
    (c) => !TEXT_COLUMNS.has(c) && c !== COLUMNS.length - 1,
  );
}

/** One section per GPU: the newest whole run of each host, newest host first. */
export function hostSections(runs: readonly BenchFile[], base: string): string {
  if (runs.length === 0)
    return 'Not measured yet on this tree: no whole `npm run bench` run is committed under bench/results/.';
  return runs
    .map((run) => [`#### ${run.data.gpu}`, '', runLine(run, base), '', fullTable(run)].join('\n'))
    .join('\n\n');
}

/** The several-GPU run: its table and what its notes say bounds two GPUs (the bench's own words and figures). */
export function multiGpuSection(run: BenchFile | undefined, base: string): string {
  if (run === undefined)
    return 'Not measured yet on this tree: no `bench/tscuda/multi-gpu.ts` run is committed under bench/results/.';
  const bound = run.data.metrics
    .flatMap(notesOf)
    .filter(
      (n) =>
        n.startsWith('pinned copies of') || n.includes('links share a bottleneck') || n.includes('links do not share'),
    );
  return [
    `${run.data.gpu}, ${runLine(run, base)}`,
    '',
    fullTable(run),
    ...(bound.length > 0 ? ['', "What bounds the job, from the run's notes:", '', ...bound.map((n) => `- ${n}`)] : []),
  ].join('\n');
}

/** The notes of a metric (what was timed, the bounds measured in the same run), where the results carry them. */
function notesOf(m: MetricResult): string[] {
  return (m as MetricResult & { notes?: string[] }).notes ?? [];
}

/**
 * Some rows of a run (e.g. the job engine's), in the bench's own columns, followed by
 * the notes of those rows that state a bound: the link figures the job is judged against.
 */
export function rowsSection(run: BenchFile | undefined, names: readonly string[], base: string): string {
  const metrics = (run?.data.metrics ?? []).filter((m) => names.includes(m.name));
  if (run === undefined || metrics.length === 0)
    return `Not measured yet on this tree: no committed run has ${names.map((n) => `\`${n}\``).join(', ')}.`;
  // Several rows often share one bound note: each is listed once.
  const bounds = [...new Set(metrics.flatMap((m) => notesOf(m).filter((n) => /\bbound\b/.test(n))))].map(
    (n) => `- ${n.replace(/^tscuda: /, '')}`,
  );
  const table = fullTable({ ...run, data: { ...run.data, metrics } });
  return [`${run.data.gpu}, ${runLine(run, base)}`, '', table, ...(bounds.length > 0 ? ['', ...bounds] : [])].join(
    '\n',
  );
}

/** A row of the README's table: which metric, under what name. */
interface HeadlineRow {
  metric: string;
  label: string;
}

const ONE_GPU_ROWS: readonly HeadlineRow[] = [
  { metric: 'launch_4args_us', label: 'kernel launch, 4 arguments' },
  { metric: 'event_record_us', label: 'event record' },
  { metric: 'h2d_pinned_gbps', label: 'pinned copy, host to device' },
  { metric: 'stft_job_gsamples_per_s', label: 'STFT job, f32 samples' },
  { metric: 'stft_job_pcie_fraction', label: 'STFT job, f32: share of the one-way PCIe bound' },
  { metric: 'stft_job_i16_gsamples_per_s', label: 'STFT job, i16 in, f16 out' },
];

const TWO_GPU_ROWS: readonly HeadlineRow[] = [
  { metric: 'stft_job_multi_gpu_gsamples_per_s', label: 'STFT job on two GPUs, one process' },
  { metric: 'p2p_copy_gbps', label: 'peer copy between the GPUs' },
  { metric: 'nccl_allreduce_busbw_gbps', label: 'NCCL all-reduce, bus bandwidth' },
];

const HEADLINE_HEADER = ['what', 'unit', 'tscuda', 'C', 'koffi floor', 'PyTorch', 'CuPy', 'goal', 'met'] as const;

function headlineRows(run: BenchFile, rows: readonly HeadlineRow[]): string[][] {
  return rows.map(({ metric, label }) => {
    const m = run.data.metrics.find((x) => x.name === metric);
    if (m === undefined) return [label, '', 'not measured in this run', '', '', '', '', '', ''];
    return [
      label,
      m.unit,
      formatNumber(m.tscuda),
      formatNumber(m.c),
      formatNumber(m.floor),
      formatNumber(m.torch),
      formatNumber(m.cupy),
      m.goal === null ? '—' : describeGoal(m.goal, m.unit),
      goalMark(meetsGoal(m)),
    ];
  });
}

/** The README's Performance table: a few rows of the newest one-GPU and two-GPU runs, each under the link to its file. */
export function headlineTables(oneGpu: BenchFile | undefined, twoGpus: BenchFile | undefined, base: string): string {
  const numeric = (c: number): boolean => c >= 2 && c <= 6;
  const parts: string[] = [];
  for (const [run, rows] of [
    [oneGpu, ONE_GPU_ROWS],
    [twoGpus, TWO_GPU_ROWS],
  ] as const) {
    if (run === undefined) continue;
    parts.push(
      `${run.data.gpu}, ${runLine(run, base)}`,
      '',
      markdownTable(HEADLINE_HEADER, headlineRows(run, rows), numeric),
      '',
    );
  }
  return parts.length === 0 ? 'Not measured yet on this tree.' : parts.join('\n').trimEnd();
}

function joinList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * The per-call goal in one sentence: which metrics met "within N× of koffi's floor" in this run and
 * which missed it, with their ratios, straight from meetsGoal.
 */
export function perCallSentence(run: BenchFile | undefined): string {
  const perCall = (run?.data.metrics ?? []).filter((m) => m.goal?.kind === 'floor-max');
  const goal = perCall[0]?.goal;
  if (run === undefined || goal === undefined || goal === null)
    return "The per-call goal against koffi's floor is not measured yet on this tree.";
  const named = (m: MetricResult): string => `\`${m.name}\` ${formatRatio(floorRatio(m))}`;
  const met = perCall.filter((m) => meetsGoal(m) === true).map(named);
  const missed = perCall.filter((m) => meetsGoal(m) === false).map(named);
  const unknown = perCall.filter((m) => meetsGoal(m) === null).map((m) => `\`${m.name}\``);
  return [
    `Per call, the goal is tscuda ${describeGoal(goal)} (koffi's floor: the same driver call through koffi with no tscuda code, measured in the same passes).`,
    ` In the newest run (${run.data.gpu}, ${run.data.date.slice(0, 10)}) it was met by ${met.length === 0 ? 'none' : joinList(met)}`,
    missed.length === 0 ? ' and missed by none' : `, and missed by ${joinList(missed)}`,
    unknown.length === 0 ? '.' : `; not measured: ${joinList(unknown)}.`,
  ].join('');
}
