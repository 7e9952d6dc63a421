/**
 * A process of the queue bench's floor runs (floor.ts): `--role worker` takes floor jobs with
 * `--concurrency` at once until SIGTERM; `--role client` runs `--jobs` mix jobs with `--window` in
 * flight once told `go` on stdin and prints `done <jobs> <samples> <ms>`. Both print `ready` when
 * they are set up, and `cpu <user µs> <system µs>` on SIGUSR2 (the protocol of workers.ts).
 *   tsx bench/queue/floor-child.ts --role worker|client --redis URL --queue NAME [--blob-redis URL ...] [--concurrency N] [--jobs N --window W]
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { FLOOR_MIX, floorClient, floorThroughput, floorWorker } from './floor.js';

const { values } = parseArgs({
  options: {
    role: { type: 'string' },
    redis: { type: 'string' },
    queue: { type: 'string' },
    'blob-redis': { type: 'string', multiple: true },
    concurrency: { type: 'string', default: '12' },
    jobs: { type: 'string', default: '0' },
    window: { type: 'string', default: '1' },
  },
});
if (values.redis === undefined || values.queue === undefined || (values.role !== 'worker' && values.role !== 'client'))
  throw new Error('floor-child: --role worker|client, --redis and --queue are required');
const stores = values['blob-redis'] ?? [];
process.on('SIGUSR2', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`cpu ${user} ${system}\n`);
});
if (values.role === 'worker') {
  const worker = await floorWorker(values.redis, values.queue, stores, Number(values.concurrency));
  process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
} else {
  const client = await floorClient(values.redis, values.queue, stores);
  for (let i = 0; i < 4; i++) await client.run(FLOOR_MIX);
  process.on('SIGTERM', () => void client.close().then(() => process.exit(0)));
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line !== 'go') return;
    const jobs = Number(values.jobs);
    void floorThroughput(client, FLOOR_MIX, jobs, Number(values.window)).then((ms) =>
      process.stdout.write(`done ${jobs} ${(jobs * FLOOR_MIX.sampleBytes) / 4} ${ms}\n`),
    );
  });
}
process.stdout.write('ready\n');
