/**
 * What load shedding (--max-lag, --max-turn) buys and costs, measured without a GPU: the event
 * loop is what sheds, so a CUDA-free engine (the tests' FakeEngine, 1 ms jobs) behind the real
 * HTTP server shows it. Each round starts one server per setting (pinned to CPU 0 when taskset is
 * there, the clients on the other CPUs) and runs against it:
 *   - closed loops that resend the moment they are answered, a 429 included (perf_analyzer's
 *     concurrency mode), at each concurrency: 200s per second, their p50/p99, the 429s;
 *   - an open loop at `--open-rate` requests/s over 512 connections: 200s and 429s, and their p99
 *     from each request's scheduled start.
 * Medians over the rounds go to stdout and to bench/results/probe-shedding-<host>-<date>.{md,json}.
 *   tsx bench/probe/shedding.ts [--concurrency 64,256] [--rounds 3] [--duration 3] [--open-rate 3000]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createServer } from '../../src/server/index.js';
import { FakeEngine } from '../../test/unit/server/fake-engine.js';
import { percentile } from '../harness/stats.js';
import { asciiSignal, closedLoop, openLoop, type LoadRequest, type LoopReport } from '../serve/load.js';

/** The settings compared: tscuda serve's defaults, and shedding off. */
const SETTINGS = {
  'default (--max-lag 50 --max-turn 25)': { maxEventLoopDelayMs: 50, maxTurnMs: 25 },
  'off (--max-lag 0 --max-turn 0)': { maxEventLoopDelayMs: 0, maxTurnMs: 0 },
} as const;
type Setting = keyof typeof SETTINGS;

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    setting: { type: 'string' },
    concurrency: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    'open-rate': { type: 'string' },
  },
});

if (values.serve !== undefined) {
  // The server child: the real createServer over a CUDA-free engine whose jobs take 1 ms.
  const limits = SETTINGS[values.setting as Setting];
  if (limits === undefined) throw new Error(`--setting must be one of ${Object.keys(SETTINGS).join(' | ')}`);
  const server = createServer({ engine: new FakeEngine({ delayMs: 1, maxQueued: 1 << 20 }), limits });
  await server.listen({ port: Number(values.serve), host: '127.0.0.1' });
  console.log('ready');
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
} else {
  const concurrencies = (values.concurrency ?? '64,256').split(',').map(Number);
  const rounds = Number(values.rounds ?? 3);
  const durationS = Number(values.duration ?? 3);
  const openRate = Number(values['open-rate'] ?? 3000);
  const pin = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  const cpus = Number(spawnSync('nproc').stdout?.toString().trim() ?? 1);
  const pinned = pin && cpus > 1;
  if (pinned) spawnSync('taskset', ['-pc', `1-${cpus - 1}`, String(process.pid)]);
  const port = 18_900 + Math.floor(Math.random() * 100);
  const data = asciiSignal(4 * 4096);
  const req: LoadRequest = {
    base: `http://127.0.0.1:${port}`,
    path: '/v1/stft?dtype=f32&batch=4&fs=1000&passBand=20,200&previewBins=64',
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
    body: Buffer.from(data.buffer),
  };

  const start = async (setting: Setting): Promise<ChildProcess> => {
    const args = [
      '--import',
      'tsx',
      join(import.meta.dirname, 'shedding.ts'),
      '--serve',
      String(port),
      '--setting',
      setting,
    ];
    const child = pinned
      ? spawn('taskset', ['-c', '0', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    return child;
  };
  const stop = (child: ChildProcess): Promise<void> =>
    new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });

  interface Row {
    setting: Setting;
    load: string;
    ok: number;
    refused: number;
    okPerS: number;
    okP50Ms: number;
    okP99Ms: number;
    refusedP99Ms: number;
    unanswered: number;
  }
  const row = (setting: Setting, load: string, r: LoopReport, seconds: number): Row => ({
    setting,
    load,
    ok: r.byStatus['200'] ?? 0,
    refused: r.byStatus['429'] ?? 0,
    okPerS: (r.byStatus['200'] ?? 0) / seconds,
    okP50Ms: r.latencyMs['200']?.p50 ?? Number.NaN,
    okP99Ms: r.latencyMs['200']?.p99 ?? Number.NaN,
    refusedP99Ms: r.latencyMs['429']?.p99 ?? Number.NaN,
    unanswered: Object.values(r.unanswered).reduce((a, b) => a + b, 0),
  });
  const settings = Object.keys(SETTINGS) as Setting[];
  const rows: Row[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const setting of settings) {
      const server = await start(setting);
      for (const c of concurrencies) {
        const r = await closedLoop(req, c, durationS);
        rows.push(row(setting, `closed loop, c=${c}`, r, r.elapsedS ?? durationS));
      }
      const r = await openLoop(req, openRate, durationS, { connections: 512, warmPath: '/v2/health/live' });
      rows.push(row(setting, `open loop, ${openRate}/s`, r, r.elapsedS ?? durationS));
      await stop(server);
      const mine = rows.slice(-concurrencies.length - 1);
      console.error(
        `round ${round}, shedding ${setting}: ${mine.map((x) => `${x.load} ${x.okPerS.toFixed(0)} ok/s, ${x.refused} refused`).join('; ')}`,
      );
    }
  }
  /** Median over the rounds of a column (NaN, a latency with no such answer, left out). */
  const median = (xs: number[]): number => percentile(xs.filter(Number.isFinite), 0.5);
  const loads = [...new Set(rows.map((r) => r.load))];
  const table = loads.flatMap((load) =>
    settings.map((setting) => {
      const mine = rows.filter((r) => r.load === load && r.setting === setting);
      const m = (k: 'okPerS' | 'okP50Ms' | 'okP99Ms' | 'refused' | 'refusedP99Ms'): number =>
        median(mine.map((r) => r[k]));
      return {
        load,
        setting,
        okPerS: m('okPerS'),
        okP50Ms: m('okP50Ms'),
        okP99Ms: m('okP99Ms'),
        refused: m('refused'),
        refusedP99Ms: m('refusedP99Ms'),
        unanswered: Math.max(...mine.map((r) => r.unanswered)),
      };
    }),
  );
  const f = (x: number): string => (Number.isFinite(x) ? x.toFixed(0) : '—');
  const md = [
    '# Load shedding on and off, CPU only',
    '',
    `Host ${hostname()}, ${cpus} CPUs, server ${pinned ? 'pinned to CPU 0, clients on the others' : 'not pinned'}; createServer over the tests' FakeEngine (1 ms jobs, no GPU), default limits but the shedding ones; 4 x 4096 float32 binary bodies, binary answers; ${rounds} rounds of ${durationS} s per load, medians; written by \`tsx bench/probe/shedding.ts\`.`,
    '',
    '| load | shedding | 200/s | 200 p50 ms | 200 p99 ms | 429s | 429 p99 ms | unanswered |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...table.map(
      (t) =>
        `| ${t.load} | ${t.setting} | ${f(t.okPerS)} | ${f(t.okP50Ms)} | ${f(t.okP99Ms)} | ${f(t.refused)} | ${f(t.refusedP99Ms)} | ${t.unanswered} |`,
    ),
    '',
  ].join('\n');
  console.log(md);
  const stem = join(
    import.meta.dirname,
    '..',
    'results',
    `probe-shedding-${hostname().replace(/[^a-zA-Z0-9-]/g, '-')}-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`,
  );
  writeFileSync(`${stem}.md`, md);
  writeFileSync(`${stem}.json`, JSON.stringify({ rounds: rows, medians: table }, null, 2));
}
