/**
 * The demo as the docs show it: the newest committed `tscuda demo` run (`bench/results/demo-<host>-<date>-<commit>`,
 * its `summary.json` as the demo writes it) in one table: where it ran, how fast, against which
 * bound, and whether the planted cycles were found.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatNumber } from '../../bench/report/types.js';
import { markdownTable } from './bench-tables.js';
import { ResultsFileError } from './results.js';

/** The parts of the demo's summary.json the docs quote. */
export interface DemoSummary {
  devices: { ordinal: number; name: string }[];
  batch: number;
  length: number;
  lanes: number;
  seconds: number;
  jobs: number;
  gsamplesPerSecond: number;
  fractionOfBound: number | null;
  oneLaneGsamplesPerSecond: number | null;
  speedup: number | null;
  cycles: { planted: { period: number }; series: number; found: number }[];
}

/** A demo run: its folder inside bench/results/ and its summary. */
export interface DemoRun {
  folder: string;
  summary: DemoSummary;
}

/** The newest demo run under `dir` (bench/results/), by the folder's date (`demo-<host>-<yyyymmdd>-<commit>`), or undefined. */
export function newestDemo(dir: string): DemoRun | undefined {
  const folders = readdirSync(dir)
    .filter((f) => /^demo-.*-\d{8}/.test(f) && existsSync(join(dir, f, 'summary.json')))
    .sort((a, b) => (/\d{8}/.exec(b)?.[0] ?? '').localeCompare(/\d{8}/.exec(a)?.[0] ?? '') || a.localeCompare(b));
  const folder = folders[0];
  if (folder === undefined) return undefined;
  let summary: DemoSummary;
  try {
    summary = JSON.parse(readFileSync(join(dir, folder, 'summary.json'), 'utf8')) as DemoSummary;
  } catch (e) {
    throw new ResultsFileError(`bench/results/${folder}/summary.json: not readable JSON (${(e as Error).message})`);
  }
  if (
    !Array.isArray(summary.devices) ||
    typeof summary.gsamplesPerSecond !== 'number' ||
    !Array.isArray(summary.cycles)
  ) {
    throw new ResultsFileError(`bench/results/${folder}/summary.json: no devices, gsamplesPerSecond or cycles`);
  }
  return { folder, summary };
}

/** The demo run in one table, under the link to its folder. */
export function demoSection(run: DemoRun | undefined, base: string): string {
  if (run === undefined) return 'Not measured yet on this tree: no `bench/results/demo-*/summary.json` is committed.';
  const s = run.summary;
  const gpus = [...new Set(s.devices.map((d) => d.name))]
    .map((name) => `${s.devices.filter((d) => d.name === name).length} x ${name}`)
    .join(', ');
  const found = s.cycles.reduce((n, c) => n + c.found, 0);
  const series = s.cycles.reduce((n, c) => n + c.series, 0);
  const rows = [
    ['GPUs', gpus],
    ['job', `${s.batch} series x ${s.length} samples, ${s.lanes} lanes per GPU`],
    ['jobs in the timed window', `${s.jobs} in ${formatNumber(s.seconds)} s`],
    ['Gsamples/s (input)', formatNumber(s.gsamplesPerSecond)],
    ['share of the PCIe bound measured in the run', formatNumber(s.fractionOfBound)],
    ['speedup over one lane', formatNumber(s.speedup)],
    ['planted cycles found', `${found} of ${series}`],
  ];
  return [
    `[${run.folder}/summary.json](${base}/${run.folder}/summary.json):`,
    '',
    markdownTable(['what', 'demo'], rows, (c) => c === 1),
  ].join('\n');
}
