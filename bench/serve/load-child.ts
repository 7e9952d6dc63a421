/**
 * One client process of closedLoopProcesses / openLoopProcesses (load.ts): argv[2] is its JSON
 * config (the request, with its body in a file, its share of the clients or of the rate, and the
 * duration). It opens its connections,
 * prints `ready`, starts the loop when stdin says `go`, and prints its LoopReport (with samples).
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { closedLoop, openLoop, send, type LoadRequest } from './load.js';

interface ChildConfig {
  base: string;
  path: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  bodyFile: string;
  durationS: number;
  /** A closed loop of this many clients, or */
  concurrency?: number;
  /** an open loop at this rate over `connections`. */
  ratePerS?: number;
  connections?: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
const req: LoadRequest = {
  base: config.base,
  path: config.path,
  method: config.method,
  headers: config.headers,
  body: readFileSync(config.bodyFile),
};
// One GET per client first, so every child has compiled its code paths before the clock starts.
const agent = new Agent({ keepAlive: true });
await Promise.all(
  Array.from({ length: config.concurrency ?? config.connections ?? 1 }, () =>
    send({ ...req, method: 'GET', path: '/v2/health/live', body: Buffer.alloc(0), headers: {} }, agent),
  ),
);
agent.destroy();
process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  process.stdin.once('data', () => resolve());
});
const report =
  config.ratePerS !== undefined
    ? await openLoop(req, config.ratePerS, config.durationS, {
        connections: config.connections ?? 256,
        keepSamples: true,
        warmPath: '/v2/health/live',
      })
    : await closedLoop(req, config.concurrency ?? 1, config.durationS, {
        keepSamples: true,
        warmPath: '/v2/health/live',
      });
// Exit once the report is written: stdout to a pipe is asynchronous, and exiting at once cut a
// large report short.
process.stdout.write(JSON.stringify(report), () => process.exit(0));
