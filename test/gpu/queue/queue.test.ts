/**
 * The queue on GPUs: two `tscuda worker` processes (one per GPU when there are two, else both on
 * GPU 0) over a real redis-server run a mix of jobs; each result equals what the in-process
 * JobEngine computes for the same spec (within float tolerance), both workers take part, and
 * SIGTERM stops both cleanly. redis-server comes from TSCUDA_REDIS_SERVER or PATH.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { JobEngine, type JobResult, type JobSpec } from '../../../src/engine/index.js';
import { JobQueue } from '../../../src/queue/index.js';
import { Device } from '../../../src/runtime/device.js';
import { redisSkipReason, startRedis, type TestRedis } from '../../unit/queue/redis-server.js';
import { relL2 } from '../engine/reference.js';
import { gpu } from '../gpu-available.js';

const reason = !gpu.available ? gpu.reason : redisSkipReason;
if (reason !== undefined && reason !== '') console.log(`queue GPU test skipped: ${reason}`);

const ROOT = join(import.meta.dirname, '..', '..', '..');
const MAIN = join(ROOT, 'src', 'cli', 'main.ts');

/** A job mix: whole-series stft + cycles, framed stft, wavelet, over fresh random series. */
function specs(): JobSpec[] {
  const series = (b: number, n: number): Float32Array =>
    Float32Array.from({ length: b * n }, (_, i) => Math.sin((2 * Math.PI * 13 * (i % n)) / n) + (Math.random() - 0.5));
  const out: JobSpec[] = [];
  for (let i = 0; i < 6; i++) {
    out.push({
      data: series(4, 4096),
      batch: 4,
      fs: 1000,
      flags: ['stft', 'cycles'],
      passBand: [5, 200],
      bands: [
        [1, 20],
        [20, 120],
      ],
      previewBins: 64,
      label: `sc${i}`,
    });
    out.push({
      data: series(2, 8192),
      batch: 2,
      fs: 1000,
      flags: ['stft'],
      nperseg: 256,
      passBand: [10, 300],
      previewBins: 32,
      label: `framed${i}`,
    });
    out.push({
      data: series(2, 2048),
      batch: 2,
      fs: 500,
      flags: ['wavelet'],
      freqs: [5, 10, 20, 40],
      label: `wav${i}`,
    });
  }
  return out;
}

function expectClose(actual: JobResult, expected: JobResult, label: string): void {
  for (const field of ['filtered', 'spectrum', 'bandPowers', 'bandWaves', 'waveletPower'] as const) {
    const e = expected[field];
    const a = actual[field];
    if (e === undefined) {
      expect(a, `${label}.${field}`).toBeUndefined();
      continue;
    }
    expect(a?.constructor, `${label}.${field} type`).toBe(e.constructor);
    expect(relL2(a!, e), `${label}.${field}`).toBeLessThan(1e-5);
  }
  expect(
    actual.dominant?.map((d) => d.frequency),
    `${label}.dominant`,
  ).toEqual(expected.dominant?.map((d) => d.frequency));
  expect(actual.frames).toBe(expected.frames);
}

describe.skipIf(reason !== undefined && reason !== '')('queue with two GPU worker processes', () => {
  let redis: TestRedis | undefined;
  const workers: ResultPromise[] = [];
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await Promise.allSettled(workers);
    await redis?.dispose();
  });

  it("runs a job mix on two workers with the in-process engine's results", async () => {
    redis = await startRedis();
    const name = `gpu-${randomUUID()}`;
    const devices = Device.count() >= 2 ? ['0', '1'] : ['0', '0'];
    for (const [i, device] of devices.entries()) {
      const child = execa(
        'node',
        [
          '--import',
          'tsx',
          MAIN,
          'worker',
          '--redis',
          redis.url,
          '--queue',
          name,
          '--devices',
          device,
          '--lanes',
          '2',
          '--lock-ms',
          '10000',
          '--log-interval',
          '0',
          '--name',
          `gpu${i}`,
        ],
        {
          cwd: ROOT,
          reject: false,
          buffer: false,
        },
      );
      workers.push(child);
      await new Promise<void>((resolve, reject) => {
        let text = '';
        child.stderr!.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('taking jobs from queue')) resolve();
        });
        void child.then((r) => reject(new Error(`worker gpu${i} exited ${String(r.exitCode)}: ${text}`)));
      });
    }
    const queue = new JobQueue({ connection: redis.url, name });
    const engine = new JobEngine({ device: 0, lanes: 2, label: 'reference' });
    try {
      const jobs = specs();
      const handles = await Promise.all(jobs.map((spec) => queue.submit(spec)));
      const expected = await Promise.all(jobs.map((spec) => engine.submit(spec).result));
      const results = await Promise.all(handles.map((h) => h.result));
      results.forEach((r, i) => expectClose(r, expected[i]!, jobs[i]!.label!));
      const by = new Set(results.map((r) => r.queue.worker));
      expect(by).toEqual(new Set(['gpu0', 'gpu1']));
      for (const r of results) expect(r.queue.attempts).toBe(1);
      if (devices[1] === '1') expect(new Set(results.map((r) => r.device))).toEqual(new Set([0, 1]));
      console.log(
        `queue GPU test: ${results.length} jobs on devices ${devices.join(',')}; gpu0 ran ${results.filter((r) => r.queue.worker === 'gpu0').length}, gpu1 ${results.filter((r) => r.queue.worker === 'gpu1').length}`,
      );
    } finally {
      await engine.close();
      await queue.close();
    }
    for (const w of workers) w.kill('SIGTERM');
    const exits = await Promise.all(workers);
    expect(exits.map((e) => e.exitCode)).toEqual([0, 0]);
  }, 180_000);
});
