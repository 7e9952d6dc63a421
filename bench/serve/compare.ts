/**
 * Before and after of the serve bench's floor rows: several result files of each tree (runs
 * alternated between them on one host), each row's median over them.
 *   npx tsx bench/serve/compare.ts --before a.json,b.json --after c.json,d.json --out bench/results/serve-sim-<host>-<date> [--title T] [--note N ...]
 * Writes <out>.json (both trees' rows and the after run's full results) and <out>.md. Throughput
 * ratios move with a shared host's load; CPU per request (the server's process tree, per answered
 * request) against the floor's is the steadier figure, and is given beside them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { FloorRow } from './floors.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    out: { type: 'string' },
    title: { type: 'string' },
    note: { type: 'string', multiple: true },
  },
});
if (values.before === undefined || values.after === undefined || values.out === undefined)
  throw new Error('compare: --before, --after and --out are required');

interface Results {
  date: string;
  host?: { cpus: number; cpuModel: string };
  floors: { rows: FloorRow[] } | null;
  fusion?: unknown;
  notes: string[];
}
const read = (list: string): Results[] => list.split(',').map((f) => JSON.parse(readFileSync(f, 'utf8')) as Results);
const before = read(values.before);
const after = read(values.after);

const median = (xs: number[]): number | null =>
  xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
const key = (r: FloorRow): string => `${r.name}|${r.workers}`;

/** A row's medians over one tree's runs. */
interface Summary {
  runs: number;
  rpsRatio: number | null;
  tscudaCpuMs: number | null;
  floorCpuMs: number | null;
  cpuRatio: number | null;
  tscudaRps: number | null;
  floorRps: number | null;
}
function summarize(runs: Results[], k: string): Summary {
  const rows = runs.flatMap((r) => r.floors?.rows ?? []).filter((r) => key(r) === k);
  const nums = (f: (r: FloorRow) => number | null): number[] =>
    rows.map(f).filter((v): v is number => v !== null && Number.isFinite(v));
  return {
    runs: rows.length,
    rpsRatio: median(nums((r) => (r.floor.rps > 0 ? r.tscuda.rps / r.floor.rps : null))),
    tscudaCpuMs: median(nums((r) => r.tscuda.cpuMsPerRequest)),
    floorCpuMs: median(nums((r) => r.floor.cpuMsPerRequest)),
    cpuRatio: median(
      nums((r) =>
        r.tscuda.cpuMsPerRequest !== null && r.floor.cpuMsPerRequest
          ? r.tscuda.cpuMsPerRequest / r.floor.cpuMsPerRequest
          : null,
      ),
    ),
    tscudaRps: median(nums((r) => r.tscuda.rps)),
    floorRps: median(nums((r) => r.floor.rps)),
  };
}

const keys = [...new Set(after.flatMap((r) => (r.floors?.rows ?? []).map(key)))];
const rows = keys.map((k) => ({
  row: k.split('|')[0]!,
  workers: Number(k.split('|')[1]),
  before: summarize(before, k),
  after: summarize(after, k),
}));
const f = (v: number | null, digits = 3): string => (v === null ? '—' : v.toFixed(digits));
const host = after[0]?.host;
const md = [
  `# ${values.title ?? 'tscuda serve against its HTTP floor, before and after'} — ${host?.cpuModel ?? 'unknown CPU'} (${host?.cpus ?? '?'} CPUs), ${after[0]?.date.slice(0, 10) ?? ''}`,
  '',
  `Floor rows of the serve bench's --sim mode (tscuda serve over a simulated engine, against a bare node:http server with the same process count, alternated in each run), ${before.length} run(s) of the tree before and ${after.length} after, alternated between the trees; medians. tscuda / floor: throughput; CPU tscuda / floor: the server's CPU ms per answered request against the floor's (steadier than throughput on a shared host).`,
  '',
  '| row | workers | tscuda / floor, before | after | CPU ms/req tscuda, before | after | floor CPU ms/req (before / after) | CPU tscuda / floor, before | after |',
  '| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.row} | ${r.workers} | ${f(r.before.rpsRatio)} | ${f(r.after.rpsRatio)} | ${f(r.before.tscudaCpuMs)} | ${f(r.after.tscudaCpuMs)} | ${f(r.before.floorCpuMs)} / ${f(r.after.floorCpuMs)} | ${f(r.before.cpuRatio, 2)} | ${f(r.after.cpuRatio, 2)} |`,
  ),
  '',
  ...(values.note ?? []).map((n) => `- ${n}`),
  ...[...new Set([...before, ...after].flatMap((r) => r.notes))].map((n) => `- ${n}`),
  '',
];
writeFileSync(
  `${values.out}.json`,
  JSON.stringify({ date: after[0]?.date, host, notes: values.note ?? [], rows, before, after }, null, 2) + '\n',
);
writeFileSync(`${values.out}.md`, md.join('\n'));
console.log(md.join('\n'));
