/**
 * A worker's log: a line per event worth a human's attention (start, stall, lost context, stop)
 * and a summary every interval (jobs by outcome since the last one, waiting time, queue depth),
 * never a line per job: at thousands of jobs a second that would be the bottleneck.
 */
import { percentileOf } from '../engine/stats.js';

/** One job's end on this worker, for metrics and logs (the worker's 'settled' event; defined beside the log so the two files do not import each other). */
export interface QueueJobSettled {
  jobId: string;
  /** `completed`; `failed` for good; `retried`: it failed here and goes back to the queue. */
  outcome: 'completed' | 'failed' | 'retried';
  /** From submit to this start, ms. */
  waitMs: number;
  /** On this worker, ms. */
  runMs: number;
  attempt: number;
  reason?: string | undefined;
}

/** Keeps the waiting times of the current interval, for its summary's percentiles. */
const MAX_SAMPLES = 4096;

/** The log of one worker. */
export class WorkerLog {
  readonly #write: ((line: string) => void) | undefined;
  readonly #prefix: string;
  readonly #counts: Readonly<Record<QueueJobSettled['outcome'], number>>;
  readonly #depth: () => Promise<Record<string, number>>;
  #waits: number[] = [];
  #last = { completed: 0, failed: 0, retried: 0 };
  #timer: NodeJS.Timeout | undefined;

  constructor(
    write: ((line: string) => void) | undefined,
    worker: string,
    queue: string,
    counts: Readonly<Record<QueueJobSettled['outcome'], number>>,
    depth: () => Promise<Record<string, number>>,
  ) {
    this.#write = write;
    this.#prefix = `tscuda worker ${worker} (queue ${queue}):`;
    this.#counts = counts;
    this.#depth = depth;
  }

  /**
   * Writes one line (when a writer was given). A writer that throws is ignored: the log is called
   * from the worker's start, its close and its timers, and a broken log sink must stop none of them.
   */
  line(text: string): void {
    try {
      this.#write?.(`${new Date().toISOString()} ${this.#prefix} ${text}`);
    } catch {
      // See above: the line is lost, the worker goes on.
    }
  }

  /** Records a settled job for the next summary. */
  observe(event: QueueJobSettled): void {
    if (this.#write === undefined) return;
    if (this.#waits.length < MAX_SAMPLES) this.#waits.push(event.waitMs);
    if (event.outcome !== 'completed')
      this.line(`job ${event.jobId} ${event.outcome} on attempt ${event.attempt}: ${event.reason ?? ''}`);
  }

  /** Starts the summary timer (0: none). */
  start(intervalMs: number): void {
    if (this.#write === undefined || intervalMs === 0) return;
    this.#timer = setInterval(() => void this.#summary(), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #summary(): Promise<void> {
    const c = this.#counts;
    const delta = {
      completed: c.completed - this.#last.completed,
      failed: c.failed - this.#last.failed,
      retried: c.retried - this.#last.retried,
    };
    this.#last = { ...c };
    const waits = Float64Array.from(this.#waits);
    this.#waits = [];
    let depth = 'depth unknown (Redis away)';
    try {
      const d = await this.#depth();
      depth = `depth ${(d.waiting ?? 0) + (d.prioritized ?? 0) + (d.delayed ?? 0)}, active ${d.active ?? 0}`;
    } catch {
      // Redis away: the line says so.
    }
    const wait =
      waits.length > 0
        ? `wait p50 ${percentileOf(waits, 50).toFixed(1)} ms p99 ${percentileOf(waits, 99).toFixed(1)} ms`
        : 'no jobs';
    this.line(`+${delta.completed} completed, +${delta.failed} failed, +${delta.retried} retried; ${wait}; ${depth}`);
  }
}
