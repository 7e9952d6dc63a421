/** How a supervisor stops its workers: a drain for those that serve, an end for those still starting, a kill past the bound. */
import type { Worker } from 'node:cluster';
import { post } from './post.js';
import { EXIT_CODES } from './protocol.js';

/** What stopWorkers() needs to know about the workers it stops. */
export interface StopWorkersOptions {
  /** Every worker still held: the slots' and the standbys'. */
  workers: readonly Worker[];
  /** Whether a worker reached `listening` or `standby-ready` (a worker that did not holds no request). */
  served: (worker: Worker) => boolean;
  /** A worker's exit code, once it has exited. */
  exitCode: (worker: Worker) => number | null | undefined;
  /** How long after the stop a worker that has not exited is killed, ms (the drain's bound and a grace). */
  killAfterMs: number;
}

/**
 * Stops every worker and waits for their exits; kills those still there `killAfterMs` after the
 * stop. `drained` when every worker that served exited as drained; `cutWorkers` counts the others.
 */
export function stopWorkers(options: StopWorkersOptions): Promise<{ drained: boolean; cutWorkers: number }> {
  const all = options.workers;
  const exits = all.map(
    (w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))),
  );
  // A worker still starting holds no request, and reads 'shutdown' only once built, which on a
  // loaded machine can come after the drain's bound (a cut drain, exit 3, for nothing): it is
  // ended now (its signal handlers come with the server), and its end is no cut.
  const starting = new Set(all.filter((w) => !options.served(w) && !w.isDead()));
  for (const w of starting) w.process.kill('SIGTERM');
  for (const w of all) if (!starting.has(w)) post(w, { tscuda: 'shutdown' });
  const timer = setTimeout(() => {
    for (const w of all) if (!w.isDead()) w.process.kill('SIGKILL');
  }, options.killAfterMs);
  return Promise.all(exits).then(() => {
    clearTimeout(timer);
    const cutWorkers = all.filter((w) => !starting.has(w) && options.exitCode(w) !== EXIT_CODES.drained).length;
    return { drained: cutWorkers === 0, cutWorkers };
  });
}
