import { parseArgs as parseCliArgs } from 'node:util';
/** Command-line flags of `npm run bench` / `tscuda bench`. */

export interface BenchOptions {
  /** Unanchored pattern on metric names; null: all. */
  only: RegExp | null;
  onlySource: string | null;
  /** Machine output (the results JSON) on stdout instead of the table. */
  json: boolean;
  /** Repetitions per metric (bench.cu's default: 15). */
  reps: number;
  /** Calls per timed loop of the per-call metrics (bench.cu's default: 20000). */
  iters: number;
  /** Passes of the host-timed metrics, alternating C and tscuda (C, tscuda, C, tscuda, ...). */
  rounds: number;
  peers: boolean;
  native: boolean;
  help: boolean;
}

export const DEFAULT_REPS = 15;
export const DEFAULT_ITERS = 20000;
export const DEFAULT_ROUNDS = 5;

export const USAGE = `usage: npm run bench -- [options]   (or: tscuda bench [options])
Runs the native C baseline, the Python peers (CuPy, PyTorch, cuda-python, where importable)
and tscuda's own benchmarks on GPU 0, prints a table and writes bench/results/<gpu>-<date>.{json,md,svg}.
  --only <regex>   metrics whose name matches (unanchored), e.g. --only 'launch|event'
  --reps N         repetitions per metric (default ${DEFAULT_REPS})
  --iters N        calls per timed loop of the per-call metrics (default ${DEFAULT_ITERS})
  --rounds N       passes of the host-timed metrics, alternating C and tscuda (default ${DEFAULT_ROUNDS})
  --json           print the results JSON on stdout instead of the table
  --no-peers       skip the Python peers
  --no-native      skip the native C baseline (no ratios then)
  --help           this text
Environment: TSCUDA_BENCH_OUT=<dir> also copies the three result files there;
TSCUDA_BENCH_PYTHON picks the Python (default python3); TSCUDA_COMMIT names the commit
where the checkout is not a git repository.`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

function positiveInt(flag: string, v: string | undefined): number {
  if (v === undefined) throw new UsageError(`${flag} needs a value`);
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${flag} must be a positive integer, got ${v}`);
  return Number(v);
}

/** The bench's options, parsed with node:util parseArgs (the CLI's parser too); errors are UsageErrors naming the option. */
export function parseArgs(argv: readonly string[]): BenchOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseCliArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        only: { type: 'string' },
        reps: { type: 'string' },
        iters: { type: 'string' },
        rounds: { type: 'string' },
        json: { type: 'boolean' },
        'no-peers': { type: 'boolean' },
        'no-native': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    const message = (e as Error).message;
    const unknown = /Unknown option '([^']+)'/.exec(message);
    if (unknown) throw new UsageError(`unknown option ${unknown[1]}`);
    const missing = /Option '(--[\w-]+)[^']*' argument missing/.exec(message);
    if (missing) throw new UsageError(`${missing[1]} needs a value`);
    throw new UsageError(message);
  }
  const o: BenchOptions = {
    only: null,
    onlySource: null,
    json: false,
    reps: DEFAULT_REPS,
    iters: DEFAULT_ITERS,
    rounds: DEFAULT_ROUNDS,
    peers: true,
    native: true,
    help: false,
  };
  const only = values.only as string | undefined;
  if (only !== undefined) {
    if (only === '') throw new UsageError('--only needs a pattern');
    try {
      o.only = new RegExp(only);
    } catch (e) {
      throw new UsageError(`--only: bad pattern ${only}: ${(e as Error).message}`);
    }
    o.onlySource = only;
  }
  if (values.reps !== undefined) o.reps = positiveInt('--reps', values.reps as string);
  if (values.iters !== undefined) o.iters = positiveInt('--iters', values.iters as string);
  if (values.rounds !== undefined) o.rounds = positiveInt('--rounds', values.rounds as string);
  o.json = values.json === true;
  o.peers = values['no-peers'] !== true;
  o.native = values['no-native'] !== true;
  o.help = values.help === true;
  return o;
}
