/** The queue bench's results files: the JSON of the whole run and its markdown table of metrics, with the notes. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { yyyymmdd } from '../harness/naming.js';
import { gpuSlug } from '../report/slug.js';
import type { QueueMetric } from './fault-run.js';

/** A figure as the table shows it: '—' for none, 3 significant digits below 100. */
const fmt = (v: number | null): string => (v === null ? '—' : Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3));

/**
 * Writes queue-<gpu>-<yyyymmdd>.json (`results` as they are) and .md (the metrics' table and the
 * notes) into `dir`; returns their path without the extension and the markdown.
 */
export function writeQueueResults(
  dir: string,
  gpu: string,
  date: Date,
  results: unknown,
  metrics: readonly QueueMetric[],
  notes: readonly string[],
): { base: string; markdown: string } {
  const base = join(dir, `queue-${gpuSlug(gpu)}-${yyyymmdd(date)}`);
  const md = [
    // The Node line is part of the result (the door's costs differ between lines), as in the serve bench's.
    `# Queue bench: ${gpu}, Node ${process.version}, ${date.toISOString()}`,
    '',
    '| metric | unit | tscuda (queue) | floor (bare BullMQ) | tscuda / floor | in-process | goal | met |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...metrics.map(
      (m) =>
        `| ${m.name} | ${m.unit} | ${fmt(m.tscuda)} | ${fmt(m.floor ?? null)} | ${fmt(m.floorRatio ?? null)} | ${fmt(m.inProcess)} | ${m.goal ?? ''} | ${m.met === undefined ? '' : m.met ? 'yes' : 'no'} |`,
    ),
    '',
    ...notes.map((n) => `- ${n}`),
    ...metrics.flatMap((m) => m.notes.map((n) => `- ${m.name}: ${n}`)),
    '',
  ];
  const markdown = md.join('\n');
  const withNode = typeof results === 'object' && results !== null ? { node: process.version, ...results } : results;
  writeFileSync(`${base}.json`, JSON.stringify(withNode, null, 2) + '\n');
  writeFileSync(`${base}.md`, markdown);
  return { base, markdown };
}
