/**
 * `tscuda bench [options]`: runs the benchmark harness of bench/ (see `tscuda bench --help`).
 * The harness lives in the source repository, next to the native and Python peers it runs;
 * it is loaded at run time so that the package build (rootDir src) does not include it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CliCommand } from './command.js';
import { intOption, joinNegativeValues, parseCommandLine, UsageError } from './options.js';

type RunBench = (args: readonly string[]) => Promise<number>;

function packageRoot(): string {
  // src/cli/bench.ts from a checkout, dist/cli/bench.js when built: the root is two levels up either way.
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

function isRunBench(x: unknown): x is RunBench {
  return typeof x === 'function';
}

/** Runs bench/main.ts under tsx in a child process, for the built CLI (plain Node cannot load .ts). */
function runUnderTsx(root: string, args: readonly string[]): Promise<number> {
  const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  if (!existsSync(tsx)) {
    console.error(
      'tscuda bench: the harness is TypeScript and needs tsx: run `npm install` in the tscuda checkout, then `npm run bench`',
    );
    return Promise.resolve(1);
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsx, join(root, 'bench', 'main.ts'), ...args], {
      stdio: 'inherit',
      cwd: root,
    });
    child.on('error', (e) => {
      console.error(`tscuda bench: could not start the harness: ${e.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * The harness's options (bench/harness/args.ts), checked here first so that a usage error is the
 * CLI's one line and exit 2 before any harness (or native build) starts; the harness checks again.
 */
export function checkBenchArgs(args: readonly string[]): void {
  const { values } = parseCommandLine(
    args,
    {
      only: { type: 'string' },
      reps: { type: 'string' },
      iters: { type: 'string' },
      rounds: { type: 'string' },
      json: { type: 'boolean' },
      'no-peers': { type: 'boolean' },
      'no-native': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    false,
  );
  for (const name of ['reps', 'iters', 'rounds'] as const) intOption(name, values[name]);
  if (values.only !== undefined) {
    if (values.only === '') throw new UsageError('--only needs a pattern');
    try {
      new RegExp(values.only);
    } catch (e) {
      throw new UsageError(`--only: bad pattern ${values.only}: ${(e as Error).message}`);
    }
  }
}

async function runBenchHarness(rawArgs: string[]): Promise<number> {
  checkBenchArgs(rawArgs);
  const args = joinNegativeValues(rawArgs);
  const root = packageRoot();
  const entry = join(root, 'bench', 'run.ts');
  if (!existsSync(entry)) {
    console.error(
      'tscuda bench: the benchmark harness (bench/) ships with the source repository, not the npm package: clone tscuda, `npm install`, then `npm run bench`',
    );
    return 1;
  }
  let mod: unknown;
  try {
    mod = await import(pathToFileURL(entry).href);
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ERR_UNKNOWN_FILE_EXTENSION') return runUnderTsx(root, args);
    throw e;
  }
  const runBench = typeof mod === 'object' && mod !== null ? (mod as { runBench?: unknown }).runBench : undefined;
  if (!isRunBench(runBench)) {
    console.error(`tscuda bench: ${entry} does not export runBench(args)`);
    return 1;
  }
  return runBench(args);
}

/** `tscuda bench`: the benchmark harness of a source checkout (bench/), against C and the Python peers. */
export const benchCommand: CliCommand = {
  name: 'bench',
  summary: 'microbenchmarks against C, CuPy, PyTorch and cuda-python (source checkout only)',
  usage: [
    'usage: tscuda bench [--only <regex>] [--reps N] [--iters N] [--rounds N] [--json] [--no-peers] [--no-native]',
    '',
    'Runs the native C baseline, the Python peers (CuPy, PyTorch, cuda-python, where importable) and',
    "tscuda's own benchmarks on GPU 0, prints a table and writes bench/results/<gpu>-<date>.{json,md,svg}.",
    'The harness ships with the source repository, not with the npm package: clone tscuda, npm install.',
    '',
    'options:',
    "  --only <regex>  metrics whose name matches, e.g. --only 'launch|event'",
    '  --reps N        repetitions per metric',
    '  --iters N       calls per timed loop of the per-call metrics',
    '  --rounds N      passes of the host-timed metrics, alternating C and tscuda',
    '  --json          print the results JSON on stdout instead of the table',
    '  --no-peers      skip the Python peers',
    '  --no-native     skip the native C baseline (no ratios then)',
    '  -h, --help      this text',
    '',
    'environment: TSCUDA_BENCH_OUT=<dir> also copies the result files there; TSCUDA_BENCH_PYTHON picks the',
    'Python (default python3); TSCUDA_COMMIT names the commit where the checkout is not a git repository;',
    'TSCUDA_BENCH_ENGINE_LANES, TSCUDA_BENCH_ENGINE_DEPTH and TSCUDA_BENCH_ENGINE_IN_FLIGHT set the engine',
    "benchmarks' lanes (4; the Python peers' streams follow), laneDepth (2) and jobs in flight per lane (3).",
    '',
    "example: tscuda bench --only 'launch|fft' --no-peers",
  ].join('\n'),
  run: runBenchHarness,
};
