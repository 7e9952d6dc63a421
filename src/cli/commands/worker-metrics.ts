/**
 * `tscuda worker --metrics-port`: /metrics (Prometheus) and /ready over HTTP. The port is bound
 * before the queue worker exists, so a port in use is one line and exit 1 before any job is taken
 * (bound after, the error left a worker holding jobs and a process that did not exit); the worker
 * is attached once it runs, and /ready says "starting" until then.
 */
import { createServer, type Server } from 'node:http';
import { Registry } from 'prom-client';
import { registerQueueMetrics } from '../../queue/metrics.js';
import type { QueueWorker } from '../../queue/worker.js';

/** The metrics endpoint: listening, its worker attached later. */
export interface WorkerMetrics {
  /** The port bound (the one asked for, or the one the system picked for 0). */
  readonly port: number;
  /** Serves `worker`'s metrics and readiness from now on. */
  attach(worker: QueueWorker): void;
  /** Stops listening. */
  close(): void;
}

/** The words for a failure to listen on `port`. */
function listenFailure(error: unknown, port: number): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'EADDRINUSE') return `--metrics-port ${port}: the port is in use`;
  if (code === 'EACCES') return `--metrics-port ${port}: permission denied (ports below 1024 need privileges)`;
  return `--metrics-port ${port}: cannot listen: ${(error as Error).message}`;
}

/** Listens on `port` (every interface, as Prometheus scrapes from elsewhere); rejects with one line naming the option when it cannot. */
export function listenMetrics(port: number): Promise<WorkerMetrics> {
  const registry = new Registry();
  let worker: QueueWorker | undefined;
  const server: Server = createServer((request, response) => {
    if (request.url === '/metrics') {
      // Every scrape is answered: a collector that fails is a 500, never a request left open (or an unhandled rejection).
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (error: unknown) =>
          response
            .writeHead(500, { 'content-type': 'text/plain' })
            .end(`metrics failed: ${(error as Error)?.message ?? String(error)}\n`),
      );
    } else if (request.url === '/ready') {
      const reason =
        worker === undefined
          ? 'starting'
          : worker.lostError !== undefined
            ? 'the engine lost its GPU context'
            : worker.reachable
              ? null
              : 'Redis is not reachable (reconnecting)';
      response
        .writeHead(reason === null ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify(reason === null ? { ready: true } : { ready: false, reason }));
    } else response.writeHead(404).end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error) => reject(new Error(listenFailure(error, port))));
    server.listen(port, () =>
      resolve({
        port: (server.address() as { port: number }).port,
        attach(w) {
          worker = w;
          registerQueueMetrics(registry, w);
        },
        close() {
          server.close();
        },
      }),
    );
  });
}
