import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { isolatedTests, testFiles } from './test/setup/module-isolation.js';
import { PROCESS_HEAVY_TESTS, quickTests } from './test/setup/process-heavy.js';

// Every project compares typed arrays through one fast tester (see the file for why).
const setupFiles = ['test/setup/typed-array-equality.ts'];

// `npm test` (TSCUDA_TESTS=quick) leaves out the files that start whole programs as processes;
// `npm run test:all` (CI) and any run naming a file run them (test/setup/process-heavy.ts).
const unitExclude = quickTests() ? [...configDefaults.exclude, ...PROCESS_HEAVY_TESTS] : configDefaults.exclude;

// The unit files share one module graph per worker ('unit'); those that replace modules or globals,
// or need the process's first of something, load alone ('unit-isolated'; test/setup/module-isolation.ts).
// `--project 'unit*'` runs both.
const root = fileURLToPath(new URL('.', import.meta.url));
const ISOLATED_UNIT_TESTS = isolatedTests(root, testFiles(root, 'test/unit'));

// A machine with no NVIDIA device node cannot run a GPU test: its gpu files only load and skip,
// so they may load side by side (one at a time they took 50 s of a 2-core `npm test`). With a GPU
// (or TSCUDA_REQUIRE_GPU) they run one file at a time, as the GPU is shared.
const gpuPossible = existsSync('/dev/nvidiactl') || process.env.TSCUDA_REQUIRE_GPU !== undefined;

export default defineConfig({
  test: {
    // Vitest's default (one less than the cores) is one worker on CI's 2 cores: most files wait on
    // module loading, not on a core, so two at a time take 2 min where one at a time took 3.5.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [...unitExclude, ...ISOLATED_UNIT_TESTS],
          isolate: false,
          setupFiles,
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'unit-isolated',
          include: ISOLATED_UNIT_TESTS,
          exclude: unitExclude,
          setupFiles,
          testTimeout: 20_000,
        },
      },
      { test: { name: 'codegen', include: ['test/codegen/**/*.test.ts'], setupFiles, testTimeout: 120_000 } },
      {
        test: {
          name: 'gpu',
          include: ['test/gpu/**/*.test.ts'],
          globalSetup: ['test/gpu/announce.ts', 'test/gpu/watchdog/report.ts'],
          testTimeout: 120_000,
          fileParallelism: !gpuPossible,
          // Each file in its own process, watched from a thread of its own (test/gpu/watchdog): a test
          // blocked in a synchronous CUDA call, where testTimeout cannot fire, ends its file's process
          // and is reported as failed; the run goes on with the next file and reaches its summary.
          pool: 'forks',
          // Without a GPU the files only load and skip: they share one module graph per worker, and
          // no test runs for a watchdog to watch.
          isolate: gpuPossible,
          setupFiles: gpuPossible ? [...setupFiles, 'test/gpu/watchdog/setup.ts'] : setupFiles,
        },
      },
    ],
  },
});
