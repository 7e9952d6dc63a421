/**
 * Where a queued job's time goes, without a GPU: worker processes over SimEngine (a simulated GPU
 * per process, bench/queue/sim-engine.ts), a real redis-server, and this process as the client.
 * Three looks:
 *   1. throughput of `--jobs` jobs (`--kind mix`: 16 x 16384 f32, 1 MiB; `small`: 4 x 4096) with
 *      `--window` in flight, and the CPU time per job of the client, each worker and Redis;
 *   2. Redis' own time per job by command (INFO commandstats: calls and µs, scripts included);
 *   3. with `--monitor N`, the commands each connection sends per job over N more jobs one at a
 *      time (MONITOR, matched to connection names through CLIENT LIST; commands run inside a
 *      script are counted apart): the round trips of the path.
 * With `--timeline small|mix`, one more job alone, each command Redis received for it with its time
 * (MONITOR's clock) from the submit on: where the gaps of the path are.
 * `--blob-stores K` starts K more redis-servers for the samples and results (blobStores).
 * `--redis-args='--io-threads 2'` passes options to the redis-server it starts; `--result-ttl-ms`
 * sets the client's resultTtlMs (results expire and their memory is reused).
 *   tsx bench/probe/queue-costs.ts [--sim 3.4] [--workers 1] [--jobs 400] [--window 64] [--kind mix] [--monitor 20] [--latency 200] [--timeline small]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { JobSpec } from '../../src/engine/index.js';
import { JobQueue } from '../../src/queue/index.js';
import { startRedis } from '../../test/unit/queue/redis-server.js';
import { percentile } from '../harness/stats.js';
import { cpuPerJob, cpuSnapshot, describeCpu } from '../queue/cpu.js';
import { SimEngine } from '../queue/sim-engine.js';
import { startWorkerProcess, stopWorkers, type WorkerChild } from '../queue/workers.js';

const { values } = parseArgs({
  options: {
    sim: { type: 'string', default: '3.4' },
    workers: { type: 'string', default: '1' },
    jobs: { type: 'string', default: '400' },
    window: { type: 'string', default: '64' },
    kind: { type: 'string', default: 'mix' },
    lanes: { type: 'string', default: '4' },
    monitor: { type: 'string', default: '0' },
    latency: { type: 'string', default: '0' },
    timeline: { type: 'string' },
    'redis-args': { type: 'string', default: '' },
    'result-ttl-ms': { type: 'string' },
    concurrency: { type: 'string' },
    'blob-stores': { type: 'string', default: '0' },
  },
});
// Ended by a signal or a closed pipe (| head), the program still exits through process.exit, so the
// Redis servers and processes it started go with it (startRedis and execa stop theirs on exit).
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
process.stdout.on('error', () => process.exit(1));
const simNs = Number(values.sim);
const JOBS = Number(values.jobs);
const WINDOW = Number(values.window);

function spec(kind: string): JobSpec {
  if (kind === 'small')
    return {
      data: Float32Array.from({ length: 4 * 4096 }, () => Math.random() * 2 - 1),
      batch: 4,
      fs: 1000,
      flags: ['stft'],
      passBand: [20, 200],
      previewBins: 64,
    };
  const data = Float32Array.from({ length: 16 * 16384 }, () => Math.random() * 2 - 1);
  return { data, batch: 16, fs: 48_000, flags: ['stft'], passBand: [100, 8000], previewBins: 64 };
}

/** INFO commandstats as { command: { calls, usec } }. */
async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const text = await redis.info('commandstats');
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm))
    out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  return out;
}

/** The client names of the connections Redis holds, by address. */
async function clientNames(redis: Redis): Promise<Map<string, string>> {
  const list = (await redis.client('LIST')) as string;
  const out = new Map<string, string>();
  for (const line of list.split('\n')) {
    const addr = /addr=(\S+)/.exec(line)?.[1];
    const name = /name=(\S*)/.exec(line)?.[1];
    if (addr !== undefined) out.set(addr, name || addr);
  }
  return out;
}

const redisArgs = values['redis-args'].split(' ').filter((a) => a !== '');
const redis = await startRedis({ args: redisArgs });
const admin = new Redis(redis.url);
// Blob stores: more redis-servers for the samples and results (the queue's keeps its own keys).
const storeServers = await Promise.all(
  Array.from({ length: Number(values['blob-stores']) }, () => startRedis({ args: redisArgs })),
);
const blobStores = storeServers.length === 0 ? undefined : storeServers.map((s) => s.url);
const admins = [admin, ...storeServers.map((s) => new Redis(s.url))];
const name = `costs-${randomUUID()}`;
const children: WorkerChild[] = [];
for (let i = 0; i < Number(values.workers); i++)
  children.push(
    await startWorkerProcess({
      redisUrl: redis.url,
      queue: name,
      name: `w${i}`,
      device: i,
      lanes: Number(values.lanes),
      lockMs: 30_000,
      simNs,
      blobStores,
      extra: values.concurrency === undefined ? [] : ['--concurrency', values.concurrency],
    }),
  );
