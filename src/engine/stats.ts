/**
 * Engine statistics: per lane and for the whole engine, over a bounded window of recent jobs for
 * the latencies, cumulatively for counts, samples and bytes. CUDA-free.
 */
import type { DeviceStats, EngineStats, LaneStats } from './types.js';

/** Job durations kept per lane for the average and p99. */
export const STATS_WINDOW = 1024;

/** A fixed-size ring of the most recent values; average and percentiles over what it holds. */
export class RecentValues {
  readonly #values: Float64Array;
  #count = 0;
  #next = 0;

  constructor(capacity = STATS_WINDOW) {
    this.#values = new Float64Array(capacity);
  }

  /** Adds a value, overwriting the oldest once `capacity` values are held. */
  push(v: number): void {
    this.#values[this.#next] = v;
    this.#next = (this.#next + 1) % this.#values.length;
    if (this.#count < this.#values.length) this.#count++;
  }

  get size(): number {
    return this.#count;
  }

  /** A copy of the values held (at most `capacity`), in no particular order once the ring has wrapped. */
  values(): Float64Array {
    return this.#values.slice(0, this.#count);
  }

  /** The mean of the values held; 0 when empty. */
  average(): number {
    if (this.#count === 0) return 0;
    let s = 0;
    for (let i = 0; i < this.#count; i++) s += this.#values[i]!;
    return s / this.#count;
  }

  /** The p-th percentile (nearest rank) of the values held; 0 when empty. */
  percentile(p: number): number {
    return percentileOf(this.values(), p);
  }
}

/** Nearest-rank percentile of `values` (sorted in place); 0 when empty. */
export function percentileOf(values: Float64Array, p: number): number {
  if (values.length === 0) return 0;
  values.sort();
  const rank = Math.ceil((p / 100) * values.length);
  return values[Math.min(values.length - 1, Math.max(0, rank - 1))]!;
}

/** One finished job (or failed one) as a lane reports it. */
export interface JobSample {
  ok: boolean;
  /** Host wall clock from start on the lane to settling, ms. */
  runMs: number;
  /** GPU time from the lane's events, ms. */
  gpuMs: number;
  samples: number;
  bytesMoved: number;
  /** performance.now() when it started and ended. */
  startedAt: number;
  endedAt: number;
}

/** Statistics of one lane. */
export class LaneStatsRecorder {
  readonly lane: number;
  readonly device: number;
  readonly durations = new RecentValues();
  jobs = 0;
  errors = 0;
  samples = 0;
  bytesMoved = 0;
  gpuMs = 0;
  firstStart = Number.NaN;
  lastEnd = Number.NaN;

  constructor(lane: number, device: number) {
    this.lane = lane;
    this.device = device;
  }

  /** Adds one settled job: a failed one counts as an error (its bytes and GPU time still count); a successful one adds to jobs, samples and the duration window. */
  record(s: JobSample): void {
    if (Number.isNaN(this.firstStart) || s.startedAt < this.firstStart) this.firstStart = s.startedAt;
    if (Number.isNaN(this.lastEnd) || s.endedAt > this.lastEnd) this.lastEnd = s.endedAt;
    this.bytesMoved += s.bytesMoved;
    this.gpuMs += s.gpuMs;
    if (!s.ok) {
      this.errors++;
      return;
    }
    this.jobs++;
    this.samples += s.samples;
    this.durations.push(s.runMs);
  }

  /** Wall time from the first job's start to the last job's end, ms (0 before any job). */
  spanMs(): number {
    return Number.isNaN(this.firstStart) ? 0 : Math.max(0, this.lastEnd - this.firstStart);
  }

  /** This lane's LaneStats now: averages and p99 over the recent duration window, rates over the span from its first job's start to its last job's end. */
  snapshot(): LaneStats {
    const span = this.spanMs();
    return {
      lane: this.lane,
      device: this.device,
      jobs: this.jobs,
      errors: this.errors,
      avgJobMs: this.durations.average(),
      p99JobMs: this.durations.percentile(99),
      samplesPerSecond: span > 0 ? (this.samples * 1000) / span : 0,
      bytesMoved: this.bytesMoved,
      gpuBusyFraction: span > 0 ? Math.min(1, this.gpuMs / span) : 0,
    };
  }
}

/**
 * The whole engine's statistics from its lanes, and the same per device: counts and bytes summed; latencies over every
 * lane's window together; samples/s over the wall span from the first start to the last end on
 * any lane; GPU busy fraction the average of the lanes' (GPU ms of all lanes / (span x lanes)).
 */
export function engineStats(lanes: readonly LaneStatsRecorder[], queued: number, running: number): EngineStats {
  const byDevice = new Map<number, LaneStatsRecorder[]>();
  for (const l of lanes) {
    const list = byDevice.get(l.device);
    if (list) list.push(l);
    else byDevice.set(l.device, [l]);
  }
  const devices: DeviceStats[] = [...byDevice].map(([device, own]) => {
    const { jobs, errors, avgJobMs, p99JobMs, samplesPerSecond, bytesMoved, gpuBusyFraction } = aggregate(own);
    return {
      device,
      lanes: own.length,
      jobs,
      errors,
      avgJobMs,
      p99JobMs,
      samplesPerSecond,
      bytesMoved,
      gpuBusyFraction,
    };
  });
  return { lanes: lanes.map((l) => l.snapshot()), devices, queued, running, ...aggregate(lanes) };
}

/** What engineStats() sums and spans over a set of lanes (all of them, or one device's). */
function aggregate(lanes: readonly LaneStatsRecorder[]): Omit<EngineStats, 'lanes' | 'devices' | 'queued' | 'running'> {
  let jobs = 0;
  let errors = 0;
  let samples = 0;
  let bytesMoved = 0;
  let gpuMs = 0;
  let first = Number.NaN;
  let last = Number.NaN;
  const all: number[] = [];
  for (const l of lanes) {
    jobs += l.jobs;
    errors += l.errors;
    samples += l.samples;
    bytesMoved += l.bytesMoved;
    gpuMs += l.gpuMs;
    if (!Number.isNaN(l.firstStart) && !(l.firstStart >= first)) first = l.firstStart;
    if (!Number.isNaN(l.lastEnd) && !(l.lastEnd <= last)) last = l.lastEnd;
    for (const v of l.durations.values()) all.push(v);
  }
  const span = Number.isNaN(first) ? 0 : Math.max(0, last - first);
  const durations = Float64Array.from(all);
  let sum = 0;
  for (const v of durations) sum += v;
  return {
    jobs,
    errors,
    avgJobMs: durations.length ? sum / durations.length : 0,
    p99JobMs: percentileOf(durations, 99),
    samplesPerSecond: span > 0 ? (samples * 1000) / span : 0,
    bytesMoved,
    gpuBusyFraction: span > 0 && lanes.length > 0 ? Math.min(1, gpuMs / (span * lanes.length)) : 0,
  };
}
