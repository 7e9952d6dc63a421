/**
 * The HTTP path alone (no GPU): `tscuda`'s server over a CUDA-free engine that answers at once,
 * loaded like the serve bench's throughput rows (16 x 65536 f32 binary bodies, binary answers,
 * a node:http closed loop). Shows what the transport and the server's body handling cost:
 *   tsx bench/probe/http-transport.ts [concurrency] [seconds] [server | client]
 * With `server` or `client` as the third argument the two run in separate processes; with
 * `--gpu` the server runs the real JobEngine (4 lanes) and the client prints the server's mean
 * request, queue, compute and GPU durations from /metrics; `--processes P` splits the client over
 * P processes.
 */
import { createServer } from '../../src/server/index.js';
import { FakeEngine } from '../../test/unit/server/fake-engine.js';
import { type LoadRequest } from '../serve/load.js';
import { closedLoopStep } from '../serve/load-processes.js';

const concurrency = Number(process.argv[2] ?? 16);
const seconds = Number(process.argv[3] ?? 3);
const role = process.argv[4];
const batch = 16;
const n = 65536;
const port = 8731;
const base = `http://127.0.0.1:${port}`;

if (role !== 'client') {
  const engine = process.argv.includes('--gpu')
    ? new (await import('../../src/engine/index.js')).JobEngine({ lanes: 4, label: 'probe' })
    : new FakeEngine({ precision: 'f32' });
  const server = createServer({ engine, limits: { maxEventLoopDelayMs: 0 } });
  await server.listen({ port });
  if (role === 'server') {
    // An orderly exit on SIGINT, so `node --cpu-prof` writes its profile.
    process.once('SIGINT', () => process.exit(0));
    console.log('listening');
    await new Promise(() => {});
  }
}
const data = new Float32Array(batch * n).map((_, i) => Math.sin(i));
const req: LoadRequest = {
  base,
  path: `/v1/stft?dtype=f32&batch=${batch}&fs=1000&passBand=20,200&previewBins=256`,
  method: 'POST',
  headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
  body: Buffer.from(data.buffer),
};
const processesArg = process.argv.indexOf('--processes');
const row = await closedLoopStep(
  req,
  concurrency,
  seconds,
  processesArg > 0 ? Number(process.argv[processesArg + 1]) : 1,
);
const metrics = await (await fetch(`${base}/metrics`)).text();
const mean = (name: string): string => {
  const sum = metrics.match(new RegExp(`^${name}_sum\\{endpoint="/v1/stft"\\} (\\S+)`, 'm'))?.[1];
  const count = metrics.match(new RegExp(`^${name}_count\\{endpoint="/v1/stft"\\} (\\S+)`, 'm'))?.[1];
  return sum && count ? ((1000 * Number(sum)) / Number(count)).toFixed(2) : '?';
};
console.log(
  `mean ms: request ${mean('tscuda_request_duration_seconds')}, queue ${mean('tscuda_queue_duration_seconds')}, compute ${mean('tscuda_compute_duration_seconds')}, gpu ${mean('tscuda_gpu_compute_duration_seconds')}`,
);
console.log(
  JSON.stringify({
    concurrency,
    rps: Math.round(row.throughputRps),
    gsamples: ((row.throughputRps * batch * n) / 1e9).toFixed(3),
    p50: row.p50Ms,
    p99: row.p99Ms,
    non2xx: row.non2xx,
  }),
);
process.exit(0);
