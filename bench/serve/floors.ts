/**
 * The serve bench's floor rows: each row's load against `tscuda serve` and against the bare
 * `node:http` floor (floor-server.ts) with the same number of processes, alternated step by step
 * in the same run, with the same client processes. A row reports both sides' throughput and
 * latency, the ratio, the server's CPU ms per request (its whole process tree), the workers'
 * event-loop lag p99 and GPU busy (tscuda's /metrics), and what bounds the floor: bytes each way
 * per request and the GB/s one core moves.
 */
import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { send, type LoadRequest } from './load.js';
import { closedLoopStep } from './load-processes.js';
import { stftRequest, type JobMix, type WireTypes } from './mixes.js';
import { treeCpuMs } from './process-cpu.js';
import { gauges, scrape, waitReady, type Service } from './services.js';

/** One row's load: a mix, how its samples travel, the clients. */
export interface FloorRowSpec {
  name: string;
  mix: JobMix;
  wire: WireTypes;
  concurrency: number;
}

/** What one side of a row measured (its best step of the alternation, by throughput). */
export interface SideMeasure {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU ms of the server's whole process tree per answered request. */
  cpuMsPerRequest: number | null;
  /** Worst worker's event-loop delay p99 over the step, ms (tscuda only). */
  eventLoopLagP99Ms: number | null;
  /** Mean over workers of the GPU busy fraction (tscuda only). */
  gpuBusy: number | null;
  /** Requests without an answer, and answers that were not 2xx, over every step of this side. */
  errors: number;
  non2xx: number;
}

/** A throughput or latency figure of a row: tscuda's, the floor's, and tscuda / floor. */
export interface FloorMetric {
  name: string;
  unit: string;
  better: 'higher' | 'lower';
  tscuda: number | null;
  floor: number | null;
  ratio: number | null;
}

/** One floor row of the results. */
export interface FloorRow {
  name: string;
  workers: number;
  /** Whether tscuda serve ran without --workers (the host's default count). */
  defaultWorkers: boolean;
  concurrency: number;
  wire: WireTypes;
  /** Body bytes each way per request (the answer's as tscuda sent it; the floor answers as many). */
  bytesIn: number;
  bytesOut: number;
  tscuda: SideMeasure;
  floor: SideMeasure;
  metrics: FloorMetric[];
  /** Body bytes (in + out) moved per CPU second of the server, GB/s per core. */
  gbPerSPerCore: { tscuda: number | null; floor: number | null };
  /** The goal: tscuda's throughput >= 0.8 x the floor's with the same process count. */
  goal: { kind: 'floor-min'; value: number };
  met: boolean | null;
}

/** How the floor rows are run. */
export interface FloorRunOptions {
  root: string;
  stepS: number;
  /** Alternations per row (tscuda, floor, tscuda, floor, ...): the best step of each side counts. */
  reps: number;
  clientProcesses: number;
  log(line: string): void;
  verbose: boolean;
}

/** The goal of every serve row against its floor. */
export const FLOOR_GOAL = 0.8;

