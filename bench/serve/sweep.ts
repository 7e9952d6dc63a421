/**
 * The serve bench's sweep part: the engine alone in process (the HTTP-overhead reference), then
 * `tscuda serve` under closed loops: the /v1/stft sweep over concurrency with perf_analyzer's
 * columns, the throughput mix (also with more workers), the batch endpoint; and the same sweep
 * against another server (the Python peer) through `step`.
 */
import { Agent } from 'node:http';
import { autocannonStep } from './autocannon-step.js';
import { send, type LoadRequest, type SweepRow } from './load.js';
import { closedLoopStep } from './load-processes.js';
import { RPS_MIX, THROUGHPUT_MIX, randomSignal, stftRequest } from './mixes.js';
import { gauge, scrape, startTscuda, waitReady } from './services.js';
import type { Settings } from './settings.js';

/** autocannon threads at concurrency 64 and above, so one client thread is not the bottleneck. */
const CLIENT_THREADS = 4;
/** Items per request of the batch endpoint's row, and their length. */
export const BATCH_ITEMS = 32;
export const BATCH_DIM = 64;

/**
 * One load step against a server, with the server's own event-loop lag and GPU busy fraction
 * (tscuda's /metrics) around it. `load`: node:http's closed loops over client processes (always
 * for the multi-megabyte bodies of the throughput mix, which autocannon re-sends slowly enough to
 * bound both servers at the same few requests per second: 8 req/s each on 2026-11-23), or autocannon.
 */
export async function step(
  s: Settings,
  name: string,
  req: LoadRequest,
  concurrency: number,
  isTscuda: boolean,
  load: 'autocannon' | 'loop',
  log: (l: string) => void,
): Promise<SweepRow> {
  if (isTscuda) await scrape(req.base); // resets the event-loop window
  const r =
    load === 'autocannon'
      ? await autocannonStep(req, concurrency, s.stepS, concurrency >= 64 ? CLIENT_THREADS : 1)
      : await closedLoopStep(req, concurrency, s.stepS, s.clientProcesses);
  const metrics = isTscuda ? await scrape(req.base) : '';
  const lag = isTscuda ? gauge(metrics, 'tscuda_event_loop_delay_seconds', 'stat="p99"') : null;
  const busy = isTscuda ? gauge(metrics, 'tscuda_gpu_busy_fraction') : null;
  const row: SweepRow = {
    server: name,
    ...r,
    eventLoopLagP99Ms: lag === null ? null : lag * 1000,
    gpuBusyFraction: busy,
  };
  log(
    `${name} c=${concurrency} (${load}): ${row.throughputRps.toFixed(0)} req/s, p50 ${row.p50Ms} ms, p90 ${row.p90Ms} ms, p99 ${row.p99Ms} ms, errors ${row.errors}, non-2xx ${row.non2xx}`,
  );
  return row;
}

