/**
 * The queue's Prometheus metrics, registered on a prom-client Registry the caller owns (the
 * server's, or a worker's own): depth by state read from Redis at each scrape, whether Redis is
 * reachable, and on a worker the jobs by outcome and their waiting time from submit to start.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { JobQueue, QueueCounts } from './job-queue.js';
import type { QueueWorker } from './worker.js';

/** What the metrics read: a client's JobQueue (depth, reachability) or a QueueWorker (those and its jobs). */
export type QueueMetricsSource = JobQueue | QueueWorker;

/** Waiting-time buckets, seconds: from a millisecond (an idle queue) to ten minutes (a backlog). */
const WAIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

/**
 * Registers on `registry`: `tscuda_queue_depth{state}` (waiting, prioritized, delayed, active),
 * `tscuda_queue_reachable` (1 while Redis answers), and for a worker `tscuda_queue_jobs_total{outcome}`
 * (completed, failed, retried) and `tscuda_queue_wait_seconds` (submit to start). `labels` go on
 * every series (e.g. `{ worker: 'gpu-host-1' }`).
 */
export function registerQueueMetrics(registry: Registry, source: QueueMetricsSource, labels: Record<string, string> = {}): void {
  const names = Object.keys(labels);
  const counts = (): Promise<QueueCounts> => ('queueCounts' in source ? source.queueCounts() : source.counts());
  new Gauge({
    name: 'tscuda_queue_depth',
    help: 'Jobs in the queue by state (waiting, prioritized and delayed wait for a worker; active are held by one)',
    labelNames: ['state', ...names],
    registers: [registry],
    async collect() {
      if (!source.reachable) return;
      try {
        const c = await counts();
        for (const state of ['waiting', 'prioritized', 'delayed', 'active'] as const) this.set({ ...labels, state }, c[state]);
      } catch {
        // Redis went away during the scrape: the depth is left out, reachable says 0.
      }
    },
  });
  new Gauge({
    name: 'tscuda_queue_reachable',
    help: '1 while Redis answers, 0 while it is away',
    labelNames: names,
    registers: [registry],
    collect() {
      this.set(labels, source.reachable ? 1 : 0);
    },
  });
  if (!('queueCounts' in source)) return;
  const jobs = new Counter({
    name: 'tscuda_queue_jobs_total',
    help: 'Jobs this worker ended, by outcome (retried: failed here, back in the queue)',
    labelNames: ['outcome', ...names],
    registers: [registry],
  });
  const wait = new Histogram({
    name: 'tscuda_queue_wait_seconds',
    help: 'Time from submit to the start of a job on this worker',
    labelNames: names,
    buckets: WAIT_BUCKETS,
    registers: [registry],
  });
  for (const outcome of ['completed', 'failed', 'retried']) jobs.inc({ ...labels, outcome }, 0);
  source.on('settled', (e) => {
    jobs.inc({ ...labels, outcome: e.outcome });
    wait.observe(labels, e.waitMs / 1000);
  });
}
