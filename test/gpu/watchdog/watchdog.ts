/**
 * A per-test watchdog that survives a blocked test thread. vitest's testTimeout is a timer on the
 * test's own thread: when that thread is stuck inside a synchronous FFI call (a blocking
 * cuStreamSynchronize, cuEventSynchronize or cuCtxSynchronize that never returns), the timer
 * never runs and the whole suite hangs. This watchdog keeps its timer on a worker thread, fed by
 * the test thread (setup.ts: beforeEach/afterEach) with what runs now and its limit. When that
 * outlives the limit, the worker writes one line naming it to stderr and ends the process with
 * SIGKILL (the blocked thread can run no handler); under pool 'forks', vitest reports that test
 * file as failed and goes on with the next file, so the run reaches its summary.
 */
import { Worker } from 'node:worker_threads';

/** The worker thread's code, run with `eval` (a worker gets no TypeScript loader). */
const WORKER_SOURCE = `
const { appendFileSync, writeSync } = require('node:fs');
const { parentPort } = require('node:worker_threads');
let timer;
parentPort.on('message', (beat) => {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  if (!(beat.limitMs > 0)) return;
  const started = Date.now();
  timer = setTimeout(() => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    writeSync(2, '\\n[tscuda watchdog] TIMED OUT: ' + JSON.stringify(beat.name) + ' still running after ' + seconds + ' s (limit ' + beat.limitMs +
      ' ms): the test thread is blocked (a synchronous call never returned), so the watchdog ends this test file\\'s process (pid ' + process.pid +
      '); vitest reports the file as failed and goes on with the next.\\n');
    // For the run's summary (report.ts): the killed file's own report never arrives.
    const report = process.env.TSCUDA_WATCHDOG_REPORT;
    if (report) try { appendFileSync(report, JSON.stringify({ name: beat.name, limitMs: beat.limitMs, seconds: Number(seconds) }) + '\\n'); } catch {}
    process.kill(process.pid, 'SIGKILL');
  }, beat.limitMs);
});
`;

/** Arms and disarms the watchdog from the test thread. */
export interface Watchdog {
  /** `name` (a test or a hook phase) starts now and may run `limitMs` (0 disarms). */
  arm(name: string, limitMs: number): void;
  disarm(): void;
}

/** Starts the watchdog thread (unref'd: it never keeps the process alive). */
export function startWatchdog(): Watchdog {
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  worker.unref();
  // A watchdog that died would leave the suite unguarded without a word: say so at once.
  worker.on('error', (e: Error) =>
    process.stderr.write(`[tscuda watchdog] the watchdog thread failed, tests are NOT guarded: ${e.message}\n`),
  );
  return {
    arm: (name, limitMs) => worker.postMessage({ name, limitMs }),
    disarm: () => worker.postMessage({ name: '', limitMs: 0 }),
  };
}

/** How long past its own timeout a test may run before the watchdog ends the process: vitest's own timeout fires first whenever the thread is free to run it. */
export function watchdogMarginMs(): number {
  const raw = process.env.TSCUDA_WATCHDOG_MARGIN_MS;
  const ms = raw === undefined ? 15_000 : Number(raw);
  if (!Number.isFinite(ms) || ms < 0)
    throw new RangeError(`TSCUDA_WATCHDOG_MARGIN_MS must be a number of ms >= 0, got ${raw}`);
  return ms;
}
