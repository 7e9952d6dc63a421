/**
 * Where one small job's latency through the queue goes: a worker process over SimEngine, this
 * process as the client, both tracing every Redis command (bench/probe/trace-hook.ts), and the
 * small job (4 x 4096) run `--jobs` times one at a time. Prints, per command of the path, the
 * median time it was sent and answered from the submit's start, and the p50 end to end.
 *   tsx bench/probe/queue-latency.ts [--sim 3.4] [--jobs 200] [--blob-stores 6] [--concurrency N] [--gap MS]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { mark, now, type TraceEvent } from './trace-hook.js';
import { JobQueue } from '../../src/queue/index.js';
import { startRedis } from '../../test/unit/queue/redis-server.js';
import { followChildLines } from '../../test/unit/queue/child-lines.js';
import { percentile } from '../harness/stats.js';
import { smallJob } from '../queue/mix.js';

const { values } = parseArgs({
  options: {
    sim: { type: 'string', default: '3.4' },
    jobs: { type: 'string', default: '200' },
    'blob-stores': { type: 'string', default: '6' },
    concurrency: { type: 'string' },
    gap: { type: 'string', default: '0' },
  },
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tscuda-trace-'));
process.env.TSCUDA_TRACE_DIR = dir;
const redis = await startRedis();
const stores = await Promise.all(Array.from({ length: Number(values['blob-stores']) }, () => startRedis()));
const blobStores = stores.length === 0 ? undefined : stores.map((s) => s.url);
const name = `lat-${randomUUID()}`;
const nodeArgs = (process.env.TSCUDA_BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const args = [
  ...nodeArgs,
  '--import',
  'tsx',
  '--import',
  './bench/probe/trace-hook.ts',
  'bench/queue/worker-child.ts',
  '--redis',
  redis.url,
  '--queue',
  name,
  '--name',
  'w0',
  '--sim',
  values.sim,
];
for (const url of blobStores ?? []) args.push('--blob-redis', url);
if (values.concurrency !== undefined) args.push('--concurrency', values.concurrency);
const child = execa('node', args, {
  cwd: ROOT,
  reject: false,
  buffer: false,
  stderr: 'inherit',
  stdin: 'pipe',
  env: { TSCUDA_TRACE_DIR: dir },
});
await followChildLines(child, 'worker', [], () => undefined);
const queue = new JobQueue({ connection: redis.url, name, blobStores });
const spec = smallJob();
for (let i = 0; i < 30; i++) await (await queue.submit(spec)).result;
const windows: [number, number][] = [];
const workerCpu = async (): Promise<number> => {
  const line = new Promise<string>((resolve) =>
    child.stdout!.on('data', (d: Buffer) => /^cpu .*$/m.test(String(d)) && resolve(/^cpu .*$/m.exec(String(d))![0])),
  );
  child.kill('SIGUSR2');
  const [, user, system] = (await line).trim().split(' ').map(Number);
  return (user! + system!) / 1000;
};
const cpu0 = process.cpuUsage();
const wcpu0 = await workerCpu();
for (let i = 0; i < Number(values.jobs); i++) {
  const t0 = now();
  mark('submit');
  const handle = await queue.submit(spec);
  mark('submitted');
  await handle.result;
  mark('result');
  windows.push([t0, now()]);
  // `--gap MS` between jobs keeps what one job's tail does (e.g. the worker's next fetch) out of the next; 0 (the bench's way) does not.
  if (Number(values.gap) > 0) await new Promise((r) => setTimeout(r, Number(values.gap)));
}
const cpu1 = process.cpuUsage(cpu0);
const wcpu1 = await workerCpu();
const perJob = (ms: number): string => (ms / windows.length).toFixed(3);
console.log(`CPU per job: client ${perJob((cpu1.user + cpu1.system) / 1000)} ms, worker ${perJob(wcpu1 - wcpu0)} ms`);
await queue.close();
child.kill('SIGTERM');
await child;
for (const s of [redis, ...stores]) await s.dispose();
process.emit('exit', 0); // writes this process's trace
const events: TraceEvent[] = readdirSync(dir).flatMap((f) =>
  readFileSync(join(dir, f), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as TraceEvent),
);
const who = (e: TraceEvent): string => (e.pid === process.pid ? 'client' : 'worker');
const rows = new Map<string, { sent: number[]; replied: number[]; order: number[] }>();
const total: number[] = [];
for (const [t0, t1] of windows) {
  total.push(t1 - t0);
  const inside = events
    .filter((e) => (e.sent >= t0 && e.sent <= t1) || (e.replied >= t0 && e.replied <= t1))
    .sort((a, b) => a.sent - b.sent);
  const seen = new Map<string, number>();
  inside.forEach((e, order) => {
    const base = `${who(e)} ${e.conn} ${e.cmd}${e.cmd === 'evalsha' ? ` ${e.arg}` : ''}`;
    if (e.cmd === 'bzpopmin' && process.env.TRACE_BZ) console.log(who(e), e.sent - t0, e.replied - t0, e.arg);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const key = `${base} #${n}`;
    const row = rows.get(key) ?? { sent: [], replied: [], order: [] };
    row.sent.push(e.sent - t0);
    row.replied.push(e.replied - t0);
    row.order.push(order);
    rows.set(key, row);
  });
}
const jobs = windows.length;
console.log(
  `${jobs} small jobs one at a time, --sim ${values.sim}, ${stores.length} blob stores: p50 ${percentile(total, 0.5).toFixed(3)} ms end to end`,
);
console.log('   sent  replied  (median ms from submit start)  in % of jobs   command');
const table = [...rows]
  .filter(([, r]) => r.sent.length >= jobs * 0.3)
  .map(([key, r]) => ({
    key,
    sent: percentile(r.sent, 0.5),
    replied: percentile(r.replied, 0.5),
    share: r.sent.length / jobs,
  }));
table.sort((a, b) => a.sent - b.sent);
for (const r of table)
  console.log(
    `${r.sent.toFixed(3).padStart(7)}  ${r.replied.toFixed(3).padStart(7)}  ${(r.share * 100).toFixed(0).padStart(4)}%  ${r.key}`,
  );
process.exit(0);
