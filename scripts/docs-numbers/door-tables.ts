/**
 * The serve and queue benches as the docs show them. Each door is judged against its transport
 * floor (a bare node:http server, bare BullMQ) measured in the same run: the throughput tables
 * show tscuda, the floor, their ratio and how busy the GPU was, from the newest committed run that
 * measured floors; the results tables show every metric of the newest run per host.
 */
import { formatNumber, formatRatio } from '../../bench/report/types.js';
import { markdownTable, resultsLink } from './bench-tables.js';
import type { FloorPart } from '../../bench/serve/floor-runs.js';
import type { FloorRow } from '../../bench/serve/floors.js';
import { doorGpu, newestPerHost, type DoorMetric, type DoorResults, type ResultsFile } from './results.js';

/** The serve bench keeps its floor part (rows, best floors, goals) under `floors`; null where it was not run. */
type DoorFile = ResultsFile<DoorResults & { floors?: FloorPart | null }>;

/** Which bench a door's results come from, for the tables' links and the not-measured line. */
export interface Door {
  /** `serve` or `queue`: the results files are `<kind>-*.json`. */
  kind: 'serve' | 'queue';
  /** How to measure it: the command a GPU host runs. */
  command: string;
  /** The column beside tscuda in the bench's own table: the Python peer or the in-process engine. */
  peer: { label: string; value(m: DoorMetric): number | null | undefined };
}

/** The serve bench: its metrics carry the Python peer beside tscuda. */
export const SERVE_DOOR: Door = {
  kind: 'serve',
  command: 'npm run bench:serve',
  peer: { label: 'Python peer', value: (m) => m.python },
};

/** The queue bench: its metrics carry the in-process engine beside tscuda. */
export const QUEUE_DOOR: Door = {
  kind: 'queue',
  command: 'npx tsx bench/queue/main.ts',
  peer: { label: 'in-process', value: (m) => m.inProcess },
};

/** The serve floor rows of a run, those that carry both sides (a row cut short by an error is left out). */
function floorRowsOf(file: DoorFile): FloorRow[] {
  const rows = file.data.floors?.rows ?? [];
  return Array.isArray(rows)
    ? rows.filter((r) => typeof r?.name === 'string' && typeof r.tscuda === 'object' && typeof r.floor === 'object')
    : [];
}

function hasFloors(file: DoorFile): boolean {
  return floorRowsOf(file).length > 0 || file.data.metrics.some((m) => typeof m.floor === 'number');
}

function verdict(v: boolean | null | undefined): string {
  return v === true ? 'yes' : v === false ? 'no' : '—';
}

function ratioOf(tscuda: number | null | undefined, floor: number | null | undefined): number | null {
  return typeof tscuda === 'number' && typeof floor === 'number' && floor !== 0 ? tscuda / floor : null;
}

function busyOf(m: DoorMetric): number | null {
  return m.gpuBusy ?? m.gpuBusyFraction ?? null;
}

/** The serve bench's floor rows (one per load and process count), then its floor goals where it states them. */
function floorRowsTable(run: DoorFile, rows: readonly FloorRow[]): string {
  const cells = rows.map((r) => [
    r.name,
    `${r.workers}${r.defaultWorkers ? ' (default)' : ''}`,
    String(r.concurrency),
    formatNumber(r.tscuda.rps ?? null),
    formatNumber(r.floor.rps ?? null),
    formatRatio(ratioOf(r.tscuda.rps, r.floor.rps)),
    formatNumber(r.tscuda.gpuBusy ?? null),
    formatNumber(r.tscuda.cpuMsPerRequest ?? null),
    formatNumber(r.floor.cpuMsPerRequest ?? null),
    formatNumber(r.tscuda.eventLoopLagP99Ms ?? null),
    `≥ ${r.goal.value}× floor`,
    verdict(r.met),
  ]);
  const header = [
    'row',
    'processes',
    'concurrency',
    'tscuda req/s',
    'floor req/s',
    'tscuda / floor',
    'GPU busy',
    'tscuda CPU ms/req',
    'floor CPU ms/req',
    'event-loop lag p99 ms',
    'goal',
    'met',
  ];
  const table = markdownTable(header, cells, (c) => c >= 1 && c <= 9);
  const goals = run.data.floors?.goals ?? [];
  if (goals.length === 0) return table;
  const goalCells = goals.map((g) => [
    g.goal,
    g.row,
    formatNumber(g.tscuda),
    formatNumber(g.floor),
    formatRatio(g.ratio),
    verdict(g.met),
  ]);
  return [
    table,
    '',
    markdownTable(['goal', 'row', 'tscuda', 'floor', 'tscuda / floor', 'met'], goalCells, (c) => c >= 2 && c <= 4),
  ].join('\n');
}

