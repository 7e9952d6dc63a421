/**
 * The serve load bench (issues 12 and 38): `npx tsx bench/serve/main.ts [--quick] [--sim] [options]`.
 *
 * 1. in process: the engine alone on the throughput job mix (the HTTP-overhead reference);
 * 2. `tscuda serve` under closed loops of node:http clients over several client processes (or
 *    autocannon): the /v1/stft sweep over concurrency 1, 8, 64, 256 with perf_analyzer's columns,
 *    the throughput mix, the batch endpoint (sweep.ts);
 * 3. the floor rows: every row against a bare node:http server with the same process count, in
 *    the same run, at 1, 2 and the default number of workers (floor-runs.ts);
 * 4. fusing off and on (fusion-rows.ts);
 * 5. overload: an open loop at twice one worker's capacity against a small queue, then 512
 *    closed-loop clients as a stress (overload.ts);
 * 6. the Python peer (aiohttp + PyTorch/CuPy) under the same sweep;
 * 7. the fault run: faults injected every few seconds under load (fault-run.ts).
 * `--sim`: parts 3 and 4 only, over the simulated engine, on any host (no GPU).
 * Writes serve-<gpu>-<date>.json and .md (serve-sim-<host>-<date> with --sim) to $TSCUDA_BENCH_OUT,
 * else bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, hostname } from 'node:os';
import { join } from 'node:path';
import { yyyymmdd } from '../harness/naming.js';
import { gpuSlug } from '../report/slug.js';
import { faultMarkdown, runFault } from './fault-run.js';
import { floorMarkdown, runFloorPart, type FloorPart } from './floor-runs.js';
import { fusionMarkdown, runFusionRows, type FusionRow } from './fusion-rows.js';
import { autocannonStep } from './autocannon-step.js';
import { send, type SweepRow } from './load.js';
import { RPS_MIX, THROUGHPUT_MIX, stftRequest } from './mixes.js';
import { overloadMarkdown, runOverload } from './overload.js';
import { headlineMetrics, sweepMarkdown, type PythonPart } from './report.js';
import { startPython } from './services.js';
import { settings as s } from './settings.js';
import { inProcess, runSweep, step, type SweepPart } from './sweep.js';

const ROOT = join(import.meta.dirname, '..', '..');
const log = (line: string): void => console.error(`[serve-bench] ${line}`);
const PORT = 18_400 + Math.floor(Math.random() * 500);
if (s.sim) process.env.TSCUDA_SERVE_BENCH_WORKER ??= join(ROOT, 'bench/serve/sim-worker.ts');

const started = performance.now();
const notes: string[] = [];
const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  mode: s.sim ? 'sim' : 'gpu',
  // The Node line is part of the result (the door's costs differ between lines), as in the queue bench's.
  node: process.version,
  host: { cpus: s.cpus, cpuModel: cpus()[0]?.model ?? 'unknown' },
  settings: {
    stepS: s.stepS,
    sweep: s.sweep,
    workers: s.workers,
    floorWorkers: s.floorWorkers,
    floorSweep: s.floorSweep,
    defaultWorkers: s.defaultWorkers,
    reps: s.reps,
    floorStepS: s.floorStepS,
    floorServeArgs: s.floorServeArgs,
    faultWorkers: s.faultWorkers,
    faultS: s.faultS,
    rpsMix: RPS_MIX,
    throughputMix: THROUGHPUT_MIX,
    throughputConcurrency: s.throughputConcurrency,
    clientProcesses: s.clientProcesses,
  },
};

// ---- 1. in process, 2. the sweep --------------------------------------------------------------
let baseline: { gsamplesPerS: number | null; device: string; reason?: string } = {
  gsamplesPerS: null,
  device: s.sim ? 'simulated engine' : 'unknown',
};
if (!s.sim) {
  log('in-process engine baseline');
  baseline = await inProcess(s);
  if (baseline.gsamplesPerS === null) notes.push(`in-process baseline not measured: ${baseline.reason}`);
  else log(`in process: ${baseline.gsamplesPerS.toFixed(3)} Gsamples/s on ${baseline.device}`);
}
results.inProcess = baseline;
const noSweep: SweepPart = {
  ready: false,
  rows: [],
  rps64: null,
  p99At64: null,
  gsamplesPerS: null,
  batchItemsPerS: null,
  lost: 0,
  fiveXX: 0,
  serveExit: null,
  metricsSample: [],
};
const sweep = s.run.sweep ? await runSweep(s, ROOT, PORT, notes, log) : noSweep;
const rows: SweepRow[] = [...sweep.rows];
results.tscudaMetricsSample = sweep.metricsSample;

// ---- 3. floors, 4. fusing -------------------------------------------------------------------
let floors: FloorPart | null = null;
if (s.run.floors) {
  log(
    `floor rows at ${[...new Set([...s.floorWorkers, s.defaultWorkers])].join(', ')} processes (default here: ${s.defaultWorkers})`,
  );
  floors = await runFloorPart({
    root: ROOT,
    basePort: PORT + 10,
    workerCounts: s.floorWorkers,
    defaultWorkers: s.defaultWorkers,
    floorSweep: s.floorSweep,
    sim: s.sim,
    lanes: 4,
    serveArgs: s.floorServeArgs,
    stepS: s.floorStepS,
    reps: s.reps,
    clientProcesses: s.clientProcesses,
    log,
    verbose: s.verbose,
  });
  notes.push(...floors.notes);
}
const fusion: FusionRow[] | null = s.run.fusion ? await runFusionRows(s, ROOT, PORT + 60, notes, log) : null;

// ---- 5. overload ----------------------------------------------------------------------------
const overloadOptions = {
  root: ROOT,
  port: PORT + 1,
  quick: s.quick,
  verbose: s.verbose,
  maxLag: s.overloadMaxLag,
  maxTurn: s.overloadMaxTurn,
  sweepBest: Math.max(0, ...rows.filter((r) => r.server === 'tscuda').map((r) => r.throughputRps)),
  log,
  notes,
};
const { overload, stress } =
  s.run.overload && sweep.ready ? await runOverload(overloadOptions) : { overload: null, stress: null };

// ---- 6. Python peer -------------------------------------------------------------------------
const py: PythonPart = { rps64: null, p99At64: null, gsamplesPerS: null, version: null };
if (s.run.python) {
  const { service, hello } = await startPython(ROOT, PORT + 2, s.verbose);
  if (!hello.ready) {
    notes.push(`Python peer not run: ${hello.reason}`);
    log(`Python peer not run: ${hello.reason}`);
  } else {
    py.version = `${hello.backend} ${hello.version}`;
    const req = stftRequest(service.base, RPS_MIX);
    const smoke = await send(req, new Agent(), '', true);
    if (smoke.status !== 200)
      notes.push(`Python smoke request: status ${smoke.status} ${smoke.body.toString().slice(0, 200)}`);
    await autocannonStep(req, 8, 1);
    for (const c of s.sweep) {
      const row = await step(s, 'python', req, c, false, s.sweepLoad, log);
      rows.push(row);
      if (c === 64) {
        py.rps64 = row.throughputRps;
        py.p99At64 = row.p99Ms;
      }
    }
    const tp = await step(
      s,
      'python-throughput',
      stftRequest(service.base, THROUGHPUT_MIX),
      s.throughputConcurrency,
      false,
      'loop',
      log,
    );
    rows.push(tp);
    py.gsamplesPerS = (tp.throughputRps * THROUGHPUT_MIX.batch * THROUGHPUT_MIX.n) / 1e9;
  }
  await service.stop(5000);
}

// ---- 7. fault run ---------------------------------------------------------------------------
const faultOutcome =
  s.run.fault && sweep.ready
    ? await runFault({
        root: ROOT,
        port: PORT + 3,
        workers: s.faultWorkers,
        standby: s.faultStandby,
        durationS: s.faultS,
        quick: s.quick,
        verbose: s.verbose,
        log,
        notes,
      })
    : { fault: null, unanswered: null, recoveryS: null };

// ---- results --------------------------------------------------------------------------------
const metrics = s.run.sweep
  ? headlineMetrics(s, sweep, py, floors?.rows ?? [], baseline.gsamplesPerS, faultOutcome)
  : [];
Object.assign(results, {
  device: baseline.device,
  python: py.version,
  metrics,
  sweep: rows,
  floors,
  fusion,
  overload,
  stress,
  fault: faultOutcome.fault,
  serveExitCode: sweep.serveExit,
  fiveXX: sweep.fiveXX,
  notes,
  durationS: (performance.now() - started) / 1000,
});

const clients = `closed loops of node:http clients over ${s.clientProcesses} client processes`;
const md: string[] = [
  s.sim
    ? `# tscuda serve against its HTTP floor, simulated engine — ${hostname()} (${s.cpus} CPUs), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`
    : `# tscuda serve under load — ${baseline.device}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`,
  '',
  s.sim
    ? `Loopback, ${clients}, ${s.floorStepS} s per step, ${s.reps} alternation(s) per row. tscuda serve's workers run the real HTTP path (fastify, body readers, shedding, codec, metrics) over a simulated GPU as fast as an H100 in process (bench/serve/sim-worker.ts): what is measured is the server's cost per request against Node's transport alone.`
    : `Loopback, ${s.sweepLoad === 'loop' ? clients : `autocannon (the throughput rows: ${clients})`}, ${s.stepS} s per step; /v1/stft binary bodies of ${RPS_MIX.batch} x ${RPS_MIX.n} f32 (sweep) and ${THROUGHPUT_MIX.batch} x ${THROUGHPUT_MIX.n} (throughput); tscuda serve --workers ${s.workers} --lanes 4 (the throughput row also with --workers ${s.throughputWorkers}); Python peer: aiohttp + ${py.version ?? 'not run'}.`,
  '',
  ...(metrics.length > 0 ? sweepMarkdown(metrics, rows) : []),
  ...(floors === null ? [] : floorMarkdown(floors)),
  ...(fusion === null ? [] : fusionMarkdown(fusion)),
  ...(overload === null ? [] : overloadMarkdown(overload, stress, overloadOptions)),
  ...(faultOutcome.fault === null ? [] : faultMarkdown(faultOutcome.fault)),
];
if (notes.length > 0) md.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
const dir = process.env.TSCUDA_BENCH_OUT ?? join(ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
const name = s.sim ? `serve-sim-${gpuSlug(hostname())}` : `serve-${gpuSlug(baseline.device)}`;
const base = join(dir, `${name}-${yyyymmdd(new Date())}`);
writeFileSync(`${base}.json`, JSON.stringify(results, null, 2) + '\n');
writeFileSync(`${base}.md`, md.join('\n'));
console.log(md.join('\n'));
log(`wrote ${base}.json and .md in ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(0);
