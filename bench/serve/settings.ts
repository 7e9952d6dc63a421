/** The serve bench's command line: `npx tsx bench/serve/main.ts [options]` (--help lists them). */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { defaultWorkerCount } from '../../src/server/index.js';

const HELP = `usage: npx tsx bench/serve/main.ts [options]
  --duration S        seconds per load step (default 5; --quick 2)
  --quick             short steps, one alternation per floor row, 12 s fault run
  --sim               CPU host: tscuda serve over the simulated engine (bench/serve/sim-worker.ts)
                      against the HTTP floor, nothing else (no GPU needed); results named
                      serve-sim-<host>-<date>
  --concurrency L     sweep, default 1,8,64,256
  --workers N         tscuda serve workers for the sweep (default 1)
  --floor-workers L   process counts of the floor rows (default 1,2; the host's default count,
                      what tscuda serve runs without --workers, is always added)
  --floor-sweep L     more process counts of the floor alone, for the best floor (default 4,8
                      up to the CPUs; --quick: none)
  --floor-duration S  seconds per step of the floor and fusing rows (default 3; --quick 2)
  --reps N            alternations of tscuda and the floor per row (default 2; --quick 1)
  --floor-shedding on|off  load shedding (--max-lag, --max-turn) of tscuda in the floor and fusing
                      rows (default on; --sim: off, as a shared CPU host's own lag would shed
                      requests the floor answers)
  --fault-workers N   workers in the fault run (default 2)
  --fault-standby N   standby workers in the fault run (default 0: replacement by a new process; standby is experimental)
  --fault-duration S  fault run length (default 30; --quick 12)
  --no-sweep, --no-floors, --no-fusion, --no-python, --no-fault, --no-overload   skip a part
  --overload-max-lag MS  the overload server's --max-lag (default: tscuda serve's, 50)
  --overload-max-turn MS the overload server's --max-turn (default: tscuda serve's, 25)
  --fusion-delay-ms MS   the fusing-on row's --max-batch-delay-ms (default 2)
  --sweep-load L         the sweep's client: loop (default; node:http closed loops over client processes) or autocannon
  --throughput-concurrency C  clients of the throughput rows and of the in-process reference (default 16)
  --throughput-workers N      tscuda serve workers of the serve_stft_gsamples_per_s row (default 2; the sweep's server is measured there too)
  --client-processes P        client processes of the closed loops (default 4)
  --verbose           forward the servers' stderr
Writes serve-<gpu>-<yyyymmdd>.{json,md} to $TSCUDA_BENCH_OUT, else bench/results/.`;

const { values } = parseArgs({
  options: {
    duration: { type: 'string' },
    quick: { type: 'boolean' },
    sim: { type: 'boolean' },
    concurrency: { type: 'string' },
    workers: { type: 'string' },
    'floor-workers': { type: 'string' },
    'floor-sweep': { type: 'string' },
    reps: { type: 'string' },
    'floor-duration': { type: 'string' },
    'floor-shedding': { type: 'string' },
    'fault-workers': { type: 'string' },
    'fault-standby': { type: 'string' },
    'fault-duration': { type: 'string' },
    'no-sweep': { type: 'boolean' },
    'no-floors': { type: 'boolean' },
    'no-fusion': { type: 'boolean' },
    'no-python': { type: 'boolean' },
    'no-fault': { type: 'boolean' },
    'no-overload': { type: 'boolean' },
    'overload-max-lag': { type: 'string' },
    'overload-max-turn': { type: 'string' },
    'fusion-delay-ms': { type: 'string' },
    'sweep-load': { type: 'string' },
    'throughput-concurrency': { type: 'string' },
    'throughput-workers': { type: 'string' },
    'client-processes': { type: 'string' },
    verbose: { type: 'boolean' },
    help: { type: 'boolean' },
  },
});
if (values.help === true) {
  console.log(HELP);
  process.exit(0);
}

