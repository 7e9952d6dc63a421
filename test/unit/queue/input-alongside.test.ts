/**
 * Small samples go to Redis alongside their job's add (not before it), on another connection, so
 * a worker may take the job before they land. Forced here by holding the client's SET back: a
 * worker waits for late samples and runs the job; samples that never land fail the job with the
 * reason (no hang) and make the client's submit reject once they bounce off the worker's marker;
 * a SET that fails rejects the submit and removes the job; large samples are still stored first.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BlobChannel, BlobReplyError } from '../../../src/queue/blob-channel.js';
import { JobQueue, runQueueWorker, type QueueJobSettled, type QueueWorker } from '../../../src/queue/index.js';
import { INPUT_ALONGSIDE_MAX_BYTES, INPUT_ARRIVAL_WAIT_MS } from '../../../src/queue/options.js';
import type { RespArg, RespReply } from '../../../src/queue/resp.js';
import { FakeEngine } from '../server/fake-engine.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const randomData = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
const until = async (done: () => boolean, ms = 5000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

type Send = (args: readonly RespArg[], into?: (bytes: number) => Buffer) => Promise<RespReply>;
const proto = BlobChannel.prototype as unknown as { send: Send };
const originalSend = proto.send;

/** What the client's SET of samples meets: held until `release` resolves, or an error reply. */
let gate: { hold: Promise<void> } | { fail: string } | undefined;
/** The blob commands on samples keys, in the order sent. */
let seen: { cmd: string; key: string; nx: boolean; bytes: number }[] = [];

describe.skipIf(redisSkipReason !== undefined)('samples sent alongside their job', () => {
  let redis: TestRedis;
  let peek: Redis;
  const open: { close(): Promise<void> }[] = [];
  const queueOf = (): JobQueue => {
    const q = new JobQueue({ connection: redis.url, name: `al-${randomUUID()}` });
    open.push(q);
    return q;
  };
  const workerOf = async (queue: JobQueue): Promise<QueueWorker> => {
    const w = await runQueueWorker({ connection: redis.url, engine: new FakeEngine(), name: queue.name });
    open.push(w);
    return w;
  };
  const submitted = (): { key: string; id: string } => {
    const key = seen.find((c) => c.cmd === 'SET' && c.bytes > 1)!.key;
    return { key, id: key.slice(key.lastIndexOf(':') + 1) };
  };

  beforeAll(async () => {
    redis = await startRedis();
    peek = new Redis(redis.url);
    proto.send = function (this: BlobChannel, args, into) {
      const [cmd, key, value] = args;
      if (typeof key === 'string' && key.includes(':blob:in:')) {
        const bytes = value instanceof Uint8Array ? value.byteLength : 0;
        seen.push({ cmd: String(cmd), key, nx: args.includes('NX'), bytes });
        // The client's samples (a worker's marker is 1 byte).
        if (cmd === 'SET' && bytes > 1 && gate !== undefined) {
          if ('fail' in gate) return Promise.reject(new BlobReplyError(gate.fail));
          return gate.hold.then(() => originalSend.call(this, args, into));
        }
      }
      return originalSend.call(this, args, into);
    };
  });
  beforeEach(() => {
    gate = undefined;
    seen = [];
  });
  afterAll(async () => {
    proto.send = originalSend;
    for (const o of open.reverse()) await o.close().catch(() => undefined);
    peek?.disconnect();
    await redis?.dispose();
  }, 30_000);

  it('a worker that takes the job before its samples land waits for them and runs it', async () => {
    const queue = queueOf();
    const worker = await workerOf(queue);
    let release!: () => void;
    gate = { hold: new Promise((r) => (release = r)) };
    const data = randomData(4 * 256);
    const submitting = queue.submit({ data, batch: 4, flags: ['stft'] });
    await until(() => seen.some((c) => c.cmd === 'SET'));
    const { key } = submitted();
    // The worker has taken the job and found no samples, twice: the race happened.
    await until(() => seen.filter((c) => c.cmd === 'GET' && c.key === key).length >= 2);
    expect(worker.counts).toEqual({ completed: 0, failed: 0, retried: 0 });
    release();
    const handle = await submitting;
    const result = await handle.result;
    expect(Array.from(result.filtered!)).toEqual(Array.from(data, (v) => Math.fround(v * 2)));
    expect(result.queue.attempts).toBe(1);
    expect(worker.counts).toEqual({ completed: 1, failed: 0, retried: 0 });
  });

  it('samples that never land fail the job with the reason, and bounce off the marker so the submit rejects', async () => {
    const queue = queueOf();
    const worker = await workerOf(queue);
    const settled: QueueJobSettled[] = [];
    worker.on('settled', (e) => settled.push(e));
    let release!: () => void;
    gate = { hold: new Promise((r) => (release = r)) };
    const started = Date.now();
    const submitting = queue.submit({ data: randomData(256), flags: ['stft'] });
    let outcome: unknown;
    void submitting.then(
      () => (outcome = 'resolved'),
      (e: unknown) => (outcome = e),
    );
    await until(() => settled.length > 0, INPUT_ARRIVAL_WAIT_MS + 3000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(INPUT_ARRIVAL_WAIT_MS - 50);
    expect(settled[0]).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/samples never arrived/) });
    const { key, id } = submitted();
    expect(await queue.view(id)).toMatchObject({
      status: 'error',
      error: { name: 'QueueJobError', reason: expect.stringMatching(/never arrived/) },
    });
    expect(outcome).toBeUndefined();
    // The samples land now, too late: they are not stored, the marker stays, and the submit says so.
    release();
    await expect(submitting).rejects.toMatchObject({
      name: 'QueueUnavailableError',
      message: expect.stringMatching(/gave up waiting for its samples/),
    });
    expect(await peek.get(key)).toBe('x');
    expect(await peek.pttl(key)).toBeGreaterThan(0);
    expect(worker.counts.completed).toBe(0);
  });

  it('a SET that fails rejects the submit and removes the job (Redis out of memory: QueueFullError)', async () => {
    const queue = queueOf();
    gate = { fail: 'OOM command not allowed when used memory > maxmemory' };
    await expect(queue.submit({ data: randomData(256), flags: ['stft'] })).rejects.toMatchObject({
      name: 'QueueFullError',
      message: expect.stringMatching(/out of memory.*OOM/),
    });
    const { id } = submitted();
    let view = await queue.view(id);
    for (let i = 0; i < 100 && view.status !== 'unknown'; i++)
      view = await new Promise((r) => setTimeout(r, 10)).then(() => queue.view(id));
    expect(view.status).toBe('unknown');
    expect(await queue.counts()).toMatchObject({ waiting: 0, prioritized: 0, active: 0 });
  });

  it('stores large samples before it adds the job, without waiting workers', async () => {
    const queue = queueOf();
    await workerOf(queue);
    const n = INPUT_ALONGSIDE_MAX_BYTES / 4 + 256;
    const small = await queue.submit({ data: randomData(256), flags: ['stft'] });
    await small.result;
    expect(seen.find((c) => c.cmd === 'SET')?.nx).toBe(true);
    seen = [];
    const large = await queue.submit({ data: randomData(n), flags: ['stft'], previewBins: 4 });
    expect((await large.result).queue.attempts).toBe(1);
    expect(seen.find((c) => c.cmd === 'SET')).toMatchObject({ nx: false, bytes: n * 4 });
  });
});
