/**
 * The HTTP floor of the serve bench: a bare `node:http` server (no fastify, no tscuda) in
 * `workers` processes sharing one port through node:cluster, as `tscuda serve --workers N` does.
 * Each request's body is read fully into memory (one Buffer of its content-length, as tscuda's
 * pooled body reader fills one), then answered with precomputed bytes of the size tscuda answers.
 * What it costs per request is Node's transport alone: the floor a server in Node can reach.
 *
 *   node --import tsx bench/serve/floor-server.ts <port> <workers> '{"<request path>": <answer bytes>, ...}'
 *
 * `GET /v2/health/ready` answers 200 once this process listens (waitReady polls it); SIGTERM stops
 * every process, exit 0.
 */
import cluster from 'node:cluster';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const port = Number(process.argv[2]);
const workers = Number(process.argv[3] ?? 1);
const answerSizes = JSON.parse(process.argv[4] ?? '{}') as Record<string, number>;
for (const [name, v] of [['port', port], ['workers', workers], ...Object.entries(answerSizes)] as const)
  if (!Number.isSafeInteger(v) || v < 0)
    throw new Error(`floor-server: ${name} must be an integer >= 0, got ${JSON.stringify(v)}`);

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
  let listening = 0;
  cluster.on('listening', () => {
    if (++listening === workers) console.error(`floor-server: ${workers} workers listening on ${port}`);
  });
  // A worker that dies is a failed floor: say so and stop, rather than measure fewer processes.
  cluster.on('exit', (worker, code) => {
    if (stopping) return;
    console.error(`floor-server: worker ${worker.id} exited with ${code}`);
    process.exit(1);
  });
  let stopping = false;
  process.once('SIGTERM', () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.kill();
    setTimeout(() => process.exit(0), 200).unref();
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  });
} else {
  // Precomputed answers by request path (the query included): one Map lookup per request.
  const answers = new Map(Object.entries(answerSizes).map(([path, bytes]) => [path, Buffer.alloc(bytes, 0x3f)]));
  const empty = Buffer.alloc(0);
  const ok = Buffer.from('{"ready":true}');
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': ok.byteLength });
      res.end(ok);
      return;
    }
    const length = Number(req.headers['content-length'] ?? 0);
    // One Buffer of the body's size, each chunk copied in once: the copy tscuda's body reader makes too.
    const body = Buffer.allocUnsafe(length);
    let filled = 0;
    req.on('data', (chunk: Buffer) => {
      filled += chunk.copy(body, filled);
    });
    req.on('end', () => {
      if (filled !== length) {
        res.writeHead(400).end();
        return;
      }
      const answer = answers.get(req.url ?? '') ?? empty;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': answer.byteLength });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => {
    if (cluster.isPrimary) console.error(`floor-server: 1 process listening on ${port}`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}