/** A whole number option of at least `min`, or the fallback; a bad one stops the bench with its name. */
function count(name: string, v: string | undefined, fallback: number, min = 1): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min)
    throw new Error(`--${name} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

/** A list of whole numbers (`1,2,4`). */
function counts(name: string, v: string | undefined, fallback: number[]): number[] {
  return v === undefined ? fallback : v === '' ? [] : v.split(',').map((x) => count(name, x.trim(), 0));
}

const quick = values.quick === true;
const sim = values.sim === true;
const cpus = availableParallelism();
const sweepLoad = values['sweep-load'] ?? 'loop';
const floorShedding = values['floor-shedding'] ?? (sim ? 'off' : 'on');
if (floorShedding !== 'on' && floorShedding !== 'off')
  throw new Error(`--floor-shedding must be on or off, got ${JSON.stringify(floorShedding)}`);
if (sweepLoad !== 'autocannon' && sweepLoad !== 'loop')
  throw new Error(`--sweep-load must be autocannon or loop, got ${JSON.stringify(sweepLoad)}`);

/** Everything the bench's parts read from the command line. */
export const settings = {
  quick,
  sim,
  stepS: count('duration', values.duration, quick ? 2 : 5),
  sweep: counts('concurrency', values.concurrency, [1, 8, 64, 256]),
  workers: count('workers', values.workers, 1),
  floorWorkers: counts('floor-workers', values['floor-workers'], [1, 2]),
  floorSweep: counts('floor-sweep', values['floor-sweep'], quick || sim ? [] : [4, 8].filter((w) => w <= cpus)),
  /** What tscuda serve runs without --workers here (one GPU, device 0). */
  defaultWorkers: defaultWorkerCount(cpus, 1),
  reps: count('reps', values.reps, quick ? 1 : 2),
  /** Seconds per step of the floor and fusing rows: many rows, alternated, so shorter than the sweep's. */
  floorStepS: count('floor-duration', values['floor-duration'], quick ? 2 : 3),
  /** tscuda serve's options of the floor and fusing rows: load shedding off with --floor-shedding off. */
  floorServeArgs: floorShedding === 'on' ? [] : ['--max-lag', '0', '--max-turn', '0'],
  faultWorkers: count('fault-workers', values['fault-workers'], 2),
  faultStandby: count('fault-standby', values['fault-standby'], 0, 0),
  faultS: count('fault-duration', values['fault-duration'], quick ? 12 : 30),
  run: {
    sweep: values['no-sweep'] !== true && !sim,
    floors: values['no-floors'] !== true,
    fusion: values['no-fusion'] !== true,
    python: values['no-python'] !== true && !sim,
    fault: values['no-fault'] !== true && !sim,
    overload: values['no-overload'] !== true && !sim,
  },
  overloadMaxLag: values['overload-max-lag'],
  overloadMaxTurn: values['overload-max-turn'],
  fusionDelayMs: count('fusion-delay-ms', values['fusion-delay-ms'], 2),
  /**
   * The sweep's client: the node:http closed loops of the throughput rows, over client processes,
   * or autocannon. Loops by default: against the same tscuda server on an H100 host autocannon
   * topped out first (c=1: 417 req/s against 1346 with the loops; c=64: 2106 against 3006), while
   * the Python peer, bound by its server, measured alike under both.
   */
  sweepLoad: sweepLoad as 'autocannon' | 'loop',
  throughputConcurrency: count('throughput-concurrency', values['throughput-concurrency'], 16),
  /**
   * Workers of the server whose throughput row is serve_stft_gsamples_per_s: one Node process
   * tops out near 0.19 Gsamples/s of this mix (its main thread busy ~65 %: writing the 4 MiB answers
   * into sockets, copying bodies, GC), so a deployment for throughput runs two per GPU.
   */
  throughputWorkers: count('throughput-workers', values['throughput-workers'], 2),
  /** Client processes of the closed loops: one caps near 280 requests/s of 4 MiB (bare node:http server, H100 host). */
  clientProcesses: count('client-processes', values['client-processes'], 4),
  verbose: values.verbose === true,
  cpus,
};

/** The bench's settings (settings above). */
export type Settings = typeof settings;
