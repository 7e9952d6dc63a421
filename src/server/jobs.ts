/**
 * The asynchronous jobs of `POST /v1/jobs`: each record from submit to a retained outcome.
 * Finished jobs are kept for `ttlMs` and at most `maxFinished` of them (oldest finished leave
 * first), so a client that never fetches its results cannot grow the server's memory.
 */
import type { Job, JobResult } from '../engine/types.js';
import type { HttpError } from './errors.js';

/** One asynchronous job as the server tracks it. */
export interface JobRecord {
  /** The server's id of the job (the engine's id, prefixed with the worker's when in a cluster). */
  readonly id: string;
  readonly job: Job | null;
  readonly submittedAt: number;
  status: 'queued' | 'running' | 'ready' | 'error' | 'cancelled';
  finishedAt: number | undefined;
  result: JobResult | undefined;
  error: HttpError | undefined;
  /** Settles when the record does (never rejects). */
  readonly settled: Promise<void>;
}

/** Retention of finished jobs. */
export interface JobRetention {
  /** Finished jobs kept at most: a positive integer; default 1024. */
  maxFinished: number;
  /** How long a finished job is kept, ms in (0, 2^31-1] (about 24.8 days); default 300000 (5 min). */
  ttlMs: number;
}

/** The server's table of asynchronous jobs, bounded for finished ones. */
export class JobStore {
  readonly #records = new Map<string, JobRecord>();
  /** Finished ids in the order they finished. */
  readonly #finished: string[] = [];
  readonly #retention: JobRetention;
  readonly #now: () => number;

  constructor(retention: JobRetention, now: () => number = Date.now) {
    this.#retention = retention;
    this.#now = now;
  }

  /** Jobs tracked (unfinished and retained finished ones). */
  get size(): number {
    return this.#records.size;
  }

  /** Jobs not yet finished. */
  get unfinished(): JobRecord[] {
    return [...this.#records.values()].filter((r) => r.finishedAt === undefined);
  }

  /** Starts tracking a submitted job under its id (a record with the same id replaces it), after sweeping expired finished ones. It stays until finished and then dropped by the retention. */
  add(record: JobRecord): void {
    this.sweep();
    this.#records.set(record.id, record);
  }

  /** The record of job `id`, or undefined when it was never added, was deleted, or was finished and dropped by the retention (expired records are swept first). */
  get(id: string): JobRecord | undefined {
    this.sweep();
    return this.#records.get(id);
  }

  /** Marks a record finished (ready, error or cancelled) and applies the retention. */
  finish(
    record: JobRecord,
    outcome: { result: JobResult } | { error: HttpError; status: 'error' | 'cancelled' },
  ): void {
    if (record.finishedAt !== undefined) return;
    record.finishedAt = this.#now();
    if ('result' in outcome) {
      record.status = 'ready';
      record.result = outcome.result;
    } else {
      record.status = outcome.status;
      record.error = outcome.error;
    }
    this.#finished.push(record.id);
    this.sweep();
  }

  /** Forgets a record (DELETE of a finished job). */
  delete(id: string): boolean {
    const i = this.#finished.indexOf(id);
    if (i >= 0) this.#finished.splice(i, 1);
    return this.#records.delete(id);
  }

  /** Drops finished records beyond the count or older than the TTL. */
  sweep(): void {
    const now = this.#now();
    while (this.#finished.length > 0) {
      const id = this.#finished[0]!;
      const r = this.#records.get(id);
      const expired = r === undefined || r.finishedAt === undefined || now - r.finishedAt > this.#retention.ttlMs;
      if (!expired && this.#finished.length <= this.#retention.maxFinished) break;
      this.#finished.shift();
      this.#records.delete(id);
    }
  }
}