/** The metrics that carry a floor beside tscuda (the queue bench's shape). */
function floorMetricsTable(run: DoorFile): string {
  const cells = run.data.metrics
    .filter((m) => typeof m.floor === 'number')
    .map((m) => [
      m.name,
      m.unit,
      formatNumber(m.tscuda),
      formatNumber(m.floor),
      formatRatio(ratioOf(m.tscuda, m.floor)),
      formatNumber(busyOf(m)),
      m.goal ?? '—',
      verdict(m.met ?? m.pass),
    ]);
  const header = ['metric', 'unit', 'tscuda', 'floor', 'tscuda / floor', 'GPU busy', 'goal', 'met'];
  return markdownTable(header, cells, (c) => c >= 2 && c <= 5);
}

/**
 * The door's throughput against its floor, from the newest run that measured floors; a one-line
 * "not measured yet" where no committed run has.
 */
export function throughputSection(files: readonly DoorFile[], door: Door, base: string): string {
  const run = files.find(hasFloors);
  if (run === undefined) {
    return `Not measured yet on this tree: no committed \`bench/results/${door.kind}-*.json\` carries floors (\`${door.command}\` on a GPU host, then \`npm run docs:numbers\`).`;
  }
  // The doors' costs differ much between Node lines: a run that did not record its own says so.
  const node = run.data.node;
  const heading = `${doorGpu(run.data)}, ${node === undefined ? 'Node line not recorded' : `Node ${node}`}, ${run.data.date.slice(0, 10)}: ${resultsLink(base, run.file.replace(/\.json$/, '.md'))}.`;
  const rows = floorRowsOf(run);
  return [heading, '', rows.length > 0 ? floorRowsTable(run, rows) : floorMetricsTable(run)].join('\n');
}

/** Every metric of the newest run per host, as the bench judged it. */
export function resultsSection(files: readonly DoorFile[], door: Door, base: string): string {
  // A run of only some parts (the serve bench's floors alone) has no metrics to show here.
  const runs = newestPerHost(
    files.filter((f) => f.data.metrics.length > 0),
    doorGpu,
  );
  if (runs.length === 0) return `Not measured yet on this tree: no \`bench/results/${door.kind}-*.json\` is committed.`;
  return runs
    .map((run) => {
      const withFloor = hasFloors(run);
      const header = ['metric', 'unit', 'tscuda', door.peer.label, ...(withFloor ? ['floor'] : []), 'goal', 'met'];
      const cells = run.data.metrics.map((m) => [
        m.name,
        m.unit,
        formatNumber(m.tscuda),
        formatNumber(door.peer.value(m) ?? null),
        ...(withFloor ? [formatNumber(m.floor ?? null)] : []),
        m.goal ?? '—',
        verdict(m.met ?? m.pass),
      ]);
      const numbers = withFloor ? 4 : 3;
      return [
        `${doorGpu(run.data)}, ${run.data.date.slice(0, 10)}: ${resultsLink(base, run.file.replace(/\.json$/, '.md'))}.`,
        '',
        markdownTable(header, cells, (c) => c >= 2 && c <= numbers),
      ].join('\n');
    })
    .join('\n\n');
}
