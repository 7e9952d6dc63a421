/**
 * Two trees' server CPU per request in process, alternated: each round runs
 * `serve-ab.ts --serve 0 --root <tree> --inject N` in a fresh child process for the old tree and the
 * new one (old first in odd rounds, new first in even ones), and the medians over the rounds are
 * written as <out>.json and <out>.md. No sockets and no client processes: on a shared host, where
 * the serve bench's loopback rows move 2-5x between runs of one tree, the process's CPU time per
 * request through fastify's inject is the steadier before/after of the server's own work (inject
 * itself adds a fixed cost per request to both trees).
 *   npx tsx bench/probe/serve-inject-ab.ts --old <tree> [--new .] [--rounds 7] [--inject 5000]
 *     [--loads small] [--engine sim] --out bench/results/<name>
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    old: { type: 'string' },
    new: { type: 'string' },
    rounds: { type: 'string' },
    inject: { type: 'string' },
    loads: { type: 'string' },
    engine: { type: 'string' },
    out: { type: 'string' },
    note: { type: 'string', multiple: true },
  },
});
if (values.old === undefined || values.out === undefined)
  throw new Error('serve-inject-ab: --old and --out are required');
const here = resolve(import.meta.dirname, '..', '..');
const trees = { old: resolve(values.old), new: resolve(values.new ?? here) };
const rounds = Number(values.rounds ?? 7);
const n = values.inject ?? '5000';
const loads = values.loads ?? 'small';
const engine = values.engine ?? 'sim';

/** One tree's CPU ms per request of each load, from a fresh process. */
function runTree(root: string): Record<string, number> {
  const args = ['--import', 'tsx', join(here, 'bench/probe/serve-ab.ts'), '--serve', '0', '--root', root];
  const r = spawnSync(process.execPath, [...args, '--inject', n, '--loads', loads, '--engine', engine], {
    cwd: here,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`serve-ab --inject on ${root} exited ${r.status}: ${r.stderr.slice(-500)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, number>;
}

const samples: Record<'old' | 'new', Record<string, number>[]> = { old: [], new: [] };
for (let i = 1; i <= rounds; i++) {
  const order: ('old' | 'new')[] = i % 2 === 1 ? ['old', 'new'] : ['new', 'old'];
  for (const tree of order) {
    const r = runTree(trees[tree]);
    samples[tree].push(r);
    console.error(`[inject-ab] round ${i} ${tree}: ${JSON.stringify(r)}`);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
const rows = loads.split(',').map((load) => {
  const old = median(samples.old.map((s) => s[load]!));
  const now = median(samples.new.map((s) => s[load]!));
  return { load, oldCpuMs: old, newCpuMs: now, change: now / old - 1 };
});
const date = new Date().toISOString();
const md = [
  `# tscuda serve's CPU per request in process, before and after — ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} CPUs), Node ${process.version}, ${date.slice(0, 10)}`,
  '',
  `Each tree's createServer with the ${engine === 'sim' ? "serve bench's simulated engine (as bench/serve/sim-worker.ts builds it)" : 'FakeEngine'}, ${n} requests of each load through fastify's inject with the load's concurrency in flight (load shedding off, fusing at its default), the process's CPU time per request; ${rounds} rounds, a fresh process per tree per round, the trees alternated; medians.`,
  '',
  '| load | CPU ms/request, before | after | change |',
  '| --- | ---: | ---: | ---: |',
  ...rows.map(
    (r) => `| ${r.load} | ${r.oldCpuMs.toFixed(3)} | ${r.newCpuMs.toFixed(3)} | ${(100 * r.change).toFixed(1)}% |`,
  ),
  '',
  ...(values.note ?? []).map((note) => `- ${note}`),
  '',
];
writeFileSync(
  `${values.out}.json`,
  JSON.stringify({ date, node: process.version, trees, rounds, inject: Number(n), engine, rows, samples }, null, 2) +
    '\n',
);
writeFileSync(`${values.out}.md`, md.join('\n'));
console.log(md.join('\n'));