const resultTtlMs = values['result-ttl-ms'] === undefined ? undefined : Number(values['result-ttl-ms']);
const queue = new JobQueue({ connection: redis.url, name, maxResultBytes: 512 * 2 ** 20, resultTtlMs, blobStores });
const run = async (s: JobSpec): Promise<unknown> => (await queue.submit(s)).result;
try {
  const specs = Array.from({ length: 16 }, () => spec(values.kind));
  for (let i = 0; i < 10; i++) await run(specs[0]!);
  // 1. Throughput and CPU per job.
  const stats0 = await commandStats(admin);
  const before = await cpuSnapshot(admins, children);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: WINDOW }, async () => {
      while (next < JOBS) await run(specs[next++ % specs.length]!);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuPerJob(before, await cpuSnapshot(admins, children), JOBS);
  const stats1 = await commandStats(admin);
  console.log(
    `${values.kind} jobs, ${values.workers} worker process(es) over SimEngine ${simNs} ns/sample, ${WINDOW} in flight: ${(JOBS / seconds).toFixed(0)} jobs/s`,
  );
  console.log(describeCpu(cpu));
  // 2. Redis' time by command.
  const rows = [...stats1].map(([cmd, s]) => ({
    cmd,
    calls: (s.calls - (stats0.get(cmd)?.calls ?? 0)) / JOBS,
    usec: (s.usec - (stats0.get(cmd)?.usec ?? 0)) / JOBS,
  }));
  rows.sort((a, b) => b.usec - a.usec);
  console.log(
    "Redis per job (INFO commandstats; a script's own commands are counted in it and again under their names):",
  );
  for (const r of rows.filter((r) => r.calls > 0.001))
    console.log(`  ${r.cmd.padEnd(16)} ${r.calls.toFixed(2).padStart(6)} calls ${r.usec.toFixed(1).padStart(8)} µs`);
  // Latency of one job at a time, against the same engine in this process.
  const latencyRuns = Number(values.latency);
  if (latencyRuns > 0) {
    const small = spec('small');
    const engine = new SimEngine({ nsPerSample: simNs, lanes: Number(values.lanes) });
    const p50 = async (f: () => Promise<unknown>): Promise<number> => {
      for (let i = 0; i < 20; i++) await f();
      const ms: number[] = [];
      for (let i = 0; i < latencyRuns; i++) {
        const t = performance.now();
        await f();
        ms.push(performance.now() - t);
      }
      return percentile(ms, 0.5);
    };
    const local = await p50(() => engine.submit(small, { wait: true }).then((j) => j.result));
    const queued = await p50(() => run(small));
    await engine.close();
    console.log(
      `small job one at a time: p50 ${queued.toFixed(3)} ms through the queue, ${local.toFixed(3)} ms in process: overhead ${(queued - local).toFixed(3)} ms`,
    );
  }
  // 3. Commands per job by connection.
  const monitored = Number(values.monitor);
  if (monitored > 0) {
    const small = spec('small');
    const names = await clientNames(admin);
    const monitor = await admin.duplicate().monitor();
    const counts = new Map<string, number>();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      const inScript = source === 'lua' || source.endsWith(' lua');
      const who = inScript ? 'lua' : (names.get(source.replace(/^\S+ /, '')) ?? source);
      const key = `${who} ${inScript ? '(in scripts)' : ''}${String(args[0]).toLowerCase()}${args[0]?.toLowerCase() === 'evalsha' ? '' : ''}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    });
    await new Promise((r) => setTimeout(r, 200));
    counts.clear();
    const t = performance.now();
    for (let i = 0; i < monitored; i++) await run(small);
    const span = performance.now() - t;
    await new Promise((r) => setTimeout(r, 200));
    monitor.disconnect();
    console.log(
      `commands per job over ${monitored} small jobs one at a time (${(span / monitored).toFixed(2)} ms each under MONITOR), by connection:`,
    );
    for (const [key, n] of [...counts].sort()) console.log(`  ${key.padEnd(48)} ${(n / monitored).toFixed(2)}`);
  }
  if (values.timeline !== undefined) {
    const one = spec(values.timeline);
    await run(one);
    const names = await clientNames(admin);
    const monitor = await admin.duplicate().monitor();
    const lines: string[] = [];
    let first: number | undefined;
    monitor.on('monitor', (time: string, args: string[], source: string) => {
      const t = Number(time) * 1000;
      first ??= t;
      const who = source.endsWith('lua')
        ? '  (script)'
        : (names.get(source.replace(/^\S+ /, '')) ?? source).replace(/^.*:/, '');
      const shown = args.slice(0, 3).map((a) => (a.length > 40 ? `${a.slice(0, 37)}...` : a));
      lines.push(`${(t - first).toFixed(3).padStart(9)} ms  ${who.padEnd(12)} ${shown.join(' ')}`);
    });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    await run(one);
    const took = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 100));
    monitor.disconnect();
    console.log(
      `one ${values.timeline} job alone: ${took.toFixed(2)} ms end to end (under MONITOR); the commands Redis received:`,
    );
    for (const line of lines) console.log(line);
  }
} finally {
  await queue.close();
  await stopWorkers(children);
  for (const a of admins) a.disconnect();
  await redis.dispose();
  for (const s of storeServers) await s.dispose();
}
process.exit(0);
