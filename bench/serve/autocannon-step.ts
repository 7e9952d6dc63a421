/** autocannon as a load step of the serve bench's sweep (its `--sweep-load autocannon`, and the warm-ups). */
import { createRequire } from 'node:module';
import { count5xx, type LoadRequest, type SweepRow } from './load.js';

interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { p50: number; p90: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  duration: number;
  '2xx': number;
  statusCodeStats?: Record<string, { count: number }>;
}
type Autocannon = (
  options: Record<string, unknown>,
  callback: (error: Error | null, result: AutocannonResult) => void,
) => { stop(): void };
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** Runs autocannon for `durationS` at `concurrency` connections (one request in flight each). */
export function autocannonStep(
  req: LoadRequest,
  concurrency: number,
  durationS: number,
  clientThreads = 0,
): Promise<Omit<SweepRow, 'server' | 'eventLoopLagP99Ms' | 'gpuBusyFraction'>> {
  const threaded = clientThreads > 1 && concurrency >= clientThreads && req.body.every((b) => b < 0x80);
  return new Promise((resolve, reject) => {
    autocannon(
      // Several client threads at high concurrency, so the load generator is not the bottleneck.
      // autocannon's threads get the body as a string (a Buffer does not survive postMessage), so
      // only bodies of ASCII bytes (see asciiSignal) can use them.
      threaded
        ? {
            url: req.base + req.path,
            method: req.method,
            headers: req.headers,
            body: req.body.toString('latin1'),
            connections: concurrency,
            pipelining: 1,
            duration: durationS,
            timeout: 30,
            workers: clientThreads,
          }
        : {
            url: req.base + req.path,
            method: req.method,
            headers: req.headers,
            body: req.body,
            connections: concurrency,
            pipelining: 1,
            duration: durationS,
            timeout: 30,
          },
      (error, r) => {
        if (error) return reject(error);
        const requests = r['2xx'] + r.non2xx;
        resolve({
          concurrency,
          durationS: r.duration,
          requests,
          // Successful responses per second, as perf_analyzer counts throughput (429s of shedding are not served requests).
          throughputRps: r['2xx'] / r.duration,
          p50Ms: r.latency.p50,
          p90Ms: r.latency.p90,
          p99Ms: r.latency.p99,
          errors: r.errors,
          non2xx: r.non2xx,
          status5xx: count5xx(Object.entries(r.statusCodeStats ?? {}).map(([code, v]) => [code, v.count])),
          timeouts: r.timeouts,
        });
      },
    );
  });
}
