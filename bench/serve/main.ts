/**
 * The serve load bench (issue 12): `npx tsx bench/serve/main.ts [--duration S] [--quick]`.
 *
 * 1. in process: the engine alone on the throughput job mix (the HTTP-overhead reference);
 * 2. `tscuda serve` under closed loops of node:http clients over several client processes (autocannon
 *    with --sweep-load autocannon): the /v1/stft sweep over concurrency 1, 8, 64, 256 with
 *    perf_analyzer's columns, the throughput mix, the batch endpoint;
 * 3. overload: an open loop at twice one worker's capacity against a small queue: 429s come
 *    fast, accepted requests meet their timeout, memory stays bounded; then 512 closed-loop
 *    clients as a stress;
 * 4. the Python peer (aiohttp + PyTorch/CuPy) under the same sweep;
 * 5. the fault run: faults injected every few seconds under load (bench-only fault stage).
 * Writes serve-<gpu>-<date>.json and .md to $TSCUDA_BENCH_OUT (else bench/results/).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { yyyymmdd } from '../harness/naming.js';
import { percentile } from '../harness/stats.js';
import type { LoadSample } from '../../src/server/index.js';
import { gpuSlug } from '../report/slug.js';
import { asciiSignal, autocannonStep, closedLoop, closedLoopStep, openLoopProcesses, send, type LoadRequest, type LoopReport, type SweepRow } from './load.js';
import { gauge, startFaultService, startPython, startTscuda, waitReady, type Service } from './services.js';

const ROOT = join(import.meta.dirname, '..', '..');

const { values } = parseArgs({
  options: {
    duration: { type: 'string' },
    quick: { type: 'boolean' },
    concurrency: { type: 'string' },
    workers: { type: 'string' },
    'fault-workers': { type: 'string' },
    'fault-standby': { type: 'string' },
    'fault-duration': { type: 'string' },
    'no-python': { type: 'boolean' },
    'no-fault': { type: 'boolean' },
    'no-overload': { type: 'boolean' },
    'overload-max-lag': { type: 'string' },
    'overload-max-turn': { type: 'string' },
    'sweep-load': { type: 'string' },
    'throughput-concurrency': { type: 'string' },
    'throughput-workers': { type: 'string' },
    'client-processes': { type: 'string' },
    verbose: { type: 'boolean' },
    help: { type: 'boolean' },
  },
});
if (values.help === true) {
  console.log(`usage: npx tsx bench/serve/main.ts [options]
  --duration S        seconds per load step (default 5; --quick 2)
  --quick             short steps, 12 s fault run (about 1.5 minutes in all)
  --concurrency L     sweep, default 1,8,64,256
  --workers N         tscuda serve workers for the sweep (default 1)
  --fault-workers N   workers in the fault run (default 2)
  --fault-standby N   standby workers in the fault run (default 0: replacement by a new process; standby is experimental)
  --fault-duration S  fault run length (default 30; --quick 12)
  --no-python, --no-fault, --no-overload   skip a part
  --overload-max-lag MS  the overload server's --max-lag (default: tscuda serve's, 50)
  --overload-max-turn MS the overload server's --max-turn (default: tscuda serve's, 25)
  --sweep-load L         the sweep's client: loop (default; node:http closed loops over client processes) or autocannon
  --throughput-concurrency C  clients of the throughput rows and of the in-process reference (default 16)
  --throughput-workers N      tscuda serve workers of the serve_stft_gsamples_per_s row (default 2; the sweep's server is measured there too)
  --client-processes P        client processes of the throughput rows' closed loop (default 4)
  --verbose           forward the servers' stderr
Writes serve-<gpu>-<yyyymmdd>.{json,md} to $TSCUDA_BENCH_OUT, else bench/results/.`);
  process.exit(0);
}
const quick = values.quick === true;
const stepS = Number(values.duration ?? (quick ? 2 : 5));
const sweep = (values.concurrency ?? '1,8,64,256').split(',').map(Number);
const workers = Number(values.workers ?? 1);
const faultWorkers = Number(values['fault-workers'] ?? 2);
const faultStandby = Number(values['fault-standby'] ?? 0);
const faultS = Number(values['fault-duration'] ?? (quick ? 12 : 30));
const verbose = values.verbose === true;
const log = (line: string): void => console.error(`[serve-bench] ${line}`);

// ---- the job mixes -------------------------------------------------------------------------
/** Requests per second: small jobs (4 x 4096), where the per-request overhead shows. */
const RPS_MIX = { batch: 4, n: 4096, fs: 1000, passBand: [20, 200] as const, previewBins: 64 };
/** Samples per second: 16 x 65536 (4 MiB bodies), where the HTTP overhead is bounded by copies. */
const THROUGHPUT_MIX = { batch: 16, n: 65536, fs: 1000, passBand: [20, 200] as const, previewBins: 256 };
const THROUGHPUT_CONCURRENCY = Number(values['throughput-concurrency'] ?? 16);
/**
 * Workers of the server whose throughput row is serve_stft_gsamples_per_s: one Node process
 * tops out near 0.19 Gsamples/s of this mix (its main thread busy ~65 %: writing the 4 MiB answers
 * into sockets, copying bodies, GC), so a deployment for throughput runs two per GPU.
 */