/** The engine alone in process on the throughput mix, Gsamples/s (null without a GPU, and why). */
export async function inProcess(
  s: Settings,
): Promise<{ gsamplesPerS: number | null; device: string; reason?: string }> {
  try {
    const { JobEngine } = await import('../../src/engine/index.js');
    const { Device } = await import('../../src/runtime/index.js');
    const engine = new JobEngine({ lanes: 4, label: 'bench-inprocess' });
    const mix = THROUGHPUT_MIX;
    const data = randomSignal(mix.batch * mix.n);
    const spec = {
      data,
      batch: mix.batch,
      fs: mix.fs,
      flags: ['stft'] as const,
      passBand: mix.passBand,
      previewBins: mix.previewBins,
    };
    await engine.submit({ ...spec, flags: ['stft'] }).result; // warm-up: plans, buffers
    let samples = 0;
    const t0 = performance.now();
    const deadline = t0 + s.stepS * 1000;
    await Promise.all(
      Array.from({ length: s.throughputConcurrency }, async () => {
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

/** What the sweep part measured. */
export interface SweepPart {
  ready: boolean;
  rows: SweepRow[];
  rps64: number | null;
  p99At64: number | null;
  gsamplesPerS: number | null;
  batchItemsPerS: number | null;
  lost: number;
  fiveXX: number;
  serveExit: number | null;
  metricsSample: string[];
}

/** Runs the sweep part against `tscuda serve` on `port` (and `port + 4` for the throughput workers). */
export async function runSweep(
  s: Settings,
  root: string,
  port: number,
  notes: string[],
  log: (l: string) => void,
): Promise<SweepPart> {
  const out: SweepPart = {
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
  const tscuda = startTscuda(
    root,
    port,
    ['--workers', String(s.workers), '--lanes', '4', '--max-queued', '1024'],
    s.verbose,
  );
  const ready = await waitReady(tscuda.base, 90_000, tscuda.child);
  if (!ready.ready) {
    notes.push(`tscuda serve not ready: ${ready.reason}`);
    log(`tscuda serve not ready: ${ready.reason}`);
    await tscuda.stop();
    return out;
  }
  out.ready = true;
  const mixGs = (rps: number): number => (rps * THROUGHPUT_MIX.batch * THROUGHPUT_MIX.n) / 1e9;
  const smoke = await send(stftRequest(tscuda.base, RPS_MIX), new Agent(), '', true);
  if (smoke.status !== 200 || smoke.body.byteLength !== 4 * RPS_MIX.batch * (RPS_MIX.n + RPS_MIX.previewBins))
    notes.push(`tscuda smoke request: status ${smoke.status}, ${smoke.body.byteLength} bytes`);
  const req = stftRequest(tscuda.base, RPS_MIX);
  await autocannonStep(req, 8, 1); // warm-up
  for (const c of s.sweep) {
    const row = await step(s, 'tscuda', req, c, true, s.sweepLoad, log);
    out.rows.push(row);
    out.lost += row.errors + row.timeouts;
    if (c === 64) {
      out.rps64 = row.throughputRps;
      out.p99At64 = row.p99Ms;
    }
  }
  const tp = await step(
    s,
    `tscuda-throughput (${s.workers} worker${s.workers === 1 ? '' : 's'})`,
    stftRequest(tscuda.base, THROUGHPUT_MIX),
    s.throughputConcurrency,
    true,
    'loop',
    log,
  );
  out.rows.push(tp);
  if (s.throughputWorkers === s.workers) out.gsamplesPerS = mixGs(tp.throughputRps);
  out.lost += tp.errors + tp.timeouts;
  const items = Array.from({ length: BATCH_ITEMS }, () => Array.from(randomSignal(BATCH_DIM)));
  const batchReq: LoadRequest = {
    base: tscuda.base,
    path: '/v1/batch/gradient',
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/octet-stream' },
    body: Buffer.from(JSON.stringify({ items })),
  };
  const br = await step(s, 'tscuda-batch', batchReq, 64, true, s.sweepLoad, log);
  out.rows.push(br);
  out.batchItemsPerS = br.throughputRps * BATCH_ITEMS;
  if (br.non2xx > 0) notes.push(`batch endpoint: ${br.non2xx} non-2xx responses`);
  const metricsText = await scrape(tscuda.base);
  out.fiveXX = out.rows.reduce((a, r) => a + r.status5xx, 0);
  out.metricsSample = metricsText
    .split('\n')
    .filter((l) => l.startsWith('tscuda_request_failure_total') || l.startsWith('tscuda_request_success_total'));
  out.serveExit = await tscuda.stop();
  log(`tscuda serve stopped with exit code ${out.serveExit}`);
  if (s.throughputWorkers !== s.workers) {
    const svc = startTscuda(
      root,
      port + 4,
      ['--workers', String(s.throughputWorkers), '--lanes', '4', '--max-queued', '1024'],
      s.verbose,
    );
    const up = await waitReady(svc.base, 90_000, svc.child);
    if (!up.ready) notes.push(`tscuda serve --workers ${s.throughputWorkers} not ready: ${up.reason}`);
    else {
      const treq = stftRequest(svc.base, THROUGHPUT_MIX);
      await closedLoopStep(treq, s.throughputConcurrency, 1, s.clientProcesses); // warm-up: every worker's plans and pools
      const row = await step(
        s,
        `tscuda-throughput (${s.throughputWorkers} workers)`,
        treq,
        s.throughputConcurrency,
        true,
        'loop',
        log,
      );
      out.rows.push(row);
      out.gsamplesPerS = mixGs(row.throughputRps);
      out.lost += row.errors + row.timeouts;
      out.fiveXX += row.status5xx;
    }
    const code = await svc.stop();
    if (code !== 0) notes.push(`tscuda serve --workers ${s.throughputWorkers} exited with ${code}`);
  }
  return out;
}
