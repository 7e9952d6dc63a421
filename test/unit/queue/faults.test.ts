/**
 * The queue's delivery guarantee with worker processes (the CUDA-free FakeEngine) and a real
 * redis-server: SIGTERM finishes what a worker holds and takes nothing new; SIGKILL mid-job
 * leaves the job to another worker, reported as a retry, completed once; a Redis restart (with
 * its append-only file) loses no accepted job.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { JobQueue, type QueueJobHandle } from '../../../src/queue/index.js';
import { followChildLines } from './child-lines.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const FIXTURE = join(import.meta.dirname, 'fixtures', 'fake-worker.ts');

interface WorkerProcess {
  child: ResultPromise;
  /** Job ids this process reported completed. */
  completed: string[];
}

/** Starts a worker process; resolves once it takes jobs. */
async function startWorker(
  url: string,
  queue: string,
  name: string,
  delayMs: number,
  lockMs = 500,
): Promise<WorkerProcess> {
  const child = execa('node', ['--import', 'tsx', FIXTURE], {
    env: { REDIS_URL: url, QUEUE: queue, DELAY_MS: String(delayMs), LOCK_MS: String(lockMs), WORKER: name },
    reject: false,
    buffer: false,
  });
  const completed: string[] = [];
  await followChildLines(child, `worker ${name}`, completed);
  return { child, completed };
}

const randomData = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(redisSkipReason !== undefined)('queue faults with worker processes', () => {
  const children: WorkerProcess[] = [];
  const closers: { close(): Promise<void> }[] = [];
  let redis: TestRedis | undefined;
  const worker = async (url: string, queue: string, name: string, delayMs: number): Promise<WorkerProcess> => {
    const w = await startWorker(url, queue, name, delayMs);
    children.push(w);
    return w;
  };
  afterEach(async () => {
    for (const w of children.splice(0)) {
      w.child.kill('SIGKILL');
      await w.child;
    }
    for (const c of closers.splice(0).reverse()) await c.close().catch(() => undefined);
  }, 20_000);
  afterAll(async () => {
    await redis?.dispose();
  });
  const shared = async (): Promise<TestRedis> => (redis ??= await startRedis());

  it('SIGTERM: the worker finishes and stores the jobs it holds, takes nothing new, exits 0', async () => {
    const { url } = await shared();
    const name = `term-${randomUUID()}`;
    const queue = new JobQueue({ connection: url, name });
    closers.push(queue);
    const a = await worker(url, name, 'a', 600);
    const handles: QueueJobHandle[] = [];
    for (let i = 0; i < 8; i++) handles.push(await queue.submit({ data: randomData(64), flags: ['stft'] }));
    // The fake engine has 2 lanes: the worker holds 6 jobs at once.
    await until('the worker to hold 6 jobs', async () => (await queue.counts()).active === 6);
    a.child.kill('SIGTERM');
    const exit = await a.child;
    expect(exit.exitCode).toBe(0);
    expect(a.completed).toHaveLength(6);
    const counts = await queue.counts();
    expect(counts.completed).toBe(6);
    expect(counts.active).toBe(0);
    expect(counts.prioritized + counts.waiting).toBe(2);
    const b = await worker(url, name, 'b', 0);
    const results = await Promise.all(handles.map((h) => h.result));
    // Its report comes on its stdout, possibly after the client heard of the results through Redis.
    await until('worker b to report its 2 jobs', () => b.completed.length >= 2);
    expect(b.completed).toHaveLength(2);
    expect(new Set([...a.completed, ...b.completed])).toEqual(new Set(handles.map((h) => h.id)));
    for (const r of results) expect(r.queue.attempts).toBe(1);
  }, 30_000);

  it('SIGKILL mid-job: another worker completes the job, reported as a retry, and it is completed once', async () => {
    const { url } = await shared();
    const name = `kill-${randomUUID()}`;
    const queue = new JobQueue({ connection: url, name });
    closers.push(queue);
    const a = await worker(url, name, 'a', 5000);
    const handle = await queue.submit({ data: randomData(64), flags: ['stft'] }, { attempts: 3 });
    await until('the job to run', async () => (await handle.status()) === 'running');
    a.child.kill('SIGKILL');
    await a.child;
    const b = await worker(url, name, 'b', 0);
    const result = await handle.result;
    expect(result.queue).toMatchObject({ jobId: handle.id, worker: 'b', attempts: 2, stalls: 1 });
    await until('worker b to report the job', () => b.completed.length >= 1);
    expect(a.completed).toEqual([]);
    expect(b.completed).toEqual([handle.id]);
    expect(Array.from(result.filtered!)).toHaveLength(64);
  }, 30_000);

  it('a job whose worker is killed on every attempt fails with the reason once its attempts are spent', async () => {
    const { url } = await shared();
    const name = `exhaust-${randomUUID()}`;
    const queue = new JobQueue({ connection: url, name });
    closers.push(queue);
    const handle = await queue.submit({ data: randomData(64), flags: ['stft'] }, { attempts: 2 });
    for (const w of ['a', 'b']) {
      const p = await worker(url, name, w, 60_000);
      await until(
        `worker ${w} to run the job`,
        async () =>
          (await queue.view(handle.id)).attempts === (w === 'a' ? 1 : 2) && (await handle.status()) === 'running',
      );
      p.child.kill('SIGKILL');
      await p.child;
    }
    await worker(url, name, 'c', 0);
    const error = await handle.result.catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'QueueJobError',
      reason: expect.stringMatching(/gave up after 2 attempts: its worker stopped mid-job 2 time/),
    });
  }, 30_000);

  it('Redis stopped and restarted (append-only file): every job accepted before the outage completes', async () => {
    const persistent = await startRedis({ persistent: true });
    closers.push({ close: () => persistent.dispose() });
    const name = `restart-${randomUUID()}`;
    const queue = new JobQueue({ connection: persistent.url, name, pollIntervalMs: 200 });
    closers.push(queue);
    const handles: QueueJobHandle[] = [];
    for (let i = 0; i < 30; i++)
      handles.push(await queue.submit({ data: randomData(64), flags: ['stft'], label: String(i) }));
    const a = await worker(persistent.url, name, 'a', 100);
    await until('a few jobs to complete', () => a.completed.length >= 4);
    await persistent.stop();
    // The client learns of the outage from its socket's close event, a moment after the server exits.
    await until('the client to see Redis gone', () => !queue.reachable);
    await new Promise((r) => setTimeout(r, 1000));
    await persistent.start();
    const results = await Promise.all(handles.map((h) => h.result));
    expect(results.map((r) => r.queue.jobId).sort()).toEqual(handles.map((h) => h.id).sort());
    expect(new Set(a.completed).size).toBe(a.completed.length);
    await until('the client to be reconnected', () => queue.reachable);
  }, 45_000);
});
