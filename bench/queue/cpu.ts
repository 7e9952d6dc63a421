/**
 * CPU time of the queue bench's processes, so a run on a small host says where the time goes and
 * what a bigger host would do: this process (the client) through process.cpuUsage(), each worker
 * process through its own (asked for with SIGUSR2, answered on its stdout), and each Redis (the
 * queue's, then its blob stores) through INFO cpu. A phase's CPU per job is the difference of two
 * snapshots over its jobs; a process near 100% of a core is what limits the phase.
 */
import type { Redis } from 'ioredis';

/** A process that reports its CPU time on request (a worker or client child). */
export interface CpuReporter {
  cpuMs(): Promise<number>;
}

/** CPU milliseconds used so far by every process of a run. */
export interface CpuSnapshot {
  /** This process, then any client children. */
  clients: number[];
  workers: number[];
  /** Each Redis: all its threads, and its main thread (the one that runs commands). */
  redis: { all: number; main: number }[];
  at: number;
}

/** Redis' CPU time so far, ms (user + system). */
export async function redisCpuMs(redis: Redis): Promise<{ all: number; main: number }> {
  const info = await redis.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 'NaN');
  const all = (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
  // Redis before 6.2 does not report its main thread: then it is all of it.
  const main = (field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1000;
  return { all, main: Number.isNaN(main) ? all : main };
}

/** This process's CPU time so far, ms. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** A snapshot of every process's CPU time; the clients are this process when no client processes are given. */
export async function cpuSnapshot(
  redis: readonly Redis[],
  workers: readonly CpuReporter[],
  clients: readonly CpuReporter[] = [],
): Promise<CpuSnapshot> {
  const [r, w, c] = await Promise.all([
    Promise.all(redis.map(redisCpuMs)),
    Promise.all(workers.map((x) => x.cpuMs())),
    Promise.all(clients.map((x) => x.cpuMs())),
  ]);
  return { clients: clients.length === 0 ? [ownCpuMs()] : c, workers: w, redis: r, at: performance.now() };
}

/** CPU per job between two snapshots, ms, and each process's share of the wall time (1 = one core busy). */
export interface CpuPerJob {
  jobs: number;
  wallMs: number;
  clientMs: number[];
  workerMs: number[];
  /** The queue's Redis, then each blob store. */
  redisMs: number[];
  /** Of redisMs, what each main thread used (the rest: I/O threads, when Redis runs them). */
  redisMainMs: number[];
  clientBusy: number[];
  workerBusy: number[];
  redisBusy: number[];
}

/** What `after - before` says per job over `jobs` jobs. */
export function cpuPerJob(before: CpuSnapshot, after: CpuSnapshot, jobs: number): CpuPerJob {
  const wallMs = after.at - before.at;
  const diff = (a: readonly number[], b: readonly number[]): number[] => a.map((v, i) => v - b[i]!);
  const clients = diff(after.clients, before.clients);
  const workers = diff(after.workers, before.workers);
  const redis = diff(
    after.redis.map((r) => r.all),
    before.redis.map((r) => r.all),
  );
  const redisMain = diff(
    after.redis.map((r) => r.main),
    before.redis.map((r) => r.main),
  );
  return {
    jobs,
    wallMs,
    clientMs: clients.map((v) => v / jobs),
    workerMs: workers.map((v) => v / jobs),
    redisMs: redis.map((v) => v / jobs),
    redisMainMs: redisMain.map((v) => v / jobs),
    clientBusy: clients.map((v) => v / wallMs),
    workerBusy: workers.map((v) => v / wallMs),
    redisBusy: redis.map((v) => v / wallMs),
  };
}

/**
 * The process that used the most CPU per job: on a host with a core for each process, the one
 * that limits the run (a worker is bounded by its GPU as well, which this does not see).
 */
export function busiest(c: CpuPerJob): { name: string; ms: number } {
  const all = [
    ...c.clientMs.map((ms, i) => ({ name: c.clientMs.length > 1 ? `client ${i}` : 'client', ms })),
    ...c.workerMs.map((ms, i) => ({ name: `worker ${i}`, ms })),
    ...c.redisMainMs.map((ms, i) => ({ name: i === 0 ? "the queue's Redis" : `blob store ${i - 1}`, ms })),
  ];
  return all.reduce((a, b) => (b.ms > a.ms ? b : a));
}

/** One line for the results' notes. */
export function describeCpu(c: CpuPerJob): string {
  const f = (v: number): string => v.toFixed(3);
  const b = (v: number): string => `${Math.round(v * 100)}%`;
  const group = (label: string, ms: number[], busy: number[]): string =>
    ms.length === 0
      ? ''
      : `${label}${ms.length > 1 ? 's' : ''} ${ms.map(f).join(' + ')} ms (${busy.map(b).join(', ')})`;
  const threads = c.redisMs.some((v, i) => Math.abs(v - c.redisMainMs[i]!) > 0.001)
    ? `; main threads ${c.redisMainMs.map(f).join(' + ')} ms`
    : '';
  const redis = `Redis ${c.redisMs.map(f).join(' + ')} ms (${c.redisBusy.map(b).join(', ')}${threads})${c.redisMs.length > 1 ? ' [queue + blob stores]' : ''}`;
  const top = busiest(c);
  return `CPU per job: ${[group('client', c.clientMs, c.clientBusy), group('worker', c.workerMs, c.workerBusy), redis].filter((s) => s !== '').join(', ')}; ${c.jobs} jobs in ${(c.wallMs / 1000).toFixed(2)} s; busiest: ${top.name} (${f(top.ms)} ms per job)`;
}
