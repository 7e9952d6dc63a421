/**
 * The unit test files that start whole programs as processes (`tscuda serve` and its workers,
 * `tscuda worker`, redis-server, python3 with scipy, every example, an npm install of the packed
 * package): seconds to minutes each on a 2-core machine, most of `npm test`'s time. `npm test` (the README's command)
 * leaves them out; `npm run test:all` runs everything and is what CI runs. Everything else, most of
 * the emulated GPU kernels included, is in both.
 */
export const PROCESS_HEAVY_TESTS: readonly string[] = [
  'test/unit/server/serve-shutdown.test.ts',
  'test/unit/server/serve-startup.test.ts',
  'test/unit/server/serve-kill.test.ts',
  'test/unit/server/serve-cli.test.ts',
  'test/unit/server/serve-redis.test.ts',
  'test/unit/server/serve-redis-outage.test.ts',
  'test/unit/server/supervision.test.ts',
  'test/unit/server/stop-while-starting.test.ts',
  'test/unit/queue/worker-cli.test.ts',
  'test/unit/queue/faults.test.ts',
  'test/unit/docs/examples-no-gpu.test.ts',
  'test/unit/package/consumer.test.ts',
  // Each starts one or more redis-server processes (the queue's tests over a real Redis).
  'test/unit/queue/blob-channel.test.ts',
  'test/unit/queue/blob-stores.test.ts',
  'test/unit/queue/check-redis.test.ts',
  'test/unit/queue/client-close.test.ts',
  'test/unit/queue/client-misuse.test.ts',
  'test/unit/queue/handles.test.ts',
  'test/unit/queue/hardened.test.ts',
  'test/unit/queue/input-alongside.test.ts',
  'test/unit/queue/queue-options.test.ts',
  'test/unit/queue/queue.test.ts',
  'test/unit/queue/unreadable-results.test.ts',
  'test/unit/queue/worker-lifecycle.test.ts',
  'test/unit/queue/worker-misuse.test.ts',
  'test/unit/server/queue-front-hardened.test.ts',
  'test/unit/server/queue-jobs.test.ts',
  // python3 with scipy computes their references (the CPU emulation of the signal kernels).
  'test/unit/signal/kernels-emulated.test.ts',
  'test/unit/signal/orchestration-emulated-spectral.test.ts',
  'test/unit/signal/orchestration-emulated-primitives.test.ts',
  'test/unit/signal/complex-emulated.test.ts',
  // python3 runs the signal-ops peer program on a CPU stand-in and the peers' designs against scipy.
  'test/unit/bench/signal-ops-peer.test.ts',
  // Each starts node processes of its own: a watchdog ending a blocked file, the CLI without cuFFT.
  'test/unit/tools/watchdog.test.ts',
  'test/unit/cli/no-cufft.test.ts',
];

/** `TSCUDA_TESTS=quick` (set by `npm test`) leaves PROCESS_HEAVY_TESTS out; anything else runs every file. */
export const quickTests = (env: NodeJS.ProcessEnv = process.env): boolean => env.TSCUDA_TESTS === 'quick';
