/**
 * The supervising primary of the fault run: `node --import tsx fault-service.ts <workers> <port> [standby] [config JSON]`.
 * Logs each worker event on stderr (the bench times recovery from them); SIGTERM stops it, exit 0.
 */
import { join } from 'node:path';
import { superviseWorkers } from '../../src/server/supervision/supervisor.js'; // private-path: the worker supervisor alone, without the HTTP server around it

const workers = Number(process.argv[2] ?? 2);
const port = Number(process.argv[3] ?? 8100);
const standby = Number(process.argv[4] ?? 0);
/** More of the workers' configuration (e.g. maxBatchDelayMs), as JSON. */
const extra = JSON.parse(process.argv[5] ?? '{}') as Record<string, unknown>;
const supervisor = superviseWorkers({
  workers,
  standby,
  // TSCUDA_SERVE_BENCH_WORKER: another worker entry (the fake-engine one, to check the bench without a GPU).
  // The fault test's worker (test-only: a stage that faults on demand), shared with test/gpu/server.
  workerEntry:
    process.env.TSCUDA_SERVE_BENCH_WORKER ??
    join(import.meta.dirname, '..', '..', 'test', 'gpu', 'server', 'fixtures', 'fault-worker.ts'),
  config: { port, host: '127.0.0.1', lanes: 4, maxQueued: 256, ...extra },
  // Every worker on GPU 0: the run measures recovery of one GPU's workers.
  devices: [0],
  log: (line) => console.error(`[supervisor] ${line}`),
});
await supervisor.started;
console.log(JSON.stringify({ started: true, ready: supervisor.readyWorkers }));
process.once('SIGTERM', () => void supervisor.stop().then(() => process.exit(0)));
process.once('SIGINT', () => void supervisor.stop().then(() => process.exit(0)));