/** The bare node:http floor with `workers` processes answering `answers` (request path -> answer bytes). */
export function startFloor(root: string, port: number, workers: number, answers: Record<string, number>): Service {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'bench/serve/floor-server.ts'),
      String(port),
      String(workers),
      JSON.stringify(answers),
    ],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr.resume();
  return {
    name: 'floor',
    base: `http://127.0.0.1:${port}`,
    child,
    lines: [],
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

interface Step {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number | null;
  lag: number | null;
  busy: number | null;
  errors: number;
  non2xx: number;
}

/** One closed-loop step against `service`, with its process tree's CPU and (tscuda) its workers' metrics around it. */
async function measure(
  service: Service,
  req: LoadRequest,
  concurrency: number,
  options: FloorRunOptions,
  isTscuda: boolean,
): Promise<Step> {
  if (isTscuda) await scrape(service.base); // resets the workers' event-loop windows
  const pid = service.child.pid ?? -1;
  const cpuBefore = treeCpuMs(pid);
  const r = await closedLoopStep(req, concurrency, options.stepS, options.clientProcesses);
  const cpuAfter = treeCpuMs(pid);
  const metrics = isTscuda ? await scrape(service.base) : '';
  const lags = gauges(metrics, 'tscuda_event_loop_delay_seconds', 'stat="p99"');
  const busy = gauges(metrics, 'tscuda_gpu_busy_fraction');
  const answered = r.throughputRps * r.durationS;
  return {
    rps: r.throughputRps,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    cpuMsPerRequest:
      cpuBefore === null || cpuAfter === null || answered === 0 ? null : (cpuAfter - cpuBefore) / answered,
    lag: lags.length === 0 ? null : Math.max(...lags) * 1000,
    busy: busy.length === 0 ? null : busy.reduce((a, b) => a + b, 0) / busy.length,
    errors: r.errors,
    non2xx: r.non2xx,
  };
}

/** The best step (by throughput) of a side, with the errors of all its steps. */
function best(steps: Step[]): SideMeasure {
  const top = steps.reduce((a, b) => (b.rps > a.rps ? b : a));
  return {
    rps: top.rps,
    p50Ms: top.p50Ms,
    p99Ms: top.p99Ms,
    cpuMsPerRequest: top.cpuMsPerRequest,
    eventLoopLagP99Ms: top.lag,
    gpuBusy: top.busy,
    errors: steps.reduce((n, s) => n + s.errors, 0),
    non2xx: steps.reduce((n, s) => n + s.non2xx, 0),
  };
}

/** a / b to three places, null when either is unknown or b is 0. */
export const ratioOf = (a: number | null, b: number | null): number | null =>
  a === null || b === null || b === 0 ? null : Number((a / b).toFixed(3));
const gbPerS = (bytes: number, cpuMs: number | null): number | null =>
  cpuMs === null || cpuMs === 0 ? null : Number((bytes / cpuMs / 1e6).toFixed(3));

/**
 * The floor rows of one process count: `tscuda` (already started and ready, `workers` processes)
 * and a floor of as many processes started here with tscuda's answer sizes (one smoke request per
 * row), each row's steps alternated. The floor is stopped at the end; tscuda is left to the caller.
 */
export async function floorRows(
  tscuda: Service,
  workers: number,
  defaultWorkers: boolean,
  floorPort: number,
  specs: readonly FloorRowSpec[],
  options: FloorRunOptions,
): Promise<FloorRow[]> {
  const requests = specs.map((s) => stftRequest(tscuda.base, s.mix, '', s.wire));
  const answers: Record<string, number> = {};
  const bytesOut: number[] = [];
  for (const req of requests) {
    const smoke = await send(req, new Agent(), '', true);
    if (smoke.status !== 200)
      throw new Error(
        `tscuda smoke request ${req.path}: status ${smoke.status} ${smoke.body.toString().slice(0, 200)}`,
      );
    answers[req.path] = smoke.body.byteLength;
    bytesOut.push(smoke.body.byteLength);
  }
  const floor = startFloor(options.root, floorPort, workers, answers);
  try {
    const up = await waitReady(floor.base, 30_000, floor.child);
    if (!up.ready) throw new Error(`the HTTP floor (${workers} processes) did not start: ${up.reason}`);
    const rows: FloorRow[] = [];
    for (const [i, spec] of specs.entries()) {
      const tReq = requests[i]!;
      const fReq: LoadRequest = { ...tReq, base: floor.base };
      // Warm-up of both: every worker's code paths, pools and (tscuda) plans.
      await closedLoopStep(tReq, spec.concurrency, 1, options.clientProcesses);
      await closedLoopStep(fReq, spec.concurrency, 1, options.clientProcesses);
      const t: Step[] = [];
      const f: Step[] = [];
      for (let rep = 0; rep < options.reps; rep++) {
        t.push(await measure(tscuda, tReq, spec.concurrency, options, true));
        f.push(await measure(floor, fReq, spec.concurrency, options, false));
      }
      const ts = best(t);
      const fs = best(f);
      const bytesIn = tReq.body.byteLength;
      const moved = bytesIn + bytesOut[i]!;
      const rpsRatio = ratioOf(ts.rps, fs.rps);
      const row: FloorRow = {
        name: spec.name,
        workers,
        defaultWorkers,
        concurrency: spec.concurrency,
        wire: spec.wire,
        bytesIn,
        bytesOut: bytesOut[i]!,
        tscuda: ts,
        floor: fs,
        metrics: [
          { name: 'rps', unit: 'req/s', better: 'higher', tscuda: ts.rps, floor: fs.rps, ratio: rpsRatio },
          {
            name: 'p50_ms',
            unit: 'ms',
            better: 'lower',
            tscuda: ts.p50Ms,
            floor: fs.p50Ms,
            ratio: ratioOf(ts.p50Ms, fs.p50Ms),
          },
          {
            name: 'p99_ms',
            unit: 'ms',
            better: 'lower',
            tscuda: ts.p99Ms,
            floor: fs.p99Ms,
            ratio: ratioOf(ts.p99Ms, fs.p99Ms),
          },
          {
            name: 'cpu_ms_per_request',
            unit: 'server CPU ms',
            better: 'lower',
            tscuda: ts.cpuMsPerRequest,
            floor: fs.cpuMsPerRequest,
            ratio: ratioOf(ts.cpuMsPerRequest, fs.cpuMsPerRequest),
          },
          {
            name: 'gsamples_per_s',
            unit: 'Gsamples/s',
            better: 'higher',
            tscuda: (ts.rps * spec.mix.batch * spec.mix.n) / 1e9,
            floor: (fs.rps * spec.mix.batch * spec.mix.n) / 1e9,
            ratio: rpsRatio,
          },
        ],
        gbPerSPerCore: { tscuda: gbPerS(moved, ts.cpuMsPerRequest), floor: gbPerS(moved, fs.cpuMsPerRequest) },
        goal: { kind: 'floor-min', value: FLOOR_GOAL },
        met: rpsRatio === null ? null : rpsRatio >= FLOOR_GOAL,
      };
      options.log(
        `floor row ${spec.name} (${workers} worker${workers === 1 ? '' : 's'}, c=${spec.concurrency}): tscuda ${ts.rps.toFixed(0)} req/s (${ts.cpuMsPerRequest?.toFixed(3) ?? '?'} CPU ms/req, lag p99 ${ts.eventLoopLagP99Ms?.toFixed(1) ?? '?'} ms), floor ${fs.rps.toFixed(0)} req/s (${fs.cpuMsPerRequest?.toFixed(3) ?? '?'} CPU ms/req): ${rpsRatio ?? '?'}`,
      );
      rows.push(row);
    }
    return rows;
  } finally {
    await floor.stop();
  }
}

/** Floor-only throughput at `workers` processes for `spec` (the best floor over process counts), req/s. */
export async function floorOnly(
  workers: number,
  floorPort: number,
  spec: FloorRowSpec,
  answerBytes: number,
  options: FloorRunOptions,
): Promise<number> {
  const req = stftRequest(`http://127.0.0.1:${floorPort}`, spec.mix, '', spec.wire);
  const floor = startFloor(options.root, floorPort, workers, { [req.path]: answerBytes });
  try {
    const up = await waitReady(floor.base, 30_000, floor.child);
    if (!up.ready) throw new Error(`the HTTP floor (${workers} processes) did not start: ${up.reason}`);
    await closedLoopStep(req, spec.concurrency, 1, options.clientProcesses);
    const steps: number[] = [];
    for (let rep = 0; rep < options.reps; rep++)
      steps.push((await closedLoopStep(req, spec.concurrency, options.stepS, options.clientProcesses)).throughputRps);
    const rps = Math.max(...steps);
    options.log(`floor alone, ${workers} processes, ${spec.name}: ${rps.toFixed(0)} req/s`);
    return rps;
  } finally {
    await floor.stop();
  }
}
