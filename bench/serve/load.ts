/**
 * Load generators of the serve bench (autocannon's step is in autocannon-step.ts): closed and open
 * loops over node:http, in this process or over client processes, with per status counts, per
 * status latencies and the connections that ended without a response.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One row of the sweep, perf_analyzer's columns plus the server's own lag and GPU busy. */
export interface SweepRow {
  server: string;
  concurrency: number;
  durationS: number;
  requests: number;
  throughputRps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** Responses with a 5xx status (a 429 of load shedding is non-2xx but not an error of the server). */
  status5xx: number;
  timeouts: number;
  /** Event-loop delay p99 of the server during the step (tscuda: its /metrics), ms. */
  eventLoopLagP99Ms: number | null;
  gpuBusyFraction: number | null;
}

/**
 * Random float32 samples whose every byte is printable ASCII (mantissa bytes 0x20-0x7e, top
 * byte 0x3f: values in [0.6, 1.0]): a random signal that autocannon's client threads can carry
 * as a string without changing a byte.
 */
export function asciiSignal(n: number): Float32Array {
  const bytes = new Uint8Array(n * 4);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i & 3) === 3 ? 0x3f : 0x20 + Math.floor(Math.random() * 95);
  return new Float32Array(bytes.buffer);
}

/** A request the loads send over and over. */
export interface LoadRequest {
  base: string;
  path: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body: Buffer;
}

/** Responses with a 5xx status among [status, count] pairs. */
export function count5xx(byStatus: Iterable<[string, number]>): number {
  let n = 0;
  for (const [code, count] of byStatus) if (code.startsWith('5')) n += count;
  return n;
}

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

/** Latency percentiles of a set of requests, ms. */
export interface LatencySpread {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

const NO_LATENCY: LatencySpread = { p50: 0, p90: 0, p99: 0, max: 0 };

/** What a closed-loop run saw. */
export interface LoopReport {
  sent: number;
  /** Responses by status code. */
  byStatus: Record<string, number>;
  /** Requests that ended without any response (reset, hang-up), by error code. */
  unanswered: Record<string, number>;
  /** Latency percentiles per status, ms, of every request but each client's first. */
  latencyMs: Record<string, LatencySpread>;
  /**
   * Latency of each client's first timed request, ms, reported apart: without `warmPath` it
   * includes opening the connection, which a saturated Node server accepts slowly (seen with a
   * bare node:http server too).
   */
  firstRequestMs: LatencySpread;
  /** Bodies of 503 responses that were not `retryable: true`. */
  nonRetryable503: number;
  /** With `keepSamples`: every latency behind `latencyMs`, by status (for merging reports of several loops). */
  samples?: Record<string, number[]>;
  /** With `keepSamples`: every latency behind `firstRequestMs`. */
  firstSamples?: number[];
  /** Seconds from the first request's start to the last answer. */
  elapsedS?: number;
  /**
   * The load client's own event-loop delay, p99, ms (the worst client process): latencies are taken
   * on the client's loop, so this much of them can be the client's own lateness, not the server's.
   */
  clientLagP99Ms?: number;
}

/** Watches the client's event loop while a loop runs; `p99Ms()` stops watching. */
function watchClientLoop(): { p99Ms(): number } {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    p99Ms() {
      h.disable();
      return h.count > 0 ? h.percentile(99) / 1e6 : 0;
    },
  };
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function spread(values: number[]): LatencySpread {
  values.sort((a, b) => a - b);
  return {
    p50: percentile(values, 0.5),
    p90: percentile(values, 0.9),
    p99: percentile(values, 0.99),
    max: values[values.length - 1] ?? 0,
  };
}

/**
 * One request over `agent`; resolves with the status (0 when no response came) and the body: of a
 * 2xx answer only with `keepBody` (the load loops drop it).
 */
export function send(
  req: LoadRequest,
  agent: Agent,
  extraPath = '',
  keepBody = false,
): Promise<{ status: number; body: Buffer; error?: string }> {
  return new Promise((resolve) => {
    const url = new URL(req.base + req.path + extraPath);
    const r = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: req.method,
        headers: { ...req.headers, 'content-length': String(req.body.byteLength) },
        agent,
      },
      (res) => {
        // A 2xx body is read and dropped (as perf_analyzer does): joining megabytes per response
        // would make this one-threaded client, not the server, the bound of the throughput rows.
        const keep = keepBody || (res.statusCode ?? 0) >= 300;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          if (keep) chunks.push(c);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: keep ? Buffer.concat(chunks) : Buffer.alloc(0) }),
        );
        res.on('error', (e: NodeJS.ErrnoException) =>
          resolve({ status: 0, body: Buffer.alloc(0), error: e.code ?? e.message }),
        );
      },
    );
    r.on('error', (e: NodeJS.ErrnoException) =>
      resolve({ status: 0, body: Buffer.alloc(0), error: e.code ?? e.message }),
    );
    r.end(req.body);
  });
}

/** Counts and latencies of a loop's requests, by status; builds its LoopReport. */
class LoopRecorder {
  readonly report: LoopReport = {
    sent: 0,
    byStatus: {},
    unanswered: {},
    latencyMs: {},
    firstRequestMs: NO_LATENCY,
    nonRetryable503: 0,
  };
  readonly #latencies = new Map<string, number[]>();
  readonly #firsts: number[] = [];

