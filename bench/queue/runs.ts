/**
 * One throughput run of the queue bench: `workers` worker processes on a fresh queue, the mix
 * submitted by this process (one client) or by client processes (several fronts, as a deployment
 * has), the samples and results on the queue's Redis or on blob stores; with each process's CPU
 * time per job, and optionally the small job's latency through the same queue.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { JobSpec } from '../../src/engine/index.js';
import { JobQueue } from '../../src/queue/index.js';
import { cpuPerJob, cpuSnapshot, type CpuPerJob } from './cpu.js';
import { latencyP50, mixJob, rates, throughput } from './mix.js';
import { runClients, startClientProcesses, stopWorkers, type BenchChild } from './workers.js';

/** Where the load comes from and where the bytes go. */
export interface QueueSetup {
  /** Submitting processes: 1 is this process. */
  clients: number;
  /** Blob stores' URLs; undefined: the queue's Redis holds the bytes. */
  blobStores: string[] | undefined;
}

/** A run's options. */
export interface RunOptions {
  redisUrl: string;
  /** INFO cpu of the queue's Redis and of each blob store of the setup, in that order. */
  redisInfo: readonly Redis[];
  setup: QueueSetup;
  workers: number;
  jobs: number;
  window: number;
  /** Starts worker `i` on a queue. */
  startWorker(queue: string, i: number, blobStores: string[] | undefined): Promise<BenchChild>;
  /** Small jobs to time one at a time after the throughput run (0: none). */
  latencyRuns?: number | undefined;
}

/** What a run measured. */
export interface RunResult {
  jobsPerS: number;
  gsamplesPerS: number;
  cpu: CpuPerJob;
  /** With client processes: the run's wall time and each client's own, ms. */
  wallMs: number;
  clientMs?: number[] | undefined;
  /** p50 of the small job one at a time, ms, when asked for. */
  latencyMs?: number | undefined;
}

/** How a setup reads in the results. */
export function describeSetup(s: QueueSetup): string {
  const clients = s.clients === 1 ? 'one submitting process' : `${s.clients} submitting processes`;
  return `${clients}, samples and results ${s.blobStores === undefined ? "in the queue's Redis" : `on ${s.blobStores.length} blob store(s) besides the queue's Redis`}`;
}

/** One run (see the file's comment). */
export async function queueRun(o: RunOptions): Promise<RunResult> {
  const name = `bench-${o.workers}-${randomUUID()}`;
  const { blobStores } = o.setup;
  const workers: BenchChild[] = [];
  let clients: BenchChild[] = [];
  const queue = new JobQueue({ connection: o.redisUrl, name, maxResultBytes: 512 * 2 ** 20, blobStores });
  const run = async (spec: JobSpec): Promise<unknown> => (await queue.submit(spec)).result;
  try {
    for (let i = 0; i < o.workers; i++) workers.push(await o.startWorker(name, i, blobStores));
    await latencyP50(5, run); // warm both sides (plans, buffers, connections)
    // Then every worker on the mix itself, window-full (plans, pinned buffers, each lane's
    // compute-graph capture): a worker's first jobs of a shape are slow, and would weigh on a
    // short timed run the more the more workers share it.
    await throughput(2 * o.window, o.window, Array.from({ length: 8 }, mixJob), run);
    const share = (n: number): number => Math.ceil(n / o.setup.clients);
    if (o.setup.clients > 1)
      clients = await startClientProcesses(o.setup.clients, {
        redisUrl: o.redisUrl,
        queue: name,
        jobs: share(o.jobs),
        window: share(o.window),
        blobStores,
      });
    const specs = o.setup.clients > 1 ? [] : Array.from({ length: Math.min(o.jobs, 32) }, mixJob);
    const before = await cpuSnapshot(o.redisInfo, workers, clients);
    const t = o.setup.clients > 1 ? await runClients(clients) : await throughput(o.jobs, o.window, specs, run);
    const cpu = cpuPerJob(before, await cpuSnapshot(o.redisInfo, workers, clients), t.jobs);
    const latencyMs = (o.latencyRuns ?? 0) > 0 ? await latencyP50(o.latencyRuns!, run) : undefined;
    return { ...rates(t), cpu, latencyMs, wallMs: t.ms, clientMs: t.clientMs };
  } finally {
    await queue.close();
    await stopWorkers([...clients, ...workers]);
  }
}
