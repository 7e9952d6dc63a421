/**
 * Processes of the queue bench and its probes: workers (bench/queue/worker-child.ts) and
 * submitting clients (bench/queue/client-child.ts), started, awaited until they are ready, their
 * lines read from stdout (a worker's completions, which the fault run counts per process; a
 * client's `done`), their CPU time read on request (SIGUSR2).
 */
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { followChildLines } from '../../test/unit/queue/child-lines.js';
import type { Throughput } from './mix.js';

const ROOT = join(import.meta.dirname, '..', '..');
const WORKER = join(import.meta.dirname, 'worker-child.ts');
const CLIENT = join(import.meta.dirname, 'client-child.ts');
const FLOOR = join(import.meta.dirname, 'floor-child.ts');

/** A running bench process. */
export interface BenchChild {
  process: ResultPromise;
  /** Job ids it reported completed (a worker). */
  completed: string[];
  /** The process's CPU time so far, ms (it answers SIGUSR2). */
  cpuMs(): Promise<number>;
  /** The next line starting with `prefix ` it prints. */
  next(prefix: string): Promise<string>;
}

/** A running worker process. */
export type WorkerChild = BenchChild;

/** More node options for every child, space-separated (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the workers and clients). */
const NODE_ARGS = (process.env.TSCUDA_BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');

async function startChild(script: string, args: readonly string[], name: string): Promise<BenchChild> {
  const child = execa('node', [...NODE_ARGS, '--import', 'tsx', script, ...args], {
    cwd: ROOT,
    reject: false,
    buffer: false,
    stderr: 'inherit',
    stdin: 'pipe',
  });
  const completed: string[] = [];
  const waiters: { prefix: string; resolve: (rest: string) => void }[] = [];
  await followChildLines(child, name, completed, (line) => {
    const i = waiters.findIndex((w) => line.startsWith(`${w.prefix} `));
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(line.slice(line.indexOf(' ') + 1));
  });
  const next = (prefix: string): Promise<string> => new Promise((resolve) => waiters.push({ prefix, resolve }));
  const cpuMs = async (): Promise<number> => {
    const line = next('cpu');
    child.kill('SIGUSR2');
    const [user, system] = (await line).split(' ').map(Number);
    return (user! + system!) / 1000;
  };
  return { process: child, completed, cpuMs, next };
}

/** What a worker process runs. */
export interface WorkerChildOptions {
  redisUrl: string;
  queue: string;
  name: string;
  device: number;
  lanes: number;
  lockMs: number;
  /** FakeEngine jobs of this many ms, or SimEngine at this many ns per sample; neither: the GPU's JobEngine. */
  fakeMs?: number | undefined;
  simNs?: number | undefined;
  /** The blob stores' URLs (the clients' `blobStores`); none: the queue's Redis. */
  blobStores?: readonly string[] | undefined;
  /** More arguments for worker-child.ts. */
  extra?: readonly string[] | undefined;
}

/** Starts a worker process; resolves once it takes jobs. */
export function startWorkerProcess(o: WorkerChildOptions): Promise<WorkerChild> {
  const args = ['--redis', o.redisUrl, '--queue', o.queue, '--name', o.name];
  args.push(
    '--devices',
    String(o.device),
    '--lanes',
    String(o.lanes),
    '--lock-ms',
    String(o.lockMs),
    ...(o.extra ?? []),
  );
  if (o.fakeMs !== undefined) args.push('--fake', String(o.fakeMs));
  if (o.simNs !== undefined) args.push('--sim', String(o.simNs));
  for (const url of o.blobStores ?? []) args.push('--blob-redis', url);
  return startChild(WORKER, args, `worker ${o.name}`);
}

/** SIGTERM to each (they finish what they hold), then waits for all to exit. */
export async function stopWorkers(children: readonly BenchChild[]): Promise<void> {
  for (const c of children) c.process.kill('SIGTERM');
  await Promise.allSettled(children.map((c) => c.process));
}

/** Starts `count` submitting processes, each to run `jobs` jobs with `window` in flight once told; resolves once all are warmed up. */
export function startClientProcesses(
  count: number,
  o: { redisUrl: string; queue: string; jobs: number; window: number; blobStores?: readonly string[] | undefined },
): Promise<BenchChild[]> {
  const args = ['--redis', o.redisUrl, '--queue', o.queue, '--jobs', String(o.jobs), '--window', String(o.window)];
  for (const url of o.blobStores ?? []) args.push('--blob-redis', url);
  return Promise.all(Array.from({ length: count }, (_, i) => startChild(CLIENT, args, `client ${i}`)));
}

/** Starts every client's run at once; resolves with the jobs and samples of all, and the wall time from the start to the last one done. */
export async function runClients(clients: readonly BenchChild[]): Promise<Throughput> {
  const done = clients.map((c) => c.next('done'));
  const t0 = performance.now();
  for (const c of clients) c.process.stdin!.write('go\n');
  const reports = (await Promise.all(done)).map((line) => line.split(' ').map(Number));
  return {
    jobs: reports.reduce((s, r) => s + r[0]!, 0),
    samples: reports.reduce((s, r) => s + r[1]!, 0),
    ms: performance.now() - t0,
    clientMs: reports.map((r) => r[2]!),
  };
}

/** The floor's processes (floor-child.ts): `workers` bare BullMQ workers and `clients` submitting processes, each ready when resolved. */
export async function startFloorProcesses(o: {
  redisUrl: string;
  queue: string;
  workers: number;
  concurrency: number;
  clients: number;
  jobs: number;
  window: number;
  blobStores?: readonly string[] | undefined;
}): Promise<{ workers: BenchChild[]; clients: BenchChild[] }> {
  const common = [
    '--redis',
    o.redisUrl,
    '--queue',
    o.queue,
    ...(o.blobStores ?? []).flatMap((url) => ['--blob-redis', url]),
  ];
  const workers = await Promise.all(
    Array.from({ length: o.workers }, (_, i) =>
      startChild(FLOOR, [...common, '--role', 'worker', '--concurrency', String(o.concurrency)], `floor worker ${i}`),
    ),
  );
  const clients = await Promise.all(
    Array.from({ length: o.clients }, (_, i) =>
      startChild(
        FLOOR,
        [...common, '--role', 'client', '--jobs', String(o.jobs), '--window', String(o.window)],
        `floor client ${i}`,
      ),
    ),
  );
  return { workers, clients };
}
