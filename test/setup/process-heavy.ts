/**
 * The unit test files that start whole programs as processes (`tscuda serve` and its workers,
 * `tscuda worker`, Redis faults, every example, an npm install of the packed package): seconds to
 * minutes each on a 2-core machine, most of `npm test`'s time. `npm test` (the README's command)
 * leaves them out; `npm run test:all` runs everything and is what CI runs. Everything else, the
 * emulated GPU kernels included, is in both.
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
];

/** `TSCUDA_TESTS=quick` (set by `npm test`) leaves PROCESS_HEAVY_TESTS out; anything else runs every file. */
export const quickTests = (env: NodeJS.ProcessEnv = process.env): boolean => env.TSCUDA_TESTS === 'quick';
