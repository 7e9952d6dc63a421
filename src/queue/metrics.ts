/**
 * The queue's Prometheus metrics, registered on a prom-client Registry the caller owns (the
 * server's, or a worker's own): depth by state read from Redis at each scrape, whether Redis is
 * reachable, and on a worker the jobs by outcome and their waiting time from submit to start.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { clip, shownValue } from '../runtime/value-checks.js';
import type { JobQueue, QueueCounts } from './job-queue.js';
import type { QueueWorker } from './worker.js';

/** What the metrics read: a client's JobQueue (depth, reachability) or a QueueWorker (those and its jobs). */
export type QueueMetricsSource = JobQueue | QueueWorker;

/** Longest a scrape waits for the queue's depth, ms: past it the depth is left out (a stopped Redis must not hold /metrics). */
const DEPTH_WAIT_MS = 2000;

/** Waiting-time buckets, seconds: from a millisecond (an idle queue) to ten minutes (a backlog). */
const WAIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

/** The series registered for any source, those only for a worker, and the label names they use themselves (`le`: the histogram's buckets). */
const METRIC_NAMES = ['tscuda_queue_depth', 'tscuda_queue_reachable'];
const WORKER_METRIC_NAMES = ['tscuda_queue_jobs_total', 'tscuda_queue_wait_seconds'];
const OWN_LABELS = ['state', 'outcome', 'le'];

/**
 * Checks every argument, and that `registry` holds none of the series yet, before anything is
 * registered: prom-client refuses a bad label only as it registers, which left the series
 * registered before it behind (and a corrected second call then refused as a duplicate).
 */
function checkArguments(registry: unknown, source: unknown, labels: unknown): void {
  const r = registry as Partial<Registry> | null;
  if (
    typeof r !== 'object' ||
    r === null ||
    typeof r.registerMetric !== 'function' ||
    typeof r.getSingleMetric !== 'function'
  )
    throw new TypeError(`registerQueueMetrics registry must be a prom-client Registry, got ${shownValue(registry)}`);
  const s = source as Partial<JobQueue & QueueWorker> | null;
  const isWorker = typeof s?.queueCounts === 'function' && typeof s.on === 'function';
  if (typeof s !== 'object' || s === null || !(isWorker || typeof s.counts === 'function') || !('reachable' in s))
    throw new TypeError(`registerQueueMetrics source must be a JobQueue or a QueueWorker, got ${shownValue(source)}`);
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels))
    throw new TypeError(
      `registerQueueMetrics labels must be an object of label names to strings, got ${shownValue(labels)}`,
    );
  for (const [name, value] of Object.entries(labels)) {
    const shown = clip(JSON.stringify(name));
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name) || name.startsWith('__'))
      throw new TypeError(
        `registerQueueMetrics labels[${shown}]: not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)`,
      );
    if (OWN_LABELS.includes(name))
      throw new TypeError(
        `registerQueueMetrics labels.${name}: the queue's own series use this label (${OWN_LABELS.join(', ')}); pick another name`,
      );
    if (typeof value !== 'string')
      throw new TypeError(`registerQueueMetrics labels.${name} must be a string, got ${shownValue(value)}`);
  }
  for (const name of isWorker ? [...METRIC_NAMES, ...WORKER_METRIC_NAMES] : METRIC_NAMES)
    if (r.getSingleMetric(name) !== undefined)
      throw new TypeError(`registerQueueMetrics: the registry already holds ${name} (registered twice?)`);
}

/**
 * Registers on `registry`: `tscuda_queue_depth{state}` (waiting, prioritized, delayed, active),
 * `tscuda_queue_reachable` (1 while Redis answers), and for a worker `tscuda_queue_jobs_total{outcome}`
 * (completed, failed, retried) and `tscuda_queue_wait_seconds` (submit to start). `labels` go on
 * every series (e.g. `{ worker: 'gpu-host-1' }`). Every argument is checked first (a TypeError
 * naming it): a call that throws registers nothing.
 */
export function registerQueueMetrics(
  registry: Registry,
  source: QueueMetricsSource,
  labels: Record<string, string> = {},
): void {
  checkArguments(registry, source, labels);
  const names = Object.keys(labels);
  const counts = (): Promise<QueueCounts> => ('queueCounts' in source ? source.queueCounts() : source.counts());
  new Gauge({
    name: 'tscuda_queue_depth',
    help: 'Jobs in the queue by state (waiting, prioritized and delayed wait for a worker; active are held by one)',
    labelNames: ['state', ...names],
    registers: [registry],
    async collect() {
      if (!source.reachable) return;
      let timer: NodeJS.Timeout | undefined;
      try {
        const late = new Promise<never>(
          (_, reject) => (timer = setTimeout(() => reject(new Error('no answer')), DEPTH_WAIT_MS)),
        );
        const c = await Promise.race([counts(), late]);
        for (const state of ['waiting', 'prioritized', 'delayed', 'active'] as const)
          this.set({ ...labels, state }, c[state]);
      } catch {
        // Redis went away or did not answer during the scrape: the depth is left out, reachable says whether it answers.
      } finally {
        clearTimeout(timer);
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
