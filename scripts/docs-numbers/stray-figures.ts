/**
 * Measured figures typed by hand: a number with a unit that only measurements carry (µs, GB/s,
 * Gsamples/s, req/s, jobs/s, items/s), a ratio or fraction given to two decimals (1.45x, 0.94 of),
 * a percentage to a decimal (97.4%) or a latency percentile with its figure (p99 56 ms), in the
 * prose of a document (generated blocks, code and comments aside). Goals are round numbers after
 * ≤ or ≥ and stay allowed; defaults and sizes (50 ms, 4 MiB) are not measurements.
 */
import { typedProse } from './blocks.js';

/** A figure found in typed prose, with where it is. */
export interface StrayFigure {
  file: string;
  line: number;
  figure: string;
}

const MEASUREMENT = new RegExp(
  [
    // a number with a unit only measurements carry
    String.raw`\d[\d,.]*(?:[-–]\d[\d,.]*)?\s?(?:µs|us|GB/s|Gsamples/s|Msamples/s|req/s|requests/s|jobs/s|items/s)(?![\w/])`,
    // a ratio to two or more decimals: 1.45x, 0.94×
    String.raw`\d+\.\d{2,}\s?[x×](?!\w)`,
    // a fraction of a bound to two or more decimals: "0.94 of"
    String.raw`\b0\.\d{2,} of\b`,
    // a percentage to a decimal: 97.4%
    String.raw`\d+\.\d+\s?%`,
    // a latency percentile with its figure: "p99 56 ms", "p50 of 2.37 ms"
    String.raw`\bp(?:50|90|95|99)(?: of)?\s+\d[\d.,]*(?:[-–]\d[\d.,]*)?\s?(?:ms|s)\b`,
  ].join('|'),
  'g',
);

/** A goal is stated after a comparison: `≤ 1.1×`, `>= 0.8 of`. */
const GOAL_BEFORE = /(?:[≤≥<>]=?|at (?:most|least))\s*$/;

/** Every measured figure typed by hand in `text`, a document named `file`. */
export function strayFigures(text: string, file: string): StrayFigure[] {
  const found: StrayFigure[] = [];
  for (const [i, line] of typedProse(text).split('\n').entries()) {
    for (const match of line.matchAll(MEASUREMENT)) {
      if (GOAL_BEFORE.test(line.slice(0, match.index))) continue;
      found.push({ file, line: i + 1, figure: match[0] });
    }
  }
  return found;
}
