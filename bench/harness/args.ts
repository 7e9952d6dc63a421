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

export function parseArgs(argv: readonly string[]): BenchOptions {
  const o: BenchOptions = { only: null, onlySource: null, json: false, reps: DEFAULT_REPS, iters: DEFAULT_ITERS, rounds: DEFAULT_ROUNDS, peers: true, native: true, help: false };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const flag = eq > 0 ? raw.slice(0, eq) : raw;
    const inline = eq > 0 ? raw.slice(eq + 1) : undefined;
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--only': {
        const v = value();
        if (v === undefined || v === '') throw new UsageError('--only needs a pattern');
        try {
          o.only = new RegExp(v);
        } catch (e) {
          throw new UsageError(`--only: bad pattern ${v}: ${(e as Error).message}`);
        }
        o.onlySource = v;
        break;
      }
      case '--reps':
        o.reps = positiveInt('--reps', value());
        break;
      case '--iters':
        o.iters = positiveInt('--iters', value());
        break;
      case '--rounds':
        o.rounds = positiveInt('--rounds', value());
        break;
      case '--json':
        o.json = true;
        break;
      case '--no-peers':
        o.peers = false;
        break;
      case '--no-native':
        o.native = false;
        break;
      case '--help':
      case '-h':
        o.help = true;
        break;
      default:
        throw new UsageError(`unknown option ${raw}`);
    }
  }
  return o;
}
