/**
 * The serve bench's loops split over client processes (bench/serve/load-child.ts), started together
 * once all have connected, their reports merged into one, and a sweep step's columns from a closed
 * loop in this process or over client processes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closedLoop, count5xx, NO_LATENCY, spread, type LoadRequest, type LoopReport, type SweepRow } from './load.js';

/** A step's columns from the closed loop (autocannonStep's shape): throughput and latency of the 200s. */
export async function closedLoopStep(
  req: LoadRequest,
  concurrency: number,
  durationS: number,
  processes = 1,
): Promise<Omit<SweepRow, 'server' | 'eventLoopLagP99Ms' | 'gpuBusyFraction'>> {
  const r =
    processes > 1
      ? await closedLoopProcesses(req, concurrency, durationS, processes)
      : await closedLoop(req, concurrency, durationS);
  const seconds = r.elapsedS ?? durationS;
  const ok = r.byStatus['200'] ?? 0;
  const answered = Object.values(r.byStatus).reduce((a, b) => a + b, 0);
  const l = r.latencyMs['200'] ?? NO_LATENCY;
  return {
    concurrency,
    durationS: seconds,
    requests: answered,
    throughputRps: ok / seconds,
    p50Ms: Math.round(l.p50),
    p90Ms: Math.round(l.p90),
    p99Ms: Math.round(l.p99),
    errors: Object.values(r.unanswered).reduce((a, b) => a + b, 0),
    non2xx: answered - ok,
    status5xx: count5xx(Object.entries(r.byStatus)),
    timeouts: 0,
  };
}

/**
 * The closed loop split over `processes` client processes (bench/serve/load-child.ts), each with
 * its share of the clients, started together once all have connected: one Node client moves
 * about 280 requests/s of 4 MiB each way (measured against a bare node:http server on the H100
 * host), so one process would bound the throughput rows instead of the server.
 */
export async function closedLoopProcesses(
  req: LoadRequest,
  concurrency: number,
  durationS: number,
  processes: number,
): Promise<LoopReport> {
  return loopProcesses(req, { concurrency }, durationS, processes);
}

/** openLoop split over `processes` client processes, each starting requests at its share of `ratePerS` over its share of `connections`. */
export async function openLoopProcesses(
  req: LoadRequest,
  ratePerS: number,
  connections: number,
  durationS: number,
  processes: number,
): Promise<LoopReport> {
  return loopProcesses(req, { ratePerS, connections }, durationS, processes);
}

/** How each client process loads: closed (its clients) or open (its rate over its connections). */
type LoopShape = { concurrency: number } | { ratePerS: number; connections: number };

async function loopProcesses(
  req: LoadRequest,
  shape: LoopShape,
  durationS: number,
  processes: number,
): Promise<LoopReport> {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-load-'));
  const bodyFile = join(dir, 'body');
  writeFileSync(bodyFile, req.body);
  const children = Array.from({ length: processes }, (_, i) => {
    const share = (n: number): number => Math.floor(n / processes) + (i < n % processes ? 1 : 0);
    const load =
      'concurrency' in shape
        ? { concurrency: share(shape.concurrency) }
        : { ratePerS: shape.ratePerS / processes, connections: share(shape.connections) };
    const config = JSON.stringify({
      base: req.base,
      path: req.path,
      method: req.method,
      headers: req.headers,
      bodyFile,
      durationS,
      ...load,
    });
    // The child is TypeScript: tsx's loader, named here so it works from any parent (the bench under tsx, a vitest worker).
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('./load-child.ts', import.meta.url)), config],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: string) => {
        out += d;
        if (out.startsWith('ready\n')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`load client ${i} exited with ${code} before it was ready`)));
    });
    const done = new Promise<LoopReport>((resolve, reject) => {
      child.once('exit', (code) => {
        if (code !== 0) return reject(new Error(`load client ${i} exited with ${code}`));
        try {
          resolve(JSON.parse(out.slice('ready\n'.length)) as LoopReport);
        } catch (e) {
          reject(new Error(`load client ${i} printed no report: ${(e as Error).message}`));
        }
      });
    });
    return { child, ready, done };
  });
  try {
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.child.stdin.end('go\n');
    return mergeLoopReports(await Promise.all(children.map((c) => c.done)));
  } finally {
    for (const c of children) if (c.child.exitCode === null) c.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One report of several loops: counts added, percentiles over all their samples. */
export function mergeLoopReports(reports: readonly LoopReport[]): LoopReport {
  const merged: LoopReport = {
    sent: 0,
    byStatus: {},
    unanswered: {},
    latencyMs: {},
    firstRequestMs: NO_LATENCY,
    nonRetryable503: 0,
  };
  const samples = new Map<string, number[]>();
  const firsts: number[] = [];
  for (const r of reports) {
    merged.sent += r.sent;
    merged.nonRetryable503 += r.nonRetryable503;
    for (const [k, v] of Object.entries(r.byStatus)) merged.byStatus[k] = (merged.byStatus[k] ?? 0) + v;
    for (const [k, v] of Object.entries(r.unanswered)) merged.unanswered[k] = (merged.unanswered[k] ?? 0) + v;
    for (const [k, v] of Object.entries(r.samples ?? {})) samples.set(k, [...(samples.get(k) ?? []), ...v]);
    firsts.push(...(r.firstSamples ?? []));
    if (r.elapsedS !== undefined) merged.elapsedS = Math.max(merged.elapsedS ?? 0, r.elapsedS);
    if (r.clientLagP99Ms !== undefined) merged.clientLagP99Ms = Math.max(merged.clientLagP99Ms ?? 0, r.clientLagP99Ms);
  }
  for (const [k, v] of samples) merged.latencyMs[k] = spread(v);
  merged.firstRequestMs = spread(firsts);
  return merged;
}
