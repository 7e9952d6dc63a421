/**
 * The sweep of expired waiting jobs: a job no worker took within its `inputTtlMs` has lost its
 * samples, so nothing can run it; its entry is removed from Redis, so that a queue without workers
 * does not grow without bound. Every client sweeps (the removal is idempotent), at most once a
 * minute, a bounded number of jobs per state at a time.
 */
import type { Queue } from 'bullmq';

/** Jobs removed per state per sweep at most (BullMQ's clean limit): a sweep stays one short script per state. */
const SWEEP_LIMIT = 1000;
/** Longest time between sweeps, ms. */
const MAX_SWEEP_INTERVAL_MS = 60_000;
/** The states of a job that waits for a worker. */
const WAITING_STATES = ['wait', 'prioritized', 'delayed', 'paused'] as const;

/** Starts sweeping `queue` of waiting jobs older than `ttlMs` while `reachable()`; returns the stop. */
export function startSweep(queue: Queue, ttlMs: number, reachable: () => boolean): () => void {
  let running = false;
  const sweep = async (): Promise<void> => {
    if (running || !reachable()) return;
    running = true;
    try {
      for (const state of WAITING_STATES) await queue.clean(ttlMs, SWEEP_LIMIT, state);
    } catch {
      // Redis away or slow: the next sweep tries again.
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void sweep(), Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(1000, ttlMs)));
  timer.unref();
  return () => clearInterval(timer);
}
