/**
 * The queue bench's fault run: two worker processes, one SIGKILLed every few seconds and
 * restarted, thousands of small jobs: none lost, none completed twice, all settled.
 */
import { randomUUID } from 'node:crypto';
import type { JobSpec } from '../../src/engine/index.js';
import { JobQueue, type QueueJobHandle } from '../../src/queue/index.js';
import { stopWorkers, type WorkerChild as Child } from './workers.js';

/** One metric of the results, the queue's value beside the in-process engine's. */
export interface QueueMetric {
  name: string;
  unit: string;
  better: 'higher' | 'lower';
  tscuda: number | null;
  inProcess: number | null;
  /** Bare BullMQ making the same data moves on the same Redis servers (floor.ts), and tscuda / floor. */
  floor?: number | null | undefined;
  floorRatio?: number | null | undefined;
  goal?: string | undefined;
  met?: boolean | undefined;
  notes: string[];
}

/** What the fault run needs of the bench: its Redis, blob stores, how to start worker `index`, and the options. */
export interface FaultRunOptions {
  redisUrl: string;
  blobStores: string[] | undefined;
  startWorker(name: string, workerName: string, index: number, lockMs: number): Promise<Child>;
  faultJobs: number;
  killEveryS: number;
  faultSeconds: number;
}

/** The fault run: one of two workers SIGKILLed every few seconds and restarted; its metrics. */
export async function faultRun(o: FaultRunOptions): Promise<QueueMetric[]> {
  const metrics: QueueMetric[] = [];
  const blobStores = o.blobStores;
  const name = `fault-${randomUUID()}`;
  const lockMs = 1000;
  const children = [await o.startWorker(name, 'f0', 0, lockMs), await o.startWorker(name, 'f1', 1, lockMs)];
  const all: Child[] = [...children];
  const queue = new JobQueue({ connection: o.redisUrl, name, pollIntervalMs: 500, blobStores });
  const faultJobs = o.faultJobs;
  let kills = 0;
  let stop = false;
  const killer = (async () => {
    let turn = 0;
    while (!stop) {
      await new Promise((r) => setTimeout(r, o.killEveryS * 1000));
      if (stop) break;
      const i = turn++ % 2;
      children[i]!.process.kill('SIGKILL');
      await children[i]!.process;
      kills++;
      children[i] = await o.startWorker(name, `f${i}-${turn}`, i, lockMs);
      all.push(children[i]!);
    }
  })();
  const handles: QueueJobHandle[] = [];
  const small: JobSpec = {
    data: Float32Array.from({ length: 1024 }, () => Math.random()),
    fs: 1000,
    flags: ['stft'],
    previewBins: 16,
  };
  // Submitted evenly over --fault-seconds, so the kills fall while jobs are queued and running.
  const pace = (o.faultSeconds * 1000) / faultJobs;
  const t0 = performance.now();
  for (let i = 0; i < faultJobs; i++) {
    const wait = t0 + i * pace - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    handles.push(await queue.submit(small, { attempts: 5 }));
  }
  const deadline = Date.now() + 5 * 60_000;
  const outcomes = await Promise.all(
    handles.map((h) =>
      Promise.race([
        h.result.then(
          (r) => ({ ok: true as const, attempts: r.queue.attempts }),
          (e: unknown) => ({ ok: false as const, error: String(e) }),
        ),
        new Promise<{ ok: null }>((r) => setTimeout(() => r({ ok: null }), Math.max(0, deadline - Date.now()))),
      ]),
    ),
  );
  stop = true;
  await killer;
  await queue.close();
  await stopWorkers(children);
  const count = new Map<string, number>();
  for (const c of all) for (const id of c.completed) count.set(id, (count.get(id) ?? 0) + 1);
  const twice = [...count.values()].filter((n) => n > 1).length;
  const lost = outcomes.filter((o) => o.ok !== true).length;
  const unsettled = outcomes.filter((o) => o.ok === null).length;
  const retried = outcomes.filter((o) => o.ok === true && o.attempts > 1).length;
  const failures = outcomes.filter((o): o is { ok: false; error: string } => o.ok === false);
  metrics.push({
    name: 'queue_fault_lost_jobs',
    unit: 'jobs',
    better: 'lower',
    tscuda: lost,
    inProcess: null,
    goal: '0',
    met: lost === 0,
    notes: [
      `${faultJobs} jobs, ${kills} SIGKILLs (every ${o.killEveryS} s), ${retried} completed as a retry (attempts > 1), ${failures.length} failed${failures[0] ? ` (first: ${failures[0].error})` : ''}`,
    ],
  });
  metrics.push({
    name: 'queue_fault_completed_twice',
    unit: 'jobs',
    better: 'lower',
    tscuda: twice,
    inProcess: null,
    goal: '0',
    met: twice === 0,
    notes: ['jobs reported completed by more than one worker process'],
  });
  metrics.push({
    name: 'queue_fault_unsettled',
    unit: 'jobs',
    better: 'lower',
    tscuda: unsettled,
    inProcess: null,
    goal: '0',
    met: unsettled === 0,
    notes: ['jobs whose result had not settled 5 minutes after the last submit'],
  });
  return metrics;
}
