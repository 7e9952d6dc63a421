/**
 * Prometheus metrics with Triton's semantics (nv_inference_* renamed tscuda_*): requests that
 * succeeded, requests that failed by reason, requests pending, how long requests queued and
 * computed, batch sizes, bytes in and out, the GPU busy fraction and the event-loop delay.
 * Each server has its own prom-client Registry, so several servers (and tests) never share
 * counters.
 */
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineStats, JobResult } from '../engine/types.js';
import type { FailureReason } from './errors.js';

/** Latency buckets in seconds: 100 us to 60 s. */
const SECONDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
const SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096];

/**
 * Every label name of the series below, and `le` (a histogram's buckets): a default label
 * (createServer's `metricsLabels`) of one of these names would overwrite it in some series.
 */
export const SERIES_LABEL_NAMES: readonly string[] = ['endpoint', 'reason', 'state', 'kind', 'dim', 'stat', 'le'];

/** What the metrics read at scrape time. */
export interface MetricsSources {
  engineStats(): EngineStats | null;
  batcherStats(): { kind: string; dim: number; batches: number; items: number; fillRate: number; queued: number }[];
  ready(): boolean;
  /** The share of new work admission takes now (1 when load shedding is off). */
  admissionShare(): number;
}

/** The server's metrics and the Registry `/metrics` exposes. */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly requestSuccess: Counter<'endpoint'>;
  readonly requestFailure: Counter<'endpoint' | 'reason'>;
  readonly pending: Gauge<'endpoint'>;
  readonly requestDuration: Histogram<'endpoint'>;
  readonly queueDuration: Histogram<'endpoint'>;
  readonly computeDuration: Histogram<'endpoint'>;
  readonly gpuDuration: Histogram<'endpoint'>;
  readonly batchSize: Histogram<'endpoint'>;
  readonly bytesIn: Counter<'endpoint'>;
  readonly bytesOut: Counter<'endpoint'>;
  readonly aborted: Counter<'endpoint'>;
  /** Engine jobs that fused two or more requests (server/fusion/). */
  readonly fusedJobs: Counter;
  /** Requests per engine job submitted from a fusion window (1: a request that found no other). */
  readonly fusedJobRequests: Histogram;
  readonly #loop: ELDHistogram;

  constructor(sources: MetricsSources, defaultLabels: Record<string, string> = {}) {
    const registers = [this.registry];
    this.registry.setDefaultLabels(defaultLabels);
    this.requestSuccess = new Counter({
      name: 'tscuda_request_success_total',
      help: 'Requests answered with a result (Triton nv_inference_request_success).',
      labelNames: ['endpoint'],
      registers,
    });
    this.requestFailure = new Counter({
      name: 'tscuda_request_failure_total',
      help: 'Requests answered with an error, by reason: REJECTED (429), INVALID (4xx), TIMEOUT (504), UNAVAILABLE (503), CANCELED, BACKEND (500) (Triton nv_inference_request_failure).',
      labelNames: ['endpoint', 'reason'],
      registers,
    });
    this.pending = new Gauge({
      // Not `..._count`: that suffix belongs to summaries and histograms (promtool lint).
      name: 'tscuda_pending_requests',
      help: 'Requests accepted and not yet answered (Triton nv_inference_pending_request_count).',
      labelNames: ['endpoint'],
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'tscuda_request_duration_seconds',
      help: 'Arrival to response, per request (Triton nv_inference_request_duration_us, as a histogram).',
      labelNames: ['endpoint'],
      buckets: SECONDS,
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'tscuda_queue_duration_seconds',
      help: 'Time a job waited in the engine queue (Triton nv_inference_queue_duration_us).',
      labelNames: ['endpoint'],
      buckets: SECONDS,
      registers,
    });
    this.computeDuration = new Histogram({
      name: 'tscuda_compute_duration_seconds',
      help: 'Time a job ran on its lane, host wall clock (Triton nv_inference_compute_infer_duration_us).',
      labelNames: ['endpoint'],
      buckets: SECONDS,
      registers,
    });
    this.gpuDuration = new Histogram({
      name: 'tscuda_gpu_compute_duration_seconds',
      help: 'GPU time of a job, from CUDA events.',
      labelNames: ['endpoint'],
      buckets: SECONDS,
      registers,
    });
    this.batchSize = new Histogram({
      name: 'tscuda_request_batch_size',
      help: 'Series per job request, items per batch request.',
      labelNames: ['endpoint'],
      buckets: SIZES,
      registers,
    });
    this.bytesIn = new Counter({
      name: 'tscuda_request_bytes_total',
      help: 'Request body bytes received (counted as they arrive, not as announced).',
      labelNames: ['endpoint'],
      registers,
    });
    this.aborted = new Counter({
      name: 'tscuda_request_aborted_total',
      help: 'Requests whose connection closed before their response was sent (a body cut off, a client that hung up).',
      labelNames: ['endpoint'],
      registers,
    });
    this.bytesOut = new Counter({
      name: 'tscuda_response_bytes_total',
      help: 'Response body bytes sent.',
      labelNames: ['endpoint'],
      registers,
    });
    this.fusedJobs = new Counter({
      name: 'tscuda_fused_jobs_total',
      help: 'Engine jobs that ran two or more requests fused (maxBatchDelayMs).',
      registers,
    });
    this.fusedJobRequests = new Histogram({
      name: 'tscuda_fused_job_requests',
      help: 'Requests per engine job submitted from a fusion window (1: a request that found no other within maxBatchDelayMs).',
      buckets: SIZES,
      registers,
    });
    new Gauge({
      name: 'tscuda_gpu_busy_fraction',
      help: "Fraction of wall time the engine's streams had GPU work (from events; mean over lanes).",
      registers,
      collect() {
        this.set(sources.engineStats()?.gpuBusyFraction ?? 0);
      },
    });
    new Gauge({
      name: 'tscuda_engine_jobs',
      help: 'Jobs in the engine by state (queued, running).',
      labelNames: ['state'],
      registers,
      collect() {
        const s = sources.engineStats();
        this.set({ state: 'queued' }, s?.queued ?? 0);
        this.set({ state: 'running' }, s?.running ?? 0);
      },
    });
    new Gauge({
      name: 'tscuda_engine_samples_per_second',
      help: 'Samples per second the engine processed (engine.stats()).',
      registers,
      collect() {
        this.set(sources.engineStats()?.samplesPerSecond ?? 0);
      },
    });
    new Gauge({
      name: 'tscuda_batcher_fill_rate',
      help: 'Mean fill of dispatched batches (items / maxBatchSize), per batch endpoint and vector length.',
      labelNames: ['kind', 'dim'],
      registers,
      collect() {
        for (const b of sources.batcherStats()) this.set({ kind: b.kind, dim: String(b.dim) }, b.fillRate);
      },
    });
    new Gauge({
      name: 'tscuda_batcher_batches',
      help: 'Batches dispatched by each batcher since it started.',
      labelNames: ['kind', 'dim'],
      registers,
      collect() {
        for (const b of sources.batcherStats()) this.set({ kind: b.kind, dim: String(b.dim) }, b.batches);
      },
    });
    new Gauge({
      name: 'tscuda_admission_share',
      help: 'Share of new job and batch requests admitted now (adaptive load shedding; 1 = all).',
      registers,
      collect() {
        this.set(sources.admissionShare());
      },
    });
    new Gauge({
      name: 'tscuda_ready',
      help: '1 when this server can run GPU work (the readiness probe answers 200).',
      registers,
      collect() {
        this.set(sources.ready() ? 1 : 0);
      },
    });
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    this.#loop = loop;
    new Gauge({
      name: 'tscuda_event_loop_delay_seconds',
      help: 'Event-loop delay (perf_hooks.monitorEventLoopDelay, 10 ms resolution) since the previous scrape: stat p50, p90, p99, max.',
      // Not `quantile`: that label belongs to summaries (promtool lint); these are a gauge's readings.
      labelNames: ['stat'],
      registers,
      collect() {
        for (const p of [50, 90, 99])
          this.set({ stat: `p${p}` }, Number.isFinite(loop.percentile(p)) ? loop.percentile(p) / 1e9 : 0);
        this.set({ stat: 'max' }, Number.isFinite(loop.max) ? loop.max / 1e9 : 0);
        loop.reset();
      },
    });
  }

  /** Counts an engine job submitted from a fusion window, of `requests` requests. */
  fusedJob(requests: number): void {
    this.fusedJobRequests.observe(requests);
    if (requests > 1) this.fusedJobs.inc();
  }

  /** Counts a finished job's timings and batch under `endpoint`. */
  observeJob(endpoint: string, result: JobResult): void {
    this.queueDuration.observe({ endpoint }, result.timings.queuedMs / 1000);
    this.computeDuration.observe({ endpoint }, result.timings.runMs / 1000);
    this.gpuDuration.observe({ endpoint }, result.timings.gpuMs / 1000);
    this.batchSize.observe({ endpoint }, result.batch);
  }

  /** Counts a failure by its Triton reason. */
  fail(endpoint: string, reason: FailureReason): void {
    this.requestFailure.inc({ endpoint, reason });
  }

  /** The Prometheus text exposition. */
  expose(): Promise<string> {
    return this.registry.metrics();
  }

  /** The content type of `expose()`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Stops the event-loop monitor. */
  dispose(): void {
    this.#loop.disable();
  }
}