  /** One answered (or unanswered: status 0) request that started at `start` (performance.now()); `first`: a client's first, reported apart. */
  record(r: { status: number; body: Buffer; error?: string }, start: number, first: boolean): void {
    const report = this.report;
    const key = r.status === 0 ? 'none' : String(r.status);
    if (r.status === 0) report.unanswered[r.error ?? 'unknown'] = (report.unanswered[r.error ?? 'unknown'] ?? 0) + 1;
    else report.byStatus[key] = (report.byStatus[key] ?? 0) + 1;
    const ms = performance.now() - start;
    if (first) this.#firsts.push(ms);
    else {
      if (!this.#latencies.has(key)) this.#latencies.set(key, []);
      this.#latencies.get(key)!.push(ms);
    }
    if (r.status === 503) {
      try {
        if ((JSON.parse(r.body.toString()) as { error?: { retryable?: boolean } }).error?.retryable !== true)
          report.nonRetryable503++;
      } catch {
        report.nonRetryable503++;
      }
    }
  }

  finish(keepSamples: boolean): LoopReport {
    const report = this.report;
    if (keepSamples) {
      report.samples = Object.fromEntries([...this.#latencies].map(([k, v]) => [k, [...v]]));
      report.firstSamples = [...this.#firsts];
    }
    for (const [key, values] of this.#latencies) report.latencyMs[key] = spread(values);
    report.firstRequestMs = spread(this.#firsts);
    return report;
  }
}

/** Opens `connections` keep-alive connections on `agent` (one GET of `path` each, all at once) before a clock starts. */
async function openConnections(req: LoadRequest, agent: Agent, connections: number, path: string): Promise<void> {
  await Promise.all(
    Array.from({ length: connections }, () =>
      send({ ...req, method: 'GET', path, body: Buffer.alloc(0), headers: {} }, agent),
    ),
  );
}

/**
 * `concurrency` clients, each sending the next request when the previous one is answered,
 * for `durationS`; a 429 or 503 waits `backoffMs` (a client honouring Retry-After briefly).
 * `during(elapsedS)` is called every 50 ms (the fault run injects faults from there).
 */
export async function closedLoop(
  req: LoadRequest,
  concurrency: number,
  durationS: number,
  options: { backoffMs?: number; during?: (elapsedS: number) => void; warmPath?: string; keepSamples?: boolean } = {},
): Promise<LoopReport> {
  // maxFreeSockets: the default 256 would close and reopen sockets of a loop above 256 clients.
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  // Every connection opened before the clock starts: a busy Node server accepts about one new
  // connection per event-loop turn, so connections opened under load measure the accept loop,
  // not the admission this run is about.
  if (options.warmPath !== undefined) await openConnections(req, agent, concurrency, options.warmPath);
  const recorder = new LoopRecorder();
  const t0 = performance.now();
  const deadline = t0 + durationS * 1000;
  const ticker = setInterval(() => options.during?.((performance.now() - t0) / 1000), 50);
  const client = async (): Promise<void> => {
    let first = true;
    while (performance.now() < deadline) {
      const start = performance.now();
      recorder.report.sent++;
      const r = await send(req, agent);
      recorder.record(r, start, first);
      first = false;
      if ((r.status === 429 || r.status === 503 || r.status === 0) && (options.backoffMs ?? 0) > 0)
        await new Promise((res) => setTimeout(res, options.backoffMs));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  clearInterval(ticker);
  agent.destroy();
  recorder.report.elapsedS = (performance.now() - t0) / 1000;
  return recorder.finish(options.keepSamples === true);
}

/**
 * An open loop, perf_analyzer's --request-rate: requests start at `ratePerS` whatever the
 * answers do, for `durationS`, over at most `connections` keep-alive connections (opened first).
 * A request's latency runs from its scheduled start, so time it waited for a free connection
 * counts (no coordinated omission).
 */
export async function openLoop(
  req: LoadRequest,
  ratePerS: number,
  durationS: number,
  options: { connections?: number; warmPath?: string; keepSamples?: boolean } = {},
): Promise<LoopReport> {
  const connections = options.connections ?? 256;
  const agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  await openConnections(req, agent, connections, options.warmPath ?? '/');
  const recorder = new LoopRecorder();
  const inFlight = new Set<Promise<void>>();
  const clientLoop = watchClientLoop();
  const t0 = performance.now();
  const total = Math.floor(ratePerS * durationS);
  let started = 0;
  while (started < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * ratePerS) + 1);
    for (; started < due; started++) {
      const scheduled = t0 + (started / ratePerS) * 1000;
      recorder.report.sent++;
      const p: Promise<void> = send(req, agent).then((r) => {
        recorder.record(r, scheduled, false);
        inFlight.delete(p);
      });
      inFlight.add(p);
    }
    // The next start is due in 1/rate s; a timer of 1 ms (or the next turn) keeps the schedule.
    await new Promise((res) =>
      setTimeout(res, Math.max(0, Math.min(1, t0 + (started / ratePerS) * 1000 - performance.now()))),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  recorder.report.elapsedS = (performance.now() - t0) / 1000;
  recorder.report.clientLagP99Ms = clientLoop.p99Ms();
  return recorder.finish(options.keepSamples === true);
}
