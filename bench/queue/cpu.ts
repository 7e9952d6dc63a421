/**
 * CPU time of the queue bench's processes, so a run on a small host says where the time goes and
 * what a bigger host would do: this process (the client) through process.cpuUsage(), each worker
 * process through its own (asked for with SIGUSR2, answered on its stdout), and Redis through
 * INFO cpu. A phase's CPU per job is the difference of two snapshots over its jobs.
 */
import { Redis } from 'ioredis';

/** CPU milliseconds used so far by the client, each worker and Redis (all its threads, and its main thread alone). */
export interface CpuSnapshot {
  client: number;
  workers: number[];
  redis: number;
  redisMain: number;
  at: number;
}

/** A worker process that reports its CPU time on request. */
export interface CpuReporter {
  cpuMs(): Promise<number>;
}

/** Redis' CPU time so far, ms (user + system): all its threads, and its main thread (the one that runs commands). */
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

/** A snapshot of every process's CPU time. */
export async function cpuSnapshot(redis: Redis, workers: readonly CpuReporter[]): Promise<CpuSnapshot> {
  const [redisMs, ...workerMs] = (await Promise.all([redisCpuMs(redis), ...workers.map((w) => w.cpuMs())])) as [{ all: number; main: number }, ...number[]];
  return { client: ownCpuMs(), workers: workerMs, redis: redisMs!.all, redisMain: redisMs!.main, at: performance.now() };
}

/** CPU per job between two snapshots, ms, and each process's share of the wall time (1 = one core busy). */
export interface CpuPerJob {
  jobs: number;
  wallMs: number;
  clientMs: number;
  workerMs: number[];
  redisMs: number;
  /** Of redisMs, what its main thread used (the rest: I/O threads, when Redis runs them). */
  redisMainMs: number;
  clientBusy: number;
  workerBusy: number[];
  redisBusy: number;
}

/** What `after - before` says per job over `jobs` jobs. */
export function cpuPerJob(before: CpuSnapshot, after: CpuSnapshot, jobs: number): CpuPerJob {
  const wallMs = after.at - before.at;
  const workers = after.workers.map((w, i) => w - before.workers[i]!);
  return {
    jobs,
    wallMs,
    clientMs: (after.client - before.client) / jobs,
    workerMs: workers.map((w) => w / jobs),
    redisMs: (after.redis - before.redis) / jobs,
    redisMainMs: (after.redisMain - before.redisMain) / jobs,
    clientBusy: (after.client - before.client) / wallMs,
    workerBusy: workers.map((w) => w / wallMs),
    redisBusy: (after.redis - before.redis) / wallMs,
  };
}

/** One line for the results' notes. */
export function describeCpu(c: CpuPerJob): string {
  const f = (v: number): string => v.toFixed(3);
  const b = (v: number): string => `${Math.round(v * 100)}%`;
  return (
    `CPU per job: client ${f(c.clientMs)} ms (${b(c.clientBusy)} of a core), ` +
    `worker${c.workerMs.length > 1 ? 's' : ''} ${c.workerMs.map(f).join(' + ')} ms (${c.workerBusy.map(b).join(', ')}), ` +
    `Redis ${f(c.redisMs)} ms (${b(c.redisBusy)}${Math.abs(c.redisMainMs - c.redisMs) > 0.001 ? `; main thread ${f(c.redisMainMs)} ms` : ''}); ${c.jobs} jobs in ${(c.wallMs / 1000).toFixed(2)} s`
  );
}
