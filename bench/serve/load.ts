/**
 * Load generators of the serve bench (autocannon's step is in autocannon-step.ts): closed and open
 * loops over node:http in this process (over client processes: load-processes.ts), with per status
 * counts, per status latencies and the connections that ended without a response.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent, request } from 'node:http';

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

/** Latency percentiles of a set of requests, ms. */
export interface LatencySpread {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The spread of no requests. */
export const NO_LATENCY: LatencySpread = { p50: 0, p90: 0, p99: 0, max: 0 };

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

/** The latency percentiles of `values`, ms. */
export function spread(values: number[]): LatencySpread {
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