const THROUGHPUT_WORKERS = Number(values['throughput-workers'] ?? 2);
/** Client processes of the closed loops of the throughput rows: one caps near 280 requests/s of 4 MiB (bare node:http server, H100 host). */
const CLIENT_PROCESSES = Number(values['client-processes'] ?? 4);
/** autocannon threads at concurrency 64 and above, so one client thread is not the bottleneck. */
const CLIENT_THREADS = 4;
const BATCH_ITEMS = 32;
const BATCH_DIM = 64;

function randomSignal(n: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = Math.sin(i * 0.05) + (Math.random() - 0.5) * 0.2;
  return a;
}

function stftRequest(base: string, mix: typeof RPS_MIX, extraFlags = ''): LoadRequest {
  const data = asciiSignal(mix.batch * mix.n);
  return {
    base,
    path: `/v1/stft?dtype=f32&batch=${mix.batch}&fs=${mix.fs}&passBand=${mix.passBand.join(',')}&previewBins=${mix.previewBins}${extraFlags}`,
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
    body: Buffer.from(data.buffer),
  };
}

async function scrape(base: string): Promise<string> {
  try {
    return await (await fetch(`${base}/metrics`)).text();
  } catch {
    return '';
  }
}

/**
 * The sweep's client (--sweep-load): the node:http closed loops of the throughput rows, over
 * CLIENT_PROCESSES processes, or autocannon. Loops by default: against the same tscuda server on an
 * H100 host autocannon topped out first (c=1: 417 req/s against 1346 with the loops; c=64: 2106
 * against 3006), while the Python peer, bound by its server, measured alike under both.
 */
const SWEEP_LOAD: 'autocannon' | 'loop' = (() => {
  const v = values['sweep-load'] ?? 'loop';
  if (v !== 'autocannon' && v !== 'loop') throw new Error(`--sweep-load must be autocannon or loop, got ${JSON.stringify(v)}`);
  return v;
})();

/**
 * One load step against a server, with the server's own event-loop lag and GPU busy fraction
 * (tscuda's /metrics) around it. `load`: node:http's closed loops over client processes (always
 * for the multi-megabyte bodies of the throughput mix, which autocannon re-sends slowly enough to
 * bound both servers at the same few requests per second: 8 req/s each on 2026-11-23), or autocannon.
 */
async function step(name: string, req: LoadRequest, concurrency: number, durationS: number, isTscuda: boolean, load: 'autocannon' | 'loop' = 'autocannon'): Promise<SweepRow> {
  if (isTscuda) await scrape(req.base); // resets the event-loop window
  const r =
    load === 'autocannon'
      ? await autocannonStep(req, concurrency, durationS, concurrency >= 64 ? CLIENT_THREADS : 1)
      : await closedLoopStep(req, concurrency, durationS, CLIENT_PROCESSES);
  const metrics = isTscuda ? await scrape(req.base) : '';
  const lag = isTscuda ? gauge(metrics, 'tscuda_event_loop_delay_seconds', 'stat="p99"') : null;
  const busy = isTscuda ? gauge(metrics, 'tscuda_gpu_busy_fraction') : null;
  const row: SweepRow = { server: name, ...r, eventLoopLagP99Ms: lag === null ? null : lag * 1000, gpuBusyFraction: busy };
  log(
    `${name} c=${concurrency} (${load}): ${row.throughputRps.toFixed(0)} req/s, p50 ${row.p50Ms} ms, p90 ${row.p90Ms} ms, p99 ${row.p99Ms} ms, errors ${row.errors}, non-2xx ${row.non2xx}`,
  );
  return row;
}

