/** The run's outputs: the table for the terminal, and the .json/.md/.svg files. */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { toRatioChartSvg } from '../report/chart.js';
import { goalSummary, toMarkdown } from '../report/markdown.js';
import { formatTable } from '../report/table.js';
import type { BenchRun } from './merge.js';
import { PEERS, type PeerName } from './peers.js';
import { resultsPaths, type ResultsPaths } from './naming.js';

const PEER_TITLES: Record<PeerName, string> = {
  c: 'C (driver API)',
  cupy: 'CuPy',
  torch: 'PyTorch',
  cudaPython: 'cuda-python',
};

function firstLine(s: string | undefined): string {
  return (s ?? '').split('\n')[0] ?? '';
}

/** One line per peer: what ran, in which version, or why not. */
export function peerLines(run: BenchRun): string[] {
  return PEERS.map((p) => {
    const s = run.peers[p];
    const detail = s.status === 'ok' ? (s.version ?? '') : firstLine(s.reason);
    return `${PEER_TITLES[p]}: ${s.status}${detail ? ` (${detail})` : ''}`;
  });
}

/** For the terminal, after the table: the verdict, the peers, and what was not measured and why. */
export function textSummary(run: BenchRun): string {
  const lines = [goalSummary(run), '', ...peerLines(run).map((l) => `  ${l}`)];
  const missing = run.metrics.filter((m) => m.tscuda === null);
  if (missing.length > 0) {
    lines.push('', 'not measured for tscuda:');
    for (const m of missing)
      lines.push(
        `  ${m.name}: ${m.notes.find((n) => n.startsWith('tscuda: not measured'))?.replace(/^tscuda: not measured: /, '') ?? 'no value'}`,
      );
  }
  return lines.join('\n') + '\n';
}

function mdEscape(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** toMarkdown's page plus what the table cannot say: peers, settings, and each metric's notes. */
export function fullMarkdown(run: BenchRun): string {
  const out = [toMarkdown(run).trimEnd(), '', '## Peers', ''];
  for (const l of peerLines(run)) out.push(`- ${mdEscape(l)}`);
  out.push(
    '',
    '## Settings',
    '',
    `- repetitions ${run.settings.reps}, loop length ${run.settings.iters}${run.settings.only ? `, --only \`${run.settings.only}\`` : ''}`,
    `- host-timed metrics ran in ${run.settings.rounds} alternating passes (C, tscuda, C, tscuda, ...); each side's value is the median of its passes; ± is half the p10–p90 range of a pass's samples, or half the spread of the pass medians when larger`,
    "- floor (per-call metrics): the same driver calls through koffi with no tscuda code, measured in tscuda's passes (median of the passes); the per-call goals are tscuda / floor <= 1.1, C's column and ratio shown beside it",
    `- versions: ${Object.entries(run.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `- whole run: ${run.durationS.toFixed(0)} s`,
  );
  const noted = run.metrics.filter((m) => m.notes.length > 0);
  if (noted.length > 0) {
    out.push('', '## Notes', '');
    for (const m of noted) {
      out.push(`- **${m.name}**`);
      for (const n of m.notes) out.push(`  - ${mdEscape(n)}`);
    }
  }
  return out.join('\n') + '\n';
}

export interface WrittenFiles extends ResultsPaths {
  copiedTo?: string;
}

/** Writes the three files to `dir` (bench/results), and copies them to $TSCUDA_BENCH_OUT when set. */
export function writeResults(run: BenchRun, dir: string, date: Date, partial: boolean): WrittenFiles {
  mkdirSync(dir, { recursive: true });
  const paths = resultsPaths(dir, run.gpu, date, partial);
  writeFileSync(paths.json, JSON.stringify(run, null, 2) + '\n');
  writeFileSync(paths.md, fullMarkdown(run));
  writeFileSync(paths.svg, toRatioChartSvg(run) + '\n');
  const written: WrittenFiles = { ...paths };
  const out = process.env.TSCUDA_BENCH_OUT;
  if (out) {
    mkdirSync(out, { recursive: true });
    for (const f of [paths.json, paths.md, paths.svg]) copyFileSync(f, join(out, basename(f)));
    written.copiedTo = out;
  }
  return written;
}

export function table(run: BenchRun): string {
  return formatTable(run);
}
