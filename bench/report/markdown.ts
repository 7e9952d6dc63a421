/** The results as a markdown page section, for committing next to the code that produced them. */
import { COLUMNS, TEXT_COLUMNS, metricRow } from './table.js';
import { meetsGoal, type BenchResults } from './types.js';

/** Text made safe for one cell of a Markdown table (escaped pipes and backslashes, no line breaks). */
export function cell(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** e.g. '7 of 9 goals met (1 not measured)'. */
export function goalSummary(results: BenchResults): string {
  const verdicts = results.metrics.filter((m) => m.goal !== null).map(meetsGoal);
  const met = verdicts.filter((v) => v === true).length;
  const unknown = verdicts.filter((v) => v === null).length;
  return `${met} of ${verdicts.length} goals met${unknown > 0 ? ` (${unknown} not measured)` : ''}`;
}

export function toMarkdown(results: BenchResults): string {
  const align = COLUMNS.map((_, c) => (TEXT_COLUMNS.has(c) ? ':---' : c === COLUMNS.length - 1 ? ':---:' : '---:'));
  const row = (cells: readonly string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  return [
    `# tscuda benchmarks: ${results.gpu}`,
    '',
    `- GPU: ${results.gpu}`,
    `- driver: ${results.driver}`,
    `- CUDA: ${results.cuda}`,
    `- commit: \`${results.commit}\``,
    `- date: ${results.date}`,
    '',
    row(COLUMNS),
    `| ${align.join(' | ')} |`,
    ...results.metrics.map((m) => row(metricRow(m))),
    '',
    `**${goalSummary(results)}**`,
    '',
  ].join('\n');
}
