/**
 * The serve bench's fusing rows: small job requests at c=64 against `tscuda serve` with fusing
 * off (`--max-batch-delay-ms 0`) and on, alternated: req/s, p99, and GPU submissions per request
 * (engine jobs per answered request, from the tscuda_fused_job_requests histogram).
 */
import { DEFAULT_LIMITS } from '../../src/server/index.js';
import { closedLoopStep } from './load-processes.js';
import { RPS_MIX, stftRequest } from './mixes.js';
import { gauges, scrape, startTscuda, waitReady, type Service } from './services.js';
import type { Settings } from './settings.js';

/** One fusing row. */
export interface FusionRow {
  maxBatchDelayMs: number;
  workers: number;
  concurrency: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Engine jobs per answered request (1 with fusing off: each request is its own job). */
  submissionsPerRequest: number | null;
  /** Engine jobs that ran two or more requests, during the best step. */
  fusedJobs: number | null;
}

/** Whether this tree's server fuses requests at all (the fusion engineer's maxBatchDelayMs limit). */
export const FUSING_AVAILABLE = 'maxBatchDelayMs' in DEFAULT_LIMITS;

const CONCURRENCY = 64;

/** Sum over workers of a series (a histogram's _count or _sum, a counter). */
function total(text: string, name: string): number {
  return gauges(text, name).reduce((a, b) => a + b, 0);
}

async function measure(
  svc: Service,
  s: Settings,
  delayMs: number,
): Promise<Omit<FusionRow, 'maxBatchDelayMs' | 'workers' | 'concurrency'>> {
  const before = await scrape(svc.base);
  const r = await closedLoopStep(stftRequest(svc.base, RPS_MIX), CONCURRENCY, s.floorStepS, s.clientProcesses);
  const after = await scrape(svc.base);
  const jobs = total(after, 'tscuda_fused_job_requests_count') - total(before, 'tscuda_fused_job_requests_count');
  const requests = total(after, 'tscuda_fused_job_requests_sum') - total(before, 'tscuda_fused_job_requests_sum');
  const fused = total(after, 'tscuda_fused_jobs_total') - total(before, 'tscuda_fused_jobs_total');
  return {
    rps: r.throughputRps,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    submissionsPerRequest: requests > 0 ? jobs / requests : delayMs === 0 ? 1 : null,
    fusedJobs: fused,
  };
}

/** The fusing rows (null when this tree does not fuse: the rows are wired and wait for it). */
export async function runFusionRows(
  s: Settings,
  root: string,
  port: number,
  notes: string[],
  log: (l: string) => void,
): Promise<FusionRow[] | null> {
  if (!FUSING_AVAILABLE) {
    notes.push('fusing rows not run: this tree has no maxBatchDelayMs (request fusing)');
    return null;
  }
  const delays = [0, s.fusionDelayMs];
  const services: Service[] = [];
  try {
    for (const [i, d] of delays.entries())
      services.push(
        startTscuda(
          root,
          port + i,
          [
            '--workers',
            String(s.workers),
            '--lanes',
            '4',
            '--max-queued',
            '1024',
            '--max-batch-delay-ms',
            String(d),
            ...s.floorServeArgs,
          ],
          s.verbose,
        ),
      );
    for (const svc of services) {
      const up = await waitReady(svc.base, 90_000, svc.child);
      if (!up.ready) {
        notes.push(`fusing rows not run: tscuda serve not ready: ${up.reason}`);
        return null;
      }
      await closedLoopStep(stftRequest(svc.base, RPS_MIX), CONCURRENCY, 1, s.clientProcesses); // warm-up
    }
    const best: (FusionRow | null)[] = delays.map(() => null);
    for (let rep = 0; rep < s.reps; rep++)
      for (const [i, d] of delays.entries()) {
        const m = await measure(services[i]!, s, d);
        if (best[i] === null || m.rps > best[i]!.rps)
          best[i] = { maxBatchDelayMs: d, workers: s.workers, concurrency: CONCURRENCY, ...m };
      }
    const rows = best.filter((r): r is FusionRow => r !== null);
    for (const r of rows)
      log(
        `fusing ${r.maxBatchDelayMs === 0 ? 'off' : `on (${r.maxBatchDelayMs} ms)`}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99Ms} ms, ${r.submissionsPerRequest?.toFixed(3) ?? '?'} GPU submissions per request`,
      );
    return rows;
  } finally {
    for (const svc of services) await svc.stop();
  }
}

/** The fusing rows as Markdown. */
export function fusionMarkdown(rows: readonly FusionRow[]): string[] {
  return [
    '## Fusing small requests',
    '',
    `Small bodies (${RPS_MIX.batch} x ${RPS_MIX.n} f32) at c=${CONCURRENCY}, fusing off (--max-batch-delay-ms 0) and on, alternated; GPU submissions per request: engine jobs per answered request.`,
    '',
    '| --max-batch-delay-ms | workers | req/s | p50 ms | p99 ms | GPU submissions per request | fused jobs |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.maxBatchDelayMs} | ${r.workers} | ${r.rps.toFixed(0)} | ${r.p50Ms} | ${r.p99Ms} | ${r.submissionsPerRequest?.toFixed(3) ?? '—'} | ${r.fusedJobs ?? '—'} |`,
    ),
    '',
  ];
}
