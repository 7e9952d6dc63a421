/**
 * The serve bench's overload part: an open loop at twice one worker's capacity against a small
 * queue (429s come fast, accepted requests meet their timeout, the worker's memory stays bounded,
 * read from its /v1/info), then 512 closed-loop clients as a stress.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { percentile } from '../harness/stats.js';
import type { LoadSample } from '../../src/server/index.js';
import { closedLoop, type LoopReport } from './load.js';
import { openLoopProcesses } from './load-processes.js';
import { RPS_MIX, stftRequest } from './mixes.js';
import { startTscuda, waitReady } from './services.js';

/** The environment variable that shows process details (memory among them) in /v1/info of tscuda serve (server-options.ts' PROCESS_INFO_ENV). */
const PROCESS_INFO_ENV = 'TSCUDA_SERVE_PROCESS_INFO';

/** Requests in progress beyond which the overload server answers 429. */
const OVERLOAD_MAX_PENDING = 128;
/** Connections of the open loop: more than the server admits (OVERLOAD_MAX_PENDING), so admission, not the client, decides. */
const OVERLOAD_CONNECTIONS = 2048;
/** Client processes of the open loop: thousands of requests/s of 64 KiB each way need several. */
const OVERLOAD_CLIENT_PROCESSES = 8;
/** A worker's memory from /v1/info, MiB. */
export interface WorkerMemory {
  rss: number;
  heapUsed: number;
  external: number;
}
/** What load shedding did during the overload run, from the worker's load trace. */
export interface SheddingSummary {
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
/** What the overload run measured. */
export type OverloadReport = LoopReport & {
  before: WorkerMemory | null;
  after: WorkerMemory | null;
  timeoutMs: number;
  ratePerS: number;
  capacityRps: number;
  shedding: SheddingSummary | null;
};

/** Sums up the `load-trace` lines a worker wrote after `from` (performance.now()). */
function sheddingSummary(lines: readonly { at: number; text: string }[], from: number): SheddingSummary | null {
  const samples = lines
    .filter((l) => l.at >= from && l.text.startsWith('load-trace '))
    .map((l) => JSON.parse(l.text.slice(l.text.indexOf('{'))) as LoadSample);
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

/** How the overload part runs. */
export interface OverloadOptions {
  root: string;
  port: number;
  quick: boolean;
  verbose: boolean;
  /** The overload server's --max-lag and --max-turn, when given. */
  maxLag: string | undefined;
  maxTurn: string | undefined;
  /** The sweep's best throughput of one worker, req/s. */
  sweepBest: number;
  log(line: string): void;
  notes: string[];
}

/** The overload run and the stress after it (null: not run, or the server did not start). */
export async function runOverload(
  o: OverloadOptions,
): Promise<{ overload: OverloadReport | null; stress: (LoopReport & { concurrency: number }) | null }> {
  const lagArgs = [
    ...(o.maxLag === undefined ? [] : ['--max-lag', o.maxLag]),
    ...(o.maxTurn === undefined ? [] : ['--max-turn', o.maxTurn]),
  ];
  let overload: OverloadReport | null = null;
  /** The same server under 512 closed-loop clients (each resends at once): a stress, reported beside the goal. */
  let stress: (LoopReport & { concurrency: number }) | null = null;
  const port = o.port;
  const timeoutMs = 2000;
  // The overload server traces each look load shedding takes at its loop (share admitted, delay, utilization).
  process.env.TSCUDA_SERVE_LOAD_TRACE = '1';
  // /v1/info shows the worker's memory (RSS, heap, external) only with process details on.
  process.env[PROCESS_INFO_ENV] = '1';
  const svc = startTscuda(
    o.root,
    port,
    [
      '--workers',
      '1',
      '--lanes',
      '4',
      '--max-queued',
      '64',
      '--max-pending',
      String(OVERLOAD_MAX_PENDING),
      '--timeout',
      String(timeoutMs),
      ...lagArgs,
    ],
    o.verbose,
  );
  delete process.env.TSCUDA_SERVE_LOAD_TRACE;
  delete process.env[PROCESS_INFO_ENV];
  if ((await waitReady(svc.base, 90_000, svc.child)).ready) {
    const memory = async (): Promise<WorkerMemory | null> => {
      try {
        const info = (await (await fetch(`${svc.base}/v1/info`)).json()) as {
          rssBytes?: unknown;
          heapUsedBytes?: unknown;
          externalBytes?: unknown;
        };
        const { rssBytes, heapUsedBytes, externalBytes } = info;
        // Without the process details /v1/info has no memory figures: not measured, never NaN.
        if (typeof rssBytes !== 'number' || typeof heapUsedBytes !== 'number' || typeof externalBytes !== 'number') {
          o.notes.push(`overload: /v1/info carried no memory figures (${PROCESS_INFO_ENV}=1 not seen by the worker)`);
          return null;
        }
        return { rss: rssBytes / 2 ** 20, heapUsed: heapUsedBytes / 2 ** 20, external: externalBytes / 2 ** 20 };
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
    const sweepBest = Math.max(1, o.sweepBest);
    const probeS = 2;
    const probe = await openLoopProcesses(
      stftRequest(svc.base, RPS_MIX),
      4 * sweepBest,
      OVERLOAD_CONNECTIONS,
      probeS,
      OVERLOAD_CLIENT_PROCESSES,
    );
    const capacityRps = Math.max(sweepBest, (probe.byStatus['200'] ?? 0) / (probe.elapsedS ?? probeS));
    o.log(
      `overload capacity probe at ${(4 * sweepBest).toFixed(0)} req/s: ${JSON.stringify(probe.byStatus)} -> ${capacityRps.toFixed(0)} req/s`,
    );
    await new Promise((r) => setTimeout(r, 1000)); // the probe's backlog drains
    const ratePerS = 2 * capacityRps;
    const traceFrom = performance.now();
    const report = await openLoopProcesses(
      stftRequest(svc.base, RPS_MIX),
      ratePerS,
      OVERLOAD_CONNECTIONS,
      o.quick ? 4 : 8,
      OVERLOAD_CLIENT_PROCESSES,
    );
    const after = await memory();
    overload = {
      ...report,
      before,
      after,
      timeoutMs,
      ratePerS,
      capacityRps,
      shedding: sheddingSummary(svc.lines, traceFrom),
    };
    const traceDir = process.env.TSCUDA_BENCH_OUT;
    if (traceDir !== undefined) mkdirSync(traceDir, { recursive: true });
    if (traceDir !== undefined)
      writeFileSync(
        join(traceDir, 'overload-trace.log'),
        svc.lines.map((l) => `${(l.at - traceFrom).toFixed(0)} ${l.text}`).join('\n') + '\n',
      );
    o.log(
      `overload (open loop, ${ratePerS.toFixed(0)} req/s): ${JSON.stringify(report.byStatus)}, unanswered ${JSON.stringify(report.unanswered)}, RSS ${before?.rss.toFixed(0)} -> ${after?.rss.toFixed(0)} MiB`,
    );
    const concurrency = 512;
    stress = {
      ...(await closedLoop(stftRequest(svc.base, RPS_MIX), concurrency, o.quick ? 4 : 8, {
        backoffMs: 5,
        warmPath: '/v2/health/live',
      })),
      concurrency,
    };
    o.log(
      `stress (${concurrency} closed-loop clients): ${JSON.stringify(stress.byStatus)}, unanswered ${JSON.stringify(stress.unanswered)}`,
    );
  } else o.notes.push('overload server did not become ready');
  await svc.stop();

  return { overload, stress };
}

/** The overload part as Markdown, with its verdicts. */
export function overloadMarkdown(
  overload: OverloadReport,
  stress: (LoopReport & { concurrency: number }) | null,
  o: Pick<OverloadOptions, 'maxLag' | 'maxTurn'>,
): string[] {
  const fmt = (v: number | null, digits = 2): string =>
    v === null ? '—' : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(digits);
  const rounded = (_k: string, v: unknown): unknown => (typeof v === 'number' ? Number(v.toFixed(1)) : v);
  const rssGrowthMb =
    overload.before !== null && overload.after !== null ? overload.after.rss - overload.before.rss : null;
  const overloadVerdict = {
    rejectedFast: (overload.byStatus['429'] ?? 0) > 0 && (overload.latencyMs['429']?.p99 ?? Infinity) <= 100,
    acceptedInTime: (overload.latencyMs['200']?.p99 ?? Infinity) <= overload.timeoutMs,
    memoryBounded: rssGrowthMb !== null && rssGrowthMb < 256,
    rssGrowthMb,
  };
  return [
    '## Overload',
    '',
    `Open loop at ${overload.ratePerS.toFixed(0)} requests/s (2 x the worker's capacity, ${overload.capacityRps.toFixed(0)} req/s: the larger of the sweep's best and the 200s per second it answered in a 2 s open loop offered 4 x that), ${OVERLOAD_CONNECTIONS} connections over ${OVERLOAD_CLIENT_PROCESSES} client processes; --workers 1, --max-queued 64, --max-pending ${OVERLOAD_MAX_PENDING}, --max-lag ${o.maxLag ?? '50 (default)'}, --max-turn ${o.maxTurn ?? '25 (default)'}, --timeout ${overload.timeoutMs} ms: responses ${JSON.stringify(overload.byStatus)}; without a response ${JSON.stringify(overload.unanswered)}; latency by status from each request's scheduled start ${JSON.stringify(overload.latencyMs, rounded)} (the client processes' own event-loop delay p99, worst process: ${fmt(overload.clientLagP99Ms ?? null, 1)} ms); server memory (MiB, before -> after) ${JSON.stringify(overload.before, rounded)} -> ${JSON.stringify(overload.after, rounded)}.`,
    '',
    `- excess answered 429 quickly: ${overloadVerdict.rejectedFast ? 'yes' : 'no'} (429 p99 ${fmt(overload.latencyMs['429']?.p99 ?? null, 1)} ms, goal <= 100 ms)`,
    `- accepted requests within their timeout: ${overloadVerdict.acceptedInTime ? 'yes' : 'no'} (200 p99 ${fmt(overload.latencyMs['200']?.p99 ?? null, 0)} ms, timeout ${overload.timeoutMs} ms)`,
    overloadVerdict.rssGrowthMb === null
      ? '- memory bounded: not measured (the worker did not report its RSS)'
      : `- memory bounded: ${overloadVerdict.memoryBounded ? 'yes' : 'no'} (RSS grew ${fmt(overloadVerdict.rssGrowthMb, 0)} MiB, goal < 256 MiB)`,
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
  ];
}
