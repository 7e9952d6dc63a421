/**
 * One floor run of the queue bench: bare BullMQ worker and client processes (floor-child.ts) on a
 * fresh queue, with the same Redis servers, client processes, jobs and window as the tscuda run
 * beside it; jobs/s of the mix, and the small job's p50 one at a time from this process.
 */
import { randomUUID } from 'node:crypto';
import { percentile } from '../harness/stats.js';
import { FLOOR_SMALL, floorClient } from './floor.js';
import { runClients, startFloorProcesses, stopWorkers, type BenchChild } from './workers.js';

/** A floor run's options: the tscuda run's setup. */
export interface FloorRunOptions {
  redisUrl: string;
  blobStores: readonly string[] | undefined;
  workers: number;
  /** Jobs each worker holds at once (the tscuda worker's default: 3 per lane). */
  concurrency: number;
  clients: number;
  jobs: number;
  window: number;
  /** Small jobs to time one at a time (0: none). */
  latencyRuns: number;
}

/** What a floor run measured. */
export interface FloorRunResult {
  jobsPerS: number;
  gsamplesPerS: number;
  latencyMs: number | null;
}

/** Runs the floor (see the file's comment). */
export async function queueFloorRun(o: FloorRunOptions): Promise<FloorRunResult> {
  const queue = `floor-${o.workers}-${randomUUID()}`;
  const share = (n: number): number => Math.ceil(n / o.clients);
  let children: { workers: BenchChild[]; clients: BenchChild[] } = { workers: [], clients: [] };
  try {
    children = await startFloorProcesses({ ...o, queue, jobs: share(o.jobs), window: share(o.window) });
    const t = await runClients(children.clients);
    let latencyMs: number | null = null;
    if (o.latencyRuns > 0) {
      const client = await floorClient(o.redisUrl, queue, o.blobStores ?? []);
      try {
        for (let i = 0; i < 20; i++) await client.run(FLOOR_SMALL);
        const ms: number[] = [];
        for (let i = 0; i < o.latencyRuns; i++) {
          const t0 = performance.now();
          await client.run(FLOOR_SMALL);
          ms.push(performance.now() - t0);
        }
        latencyMs = percentile(ms, 0.5);
      } finally {
        await client.close();
      }
    }
    return { jobsPerS: t.jobs / (t.ms / 1000), gsamplesPerS: t.samples / (t.ms / 1000) / 1e9, latencyMs };
  } finally {
    await stopWorkers([...children.clients, ...children.workers]);
  }
}