// ---- 1. in process --------------------------------------------------------------------------
async function inProcess(): Promise<{ gsamplesPerS: number | null; device: string; reason?: string }> {
  try {
    const { JobEngine } = await import('../../src/engine/index.js');
    const { Device } = await import('../../src/runtime/index.js');
    const engine = new JobEngine({ lanes: 4, label: 'bench-inprocess' });
    const mix = THROUGHPUT_MIX;
    const data = randomSignal(mix.batch * mix.n);
    const spec = { data, batch: mix.batch, fs: mix.fs, flags: ['stft'] as const, passBand: mix.passBand, previewBins: mix.previewBins };
    await engine.submit({ ...spec, flags: ['stft'] }).result; // warm-up: plans, buffers
    let samples = 0;
    const t0 = performance.now();
    const deadline = t0 + stepS * 1000;
    await Promise.all(
      Array.from({ length: THROUGHPUT_CONCURRENCY }, async () => {
        while (performance.now() < deadline) {
          // Fresh arrays like the server's (one per request body), not engine-lent pinned ones.
          await engine.submit({ ...spec, data: data.slice(), flags: ['stft'] }).result;
          samples += data.length;
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    await engine.close();
    return { gsamplesPerS: samples / seconds / 1e9, device: Device.get(0).name };
  } catch (e) {
    return { gsamplesPerS: null, device: 'unknown', reason: (e as Error).message };
  }
}

// ---- main -----------------------------------------------------------------------------------
const started = performance.now();
const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  settings: {
    stepS,
    sweep,
    workers,
    faultWorkers,
    faultS,
    rpsMix: RPS_MIX,
    throughputMix: THROUGHPUT_MIX,
    throughputConcurrency: THROUGHPUT_CONCURRENCY,
    batchItems: BATCH_ITEMS,
    batchDim: BATCH_DIM,
  },
};
const rows: SweepRow[] = [];
const notes: string[] = [];

log('in-process engine baseline');
const baseline = await inProcess();
results.inProcess = baseline;
if (baseline.gsamplesPerS === null) notes.push(`in-process baseline not measured: ${baseline.reason}`);
else log(`in process: ${baseline.gsamplesPerS.toFixed(3)} Gsamples/s on ${baseline.device}`);

let tscudaRps64: number | null = null;
let tscudaP99: number | null = null;
let tscudaGs: number | null = null;
let batchItemsPerS: number | null = null;
let lost = 0;
let fiveXX = 0;
let serveExit: number | null = null;

const PORT = 18_400 + Math.floor(Math.random() * 500);
const tscuda = startTscuda(ROOT, PORT, ['--workers', String(workers), '--lanes', '4', '--max-queued', '1024'], verbose);
const ready = await waitReady(tscuda.base, 90_000, tscuda.child);
if (!ready.ready) {
  notes.push(`tscuda serve not ready: ${ready.reason}`);
  log(`tscuda serve not ready: ${ready.reason}`);
  await tscuda.stop();
} else {
  const smoke = await send(stftRequest(tscuda.base, RPS_MIX), new Agent(), '', true);
  if (smoke.status !== 200 || smoke.body.byteLength !== 4 * RPS_MIX.batch * (RPS_MIX.n + RPS_MIX.previewBins))
    notes.push(`tscuda smoke request: status ${smoke.status}, ${smoke.body.byteLength} bytes`);
  const req = stftRequest(tscuda.base, RPS_MIX);
  await autocannonStep(req, 8, 1); // warm-up
  for (const c of sweep) {
    const row = await step('tscuda', req, c, stepS, true, SWEEP_LOAD);
    rows.push(row);
    lost += row.errors + row.timeouts;
    if (c === 64) {
      tscudaRps64 = row.throughputRps;
      tscudaP99 = row.p99Ms;
    }
  }
  const tp = await step(`tscuda-throughput (${workers} worker${workers === 1 ? '' : 's'})`, stftRequest(tscuda.base, THROUGHPUT_MIX), THROUGHPUT_CONCURRENCY, stepS, true, 'loop');
  rows.push(tp);
  if (THROUGHPUT_WORKERS === workers) tscudaGs = (tp.throughputRps * THROUGHPUT_MIX.batch * THROUGHPUT_MIX.n) / 1e9;
  lost += tp.errors + tp.timeouts;
  const items = Array.from({ length: BATCH_ITEMS }, () => Array.from(randomSignal(BATCH_DIM)));
  const batchReq: LoadRequest = {
    base: tscuda.base,
    path: '/v1/batch/gradient',
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/octet-stream' },
    body: Buffer.from(JSON.stringify({ items })),
  };
  const br = await step('tscuda-batch', batchReq, 64, stepS, true, SWEEP_LOAD);
  rows.push(br);
  batchItemsPerS = br.throughputRps * BATCH_ITEMS;
  if (br.non2xx > 0) notes.push(`batch endpoint: ${br.non2xx} non-2xx responses`);
  const metricsText = await scrape(tscuda.base);
  fiveXX = rows.filter((r) => r.server.startsWith('tscuda')).reduce((a, r) => a + r.status5xx, 0);
  results.tscudaMetricsSample = metricsText.split('\n').filter((l) => l.startsWith('tscuda_request_failure_total') || l.startsWith('tscuda_request_success_total'));
  serveExit = await tscuda.stop();
  log(`tscuda serve stopped with exit code ${serveExit}`);
  if (THROUGHPUT_WORKERS !== workers) {
    const svc = startTscuda(ROOT, PORT + 4, ['--workers', String(THROUGHPUT_WORKERS), '--lanes', '4', '--max-queued', '1024'], verbose);
    const up = await waitReady(svc.base, 90_000, svc.child);
    if (!up.ready) notes.push(`tscuda serve --workers ${THROUGHPUT_WORKERS} not ready: ${up.reason}`);
    else {
      const treq = stftRequest(svc.base, THROUGHPUT_MIX);
      await closedLoopStep(treq, THROUGHPUT_CONCURRENCY, 1, CLIENT_PROCESSES); // warm-up: every worker's plans and pools
      const row = await step(`tscuda-throughput (${THROUGHPUT_WORKERS} workers)`, treq, THROUGHPUT_CONCURRENCY, stepS, true, 'loop');
      rows.push(row);
      tscudaGs = (row.throughputRps * THROUGHPUT_MIX.batch * THROUGHPUT_MIX.n) / 1e9;
      lost += row.errors + row.timeouts;
      fiveXX += row.status5xx;
    }
    const code = await svc.stop();
    if (code !== 0) notes.push(`tscuda serve --workers ${THROUGHPUT_WORKERS} exited with ${code}`);
  }
}

// ---- 3. overload ------------------------------------------------------------------------------
/** Requests in progress beyond which the overload server answers 429. */
const OVERLOAD_MAX_PENDING = 128;
/** Connections of the open loop: more than the server admits (OVERLOAD_MAX_PENDING), so admission, not the client, decides. */
const OVERLOAD_CONNECTIONS = 2048;
/** Client processes of the open loop: thousands of requests/s of 64 KiB each way need several. */
const OVERLOAD_CLIENT_PROCESSES = 8;
const overloadLagArgs = [
  ...(values['overload-max-lag'] === undefined ? [] : ['--max-lag', values['overload-max-lag']]),
  ...(values['overload-max-turn'] === undefined ? [] : ['--max-turn', values['overload-max-turn']]),
];
/** A worker's memory from /v1/info, MiB. */
interface WorkerMemory {
  rss: number;
  heapUsed: number;
  external: number;
}
/** What load shedding did during the overload run, from the worker's load trace. */
interface SheddingSummary {
  samples: number;
  /** Share of new work admitted: its smallest and median value over the run. */
  minShare: number;
  medianShare: number;
  /** Event-loop delay, ms, and utilization: medians over the run. */
  medianLagMs: number;
  medianUtilization: number;
  admitted: number;
  /** Refused by the admitted share (admission.ts), and within long loop turns (turn-budget.ts). */
  refused: number;
  refusedInLongTurns: number;
}
type OverloadReport = LoopReport & {
  before: WorkerMemory | null;
  after: WorkerMemory | null;
  timeoutMs: number;
  ratePerS: number;
  capacityRps: number;
  shedding: SheddingSummary | null;
};

/** Sums up the `load-trace` lines a worker wrote after `from` (performance.now()). */
function sheddingSummary(lines: readonly { at: number; text: string }[], from: number): SheddingSummary | null {
  const samples = lines.filter((l) => l.at >= from && l.text.startsWith('load-trace ')).map((l) => JSON.parse(l.text.slice(l.text.indexOf('{'))) as LoadSample);
  if (samples.length === 0) return null;
  const median = (xs: number[]): number => percentile(xs, 0.5);
  return {
    samples: samples.length,
    minShare: Math.min(...samples.map((x) => x.share)),
    medianShare: median(samples.map((x) => x.share)),
    medianLagMs: median(samples.map((x) => x.lagMs)),
    medianUtilization: median(samples.map((x) => x.utilization)),
    admitted: samples.reduce((n, x) => n + x.admitted, 0),
    refused: samples.reduce((n, x) => n + x.refused, 0),
    refusedInLongTurns: samples.reduce((n, x) => n + x.refusedInLongTurns, 0),
  };
}
let overload: OverloadReport | null = null;
/** The same server under 512 closed-loop clients (each resends at once): a stress, reported beside the goal. */
let stress: (LoopReport & { concurrency: number }) | null = null;
if (values['no-overload'] !== true && ready.ready) {
  const port = PORT + 1;
  const timeoutMs = 2000;
  // The overload server traces each look load shedding takes at its loop (share admitted, delay, utilization).
  process.env.TSCUDA_SERVE_LOAD_TRACE = '1';
  const svc = startTscuda(
    ROOT,
    port,
    ['--workers', '1', '--lanes', '4', '--max-queued', '64', '--max-pending', String(OVERLOAD_MAX_PENDING), '--timeout', String(timeoutMs), ...overloadLagArgs],
    verbose,
  );
  delete process.env.TSCUDA_SERVE_LOAD_TRACE;
  if ((await waitReady(svc.base, 90_000, svc.child)).ready) {
    const memory = async (): Promise<WorkerMemory | null> => {
      try {
        const info = (await (await fetch(`${svc.base}/v1/info`)).json()) as { rssBytes: number; heapUsedBytes: number; externalBytes: number };
        return { rss: info.rssBytes / 2 ** 20, heapUsed: info.heapUsedBytes / 2 ** 20, external: info.externalBytes / 2 ** 20 };
      } catch {
        return null;
      }
    };
    const before = await memory();
    // 2x overload as perf_analyzer's --request-rate offers it: requests arrive at twice the
    // worker's capacity, whatever the answers do. The capacity is the larger of the sweep's best
    // throughput and the 200s per second it answers in an open loop offered four times that (a
    // closed loop of 64 clients can leave it partly idle); the larger, so that shedding more
    // cannot make the overload it is tested with smaller.
    const sweepBest = Math.max(1, ...rows.filter((r) => r.server === 'tscuda').map((r) => r.throughputRps));
    const probeS = 2;
    const probe = await openLoopProcesses(stftRequest(svc.base, RPS_MIX), 4 * sweepBest, OVERLOAD_CONNECTIONS, probeS, OVERLOAD_CLIENT_PROCESSES);
    const capacityRps = Math.max(sweepBest, (probe.byStatus['200'] ?? 0) / (probe.elapsedS ?? probeS));
    log(`overload capacity probe at ${(4 * sweepBest).toFixed(0)} req/s: ${JSON.stringify(probe.byStatus)} -> ${capacityRps.toFixed(0)} req/s`);
    await new Promise((r) => setTimeout(r, 1000)); // the probe's backlog drains
    const ratePerS = 2 * capacityRps;
    const traceFrom = performance.now();
    const report = await openLoopProcesses(stftRequest(svc.base, RPS_MIX), ratePerS, OVERLOAD_CONNECTIONS, quick ? 4 : 8, OVERLOAD_CLIENT_PROCESSES);
    const after = await memory();
    overload = { ...report, before, after, timeoutMs, ratePerS, capacityRps, shedding: sheddingSummary(svc.lines, traceFrom) };
    const traceDir = process.env.TSCUDA_BENCH_OUT;
    if (traceDir !== undefined) writeFileSync(join(traceDir, 'overload-trace.log'), svc.lines.map((l) => `${(l.at - traceFrom).toFixed(0)} ${l.text}`).join('\n') + '\n');
    log(
      `overload (open loop, ${ratePerS.toFixed(0)} req/s): ${JSON.stringify(report.byStatus)}, unanswered ${JSON.stringify(report.unanswered)}, RSS ${before?.rss.toFixed(0)} -> ${after?.rss.toFixed(0)} MiB`,
    );
    const concurrency = 512;
    stress = { ...(await closedLoop(stftRequest(svc.base, RPS_MIX), concurrency, quick ? 4 : 8, { backoffMs: 5, warmPath: '/v2/health/live' })), concurrency };
    log(`stress (${concurrency} closed-loop clients): ${JSON.stringify(stress.byStatus)}, unanswered ${JSON.stringify(stress.unanswered)}`);
  } else notes.push('overload server did not become ready');
  await svc.stop();
}

// ---- 4. Python peer -------------------------------------------------------------------------
let pyRps64: number | null = null;
let pyP99: number | null = null;
let pyGs: number | null = null;
let pyVersion: string | null = null;
if (values['no-python'] !== true) {
  const { service, hello } = await startPython(ROOT, PORT + 2, verbose);
  if (!hello.ready) {
    notes.push(`Python peer not run: ${hello.reason}`);
    log(`Python peer not run: ${hello.reason}`);
  } else {
    pyVersion = `${hello.backend} ${hello.version}`;
    const req = stftRequest(service.base, RPS_MIX);
    const smoke = await send(req, new Agent(), '', true);
    if (smoke.status !== 200) notes.push(`Python smoke request: status ${smoke.status} ${smoke.body.toString().slice(0, 200)}`);
    await autocannonStep(req, 8, 1);
    for (const c of sweep) {
      const row = await step('python', req, c, stepS, false, SWEEP_LOAD);
      rows.push(row);
      if (c === 64) {
        pyRps64 = row.throughputRps;
        pyP99 = row.p99Ms;
      }
    }
    const tp = await step('python-throughput', stftRequest(service.base, THROUGHPUT_MIX), THROUGHPUT_CONCURRENCY, stepS, false, 'loop');
    rows.push(tp);
    pyGs = (tp.throughputRps * THROUGHPUT_MIX.batch * THROUGHPUT_MIX.n) / 1e9;
  }
  await service.stop(5000);
}

// ---- 5. fault run -----------------------------------------------------------------------------
let fault: Record<string, unknown> | null = null;
let faultUnanswered: number | null = null;
let faultRecoveryS: number | null = null;
if (values['no-fault'] !== true && ready.ready) {
  const port = PORT + 3;
  const svc: Service = startFaultService(ROOT, port, faultWorkers, verbose, faultStandby);
  if ((await waitReady(svc.base, 90_000, svc.child)).ready) {
    const everyS = quick ? 4 : 5;
    const faultReq = stftRequest(svc.base, RPS_MIX, '&flags=stft,fault');
    const faultAgent = new Agent({ keepAlive: false });
    const injected: { at: number; status: number; error?: string }[] = [];
    const lostCount = (): number => svc.lines.filter((l) => l.text.includes('lost its GPU context')).length;
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    const t0 = performance.now();
    // Every `everyS`, one request with the fault stage; resent while it only met a worker that is
    // already leaving (a 503 without a new loss in the supervisor's log).
    const injector = (async () => {
      await sleep(1500);
      while ((performance.now() - t0) / 1000 < faultS - 3) {
        const before = lostCount();
        const at = performance.now();
        const r = await send(faultReq, faultAgent);
        await sleep(500);
        if (lostCount() > before || r.status === 0) {
          injected.push({ at, status: r.status, ...(r.error === undefined ? {} : { error: r.error }) });
          await sleep(everyS * 1000 - 500);
        } else await sleep(200);
      }
    })();
    const report = await closedLoop(stftRequest(svc.base, RPS_MIX), 32, faultS, { backoffMs: 20 });
    await injector;
    // Recovery of each fault: from the faulting request to its replacement listening, then ready.
    const lostLines = svc.lines.filter((l) => l.text.includes('lost its GPU context'));
    const listenLines = svc.lines.filter((l) => l.text.includes('listening on'));
    const recoveries = injected
      .sort((a, b) => a.at - b.at)
      .map((f) => {
        const lostAt = lostLines.find((l) => l.at >= f.at);
        const back = lostAt === undefined ? undefined : listenLines.find((l) => l.at >= lostAt.at);
        return back === undefined ? null : (back.at - f.at) / 1000;
      });
    const finalReady = await waitReady(svc.base, 10_000, svc.child);
    const exit = await svc.stop();
    const unanswered = Object.values(report.unanswered).reduce((a, b) => a + b, 0) + injected.filter((f) => f.status === 0).length;
    faultUnanswered = unanswered;
    const measured = recoveries.filter((r): r is number => r !== null);
    faultRecoveryS = measured.length === recoveries.length && measured.length > 0 ? Math.max(...measured) : null;
    fault = {
      workers: faultWorkers,
      durationS: faultS,
      clients: 32,
      faults: injected.length,
      faultResponses: injected.map((f) => f.status),
      contextsLost: lostLines.length,
      recoveriesS: recoveries,
      load: report,
      readyAtEnd: finalReady.ready,
      exitCode: exit,
    };
    log(
      `fault run: ${injected.length} faults, ${lostLines.length} contexts lost, recoveries ${JSON.stringify(recoveries.map((r) => r?.toFixed(2)))} s, responses ${JSON.stringify(report.byStatus)}, unanswered ${JSON.stringify(report.unanswered)}`,
    );
    if (faultRecoveryS === null) notes.push('fault run: a fault without a matching loss and replacement in the supervisor log');
  } else {
    notes.push('fault service did not become ready');
    await svc.stop();
  }
}

// ---- results --------------------------------------------------------------------------------
interface Metric {
  name: string;
  unit: string;
  tscuda: number | null;
  python: number | null;
  goal: string;
  pass: boolean | null;
}
const ratio = (a: number | null, b: number | null): number | null => (a === null || b === null || b === 0 ? null : a / b);
const metrics: Metric[] = [
  {
    name: 'serve_stft_rps',
    unit: 'req/s at c=64',
    tscuda: tscudaRps64,
    python: pyRps64,
    goal: '>= 2x Python',
    pass: ratio(tscudaRps64, pyRps64) === null ? null : ratio(tscudaRps64, pyRps64)! >= 2,
  },
  { name: 'serve_stft_p99_ms', unit: 'ms at c=64', tscuda: tscudaP99, python: pyP99, goal: '<= Python', pass: tscudaP99 === null || pyP99 === null ? null : tscudaP99 <= pyP99 },
  {
    name: 'serve_stft_gsamples_per_s',
    unit: `Gsamples/s (${THROUGHPUT_MIX.batch}x${THROUGHPUT_MIX.n}, c=${THROUGHPUT_CONCURRENCY}, tscuda serve --workers ${THROUGHPUT_WORKERS}; Python one process)`,
    tscuda: tscudaGs,
    python: pyGs,
    goal: `>= 0.7 x in-process ${baseline.gsamplesPerS?.toFixed(3) ?? '?'}`,
    pass: tscudaGs === null || baseline.gsamplesPerS === null ? null : tscudaGs >= 0.7 * baseline.gsamplesPerS,
  },
  {
    name: 'serve_batch_items_per_s',
    unit: `items/s (${BATCH_ITEMS} x dim ${BATCH_DIM} per request, c=64)`,
    tscuda: batchItemsPerS,
    python: null,
    goal: 'measured',
    pass: batchItemsPerS === null ? null : batchItemsPerS > 0,
  },
  {
    name: 'serve_lost_requests',
    unit: 'requests without a response (sweep)',
    tscuda: ready.ready ? lost : null,
    python: null,
    goal: '0, and zero 5xx',
    pass: ready.ready ? lost === 0 && fiveXX === 0 : null,
  },
  {
    name: 'serve_fault_unanswered',
    unit: 'requests without a response (fault run)',
    tscuda: faultUnanswered,
    python: null,
    goal: '0',
    pass: faultUnanswered === null ? null : faultUnanswered === 0,
  },
  {
    name: 'serve_fault_recovery_s',
    unit: 's, worst fault to replacement serving',
    tscuda: faultRecoveryS,
    python: null,
    goal: '<= 5',
    pass: faultRecoveryS === null ? null : faultRecoveryS <= 5,
  },
];
Object.assign(results, {
  device: baseline.device,
  python: pyVersion,
  metrics,
  sweep: rows,
  overload,
  stress,
  fault,
  serveExitCode: serveExit,
  fiveXX,
  notes,
  durationS: (performance.now() - started) / 1000,
});

const fmt = (v: number | null, digits = 2): string => (v === null ? '—' : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(digits));
const md: string[] = [
  `# tscuda serve under load — ${baseline.device}, ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Loopback, ${SWEEP_LOAD === 'loop' ? `closed loops of node:http clients over ${CLIENT_PROCESSES} client processes` : `autocannon (the throughput rows: a node:http closed loop over ${CLIENT_PROCESSES} client processes)`}, ${stepS} s per step; /v1/stft binary bodies of ${RPS_MIX.batch} x ${RPS_MIX.n} f32 (sweep) and ${THROUGHPUT_MIX.batch} x ${THROUGHPUT_MIX.n} (throughput); tscuda serve --workers ${workers} --lanes 4 (the throughput row also with --workers ${THROUGHPUT_WORKERS}); Python peer: aiohttp + ${pyVersion ?? 'not run'}.`,
  '',
  '| metric | unit | tscuda | Python peer | goal | met |',
  '| --- | --- | ---: | ---: | --- | --- |',
  ...metrics.map((m) => `| ${m.name} | ${m.unit} | ${fmt(m.tscuda)} | ${fmt(m.python)} | ${m.goal} | ${m.pass === null ? 'not measured' : m.pass ? 'yes' : 'no'} |`),
  '',
  '## Sweep (perf_analyzer columns)',
  '',
  '| server | concurrency | throughput (req/s) | p50 ms | p90 ms | p99 ms | errors | non-2xx | event-loop lag p99 ms | GPU busy |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.server} | ${r.concurrency} | ${r.throughputRps.toFixed(0)} | ${r.p50Ms} | ${r.p90Ms} | ${r.p99Ms} | ${r.errors} | ${r.non2xx} | ${r.eventLoopLagP99Ms === null ? '—' : r.eventLoopLagP99Ms.toFixed(1)} | ${r.gpuBusyFraction === null ? '—' : r.gpuBusyFraction.toFixed(2)} |`,
  ),
  '',
];
if (overload !== null) {
  const rounded = (_k: string, v: unknown): unknown => (typeof v === 'number' ? Number(v.toFixed(1)) : v);
  const rssGrowthMb = overload.before !== null && overload.after !== null ? overload.after.rss - overload.before.rss : null;
  const overloadVerdict = {
    rejectedFast: (overload.byStatus['429'] ?? 0) > 0 && (overload.latencyMs['429']?.p99 ?? Infinity) <= 100,
    acceptedInTime: (overload.latencyMs['200']?.p99 ?? Infinity) <= overload.timeoutMs,
    memoryBounded: rssGrowthMb !== null && rssGrowthMb < 256,
    rssGrowthMb,
  };
  md.push(
    '## Overload',
    '',
    `Open loop at ${overload.ratePerS.toFixed(0)} requests/s (2 x the worker's capacity, ${overload.capacityRps.toFixed(0)} req/s: the larger of the sweep's best and the 200s per second it answered in a 2 s open loop offered 4 x that), ${OVERLOAD_CONNECTIONS} connections over ${OVERLOAD_CLIENT_PROCESSES} client processes; --workers 1, --max-queued 64, --max-pending ${OVERLOAD_MAX_PENDING}, --max-lag ${values['overload-max-lag'] ?? '50 (default)'}, --max-turn ${values['overload-max-turn'] ?? '25 (default)'}, --timeout ${overload.timeoutMs} ms: responses ${JSON.stringify(overload.byStatus)}; without a response ${JSON.stringify(overload.unanswered)}; latency by status from each request's scheduled start ${JSON.stringify(overload.latencyMs, rounded)} (the client processes' own event-loop delay p99, worst process: ${fmt(overload.clientLagP99Ms ?? null, 1)} ms); server memory (MiB, before -> after) ${JSON.stringify(overload.before, rounded)} -> ${JSON.stringify(overload.after, rounded)}.`,
    '',
    `- excess answered 429 quickly: ${overloadVerdict.rejectedFast ? 'yes' : 'no'} (429 p99 ${fmt(overload.latencyMs['429']?.p99 ?? null, 1)} ms, goal <= 100 ms)`,
    `- accepted requests within their timeout: ${overloadVerdict.acceptedInTime ? 'yes' : 'no'} (200 p99 ${fmt(overload.latencyMs['200']?.p99 ?? null, 0)} ms, timeout ${overload.timeoutMs} ms)`,
    `- memory bounded: ${overloadVerdict.memoryBounded ? 'yes' : 'no'} (RSS grew ${fmt(overloadVerdict.rssGrowthMb, 0)} MiB, goal < 256 MiB)`,
    '',
    ...(overload.shedding === null
      ? []
      : [
          `Load shedding during the run (the worker's load trace, one look at its loop every 50 ms): share of new work admitted min ${overload.shedding.minShare.toFixed(2)}, median ${overload.shedding.medianShare.toFixed(2)}; loop delay median ${overload.shedding.medianLagMs.toFixed(1)} ms, utilization median ${overload.shedding.medianUtilization.toFixed(2)}; admitted ${overload.shedding.admitted}; refused as overload: ${overload.shedding.refused} by the admitted share, ${overload.shedding.refusedInLongTurns} within loop turns past --max-turn (${overload.shedding.samples} looks).`,
          '',
        ]),
    ...(stress === null
      ? []
      : [
          `Stress, the same server under ${stress.concurrency} closed-loop clients that resend 5 ms after a 429 (so the queue stays full: every request waits about ${stress.concurrency} / throughput, 429s too): responses ${JSON.stringify(stress.byStatus)}; without a response ${JSON.stringify(stress.unanswered)}; latency by status ${JSON.stringify(stress.latencyMs, rounded)}.`,
          '',
        ]),
  );
}
if (fault !== null) {
  md.push(
    '## Fault run',
    '',
    `${String(fault.workers)} workers, ${String(fault.durationS)} s, 32 clients, ${String(fault.faults)} faults injected (${String(fault.contextsLost)} contexts lost); recovery per fault ${JSON.stringify(fault.recoveriesS)} s; responses ${JSON.stringify((fault.load as LoopReport).byStatus)}; without a response ${JSON.stringify((fault.load as LoopReport).unanswered)}; 503 not marked retryable: ${(fault.load as LoopReport).nonRetryable503}; ready at the end: ${String(fault.readyAtEnd)}; exit code ${String(fault.exitCode)}.`,
    '',
  );
}
if (notes.length > 0) md.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
const dir = process.env.TSCUDA_BENCH_OUT ?? join(ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
const base = join(dir, `serve-${gpuSlug(baseline.device)}-${yyyymmdd(new Date())}`);
writeFileSync(`${base}.json`, JSON.stringify(results, null, 2) + '\n');
writeFileSync(`${base}.md`, md.join('\n'));
console.log(md.join('\n'));
log(`wrote ${base}.json and .md in ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(0);
