/**
 * One submitting process of the queue bench (a front, as `tscuda serve --redis` processes are):
 * a JobQueue that, once told `go` on stdin, runs `--jobs` jobs of the mix with `--window` in
 * flight and prints `done <jobs> <samples> <ms>`. Prints `ready` once warmed up (a few jobs, so
 * connections and the workers' plans are set up), and `cpu <user µs> <system µs>` on SIGUSR2.
 *   tsx bench/queue/client-child.ts --redis URL --queue NAME --jobs N --window W [--blob-redis URL ...]
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { JobSpec } from '../../src/engine/index.js';
import { JobQueue } from '../../src/queue/index.js';
import { mixJob, throughput } from './mix.js';

const { values } = parseArgs({
  options: {
    redis: { type: 'string' },
    queue: { type: 'string' },
    jobs: { type: 'string' },
    window: { type: 'string' },
    'blob-redis': { type: 'string', multiple: true },
  },
});
if (
  values.redis === undefined ||
  values.queue === undefined ||
  values.jobs === undefined ||
  values.window === undefined
)
  throw new Error('client-child: --redis, --queue, --jobs and --window are required');
const queue = new JobQueue({
  connection: values.redis,
  name: values.queue,
  maxResultBytes: 512 * 2 ** 20,
  blobStores: values['blob-redis'],
});
const run = async (spec: JobSpec): Promise<unknown> => (await queue.submit(spec)).result;
const specs = Array.from({ length: 16 }, mixJob);
for (let i = 0; i < 4; i++) await run(specs[i]!);
process.on('SIGUSR2', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`cpu ${user} ${system}\n`);
});
process.on('SIGTERM', () => void queue.close().then(() => process.exit(0)));
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line !== 'go') return;
  void throughput(Number(values.jobs), Number(values.window), specs, run).then((t) =>
    process.stdout.write(`done ${t.jobs} ${t.samples} ${t.ms}\n`),
  );
});
process.stdout.write('ready\n');
