/**
 * The blob channel against a real redis-server: values round-trip bit for bit (pieced or whole,
 * small and large, many in flight), a password and a database are honoured, an error reply
 * rejects only its command, a command sent while Redis is away completes once it is back, and
 * which connections go through ioredis instead.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobChannel, BlobReplyError, channelTarget } from '../../../src/queue/blob-channel.js';
import { BlobPool } from '../../../src/queue/blob-pool.js';
import { redisSkipReason, startRedis, type TestRedis } from './redis-server.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const bytes = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 131 + 7) & 255;
  return b;
};

const bulk = async (channel: BlobChannel, key: string): Promise<Buffer | null> => {
  const reply = await channel.send(['GET', key]);
  if (reply.kind !== 'bulk') throw new Error(`not a bulk reply: ${JSON.stringify(reply)}`);
  return reply.value;
};

describe('channelTarget', () => {
  it('serves plain, TLS and Unix-socket connections with credentials and a database, and leaves the rest to ioredis', () => {
    expect(channelTarget('redis://u%40x:p%3As@10.0.0.5:6380/3')).toEqual({
      host: '10.0.0.5',
      port: 6380,
      username: 'u@x',
      password: 'p:s',
      db: 3,
    });
    expect(channelTarget('rediss://h')).toMatchObject({ host: 'h', port: 6379, tls: {}, db: 0 });
    expect(channelTarget('redis://[::1]:7000')).toMatchObject({ host: '::1', port: 7000 });
    expect(channelTarget({ path: '/run/redis.sock', password: 'x', maxRetriesPerRequest: null })).toMatchObject({
      path: '/run/redis.sock',
      password: 'x',
      db: 0,
    });
    expect(channelTarget('redis://h:6379?family=6')).toBeUndefined();
    expect(channelTarget({ host: 'h', keyPrefix: 'p:' })).toBeUndefined();
    expect(channelTarget({ sentinels: [{ host: 'h', port: 26379 }], name: 'm' })).toBeUndefined();
  });
});

describe.skipIf(redisSkipReason !== undefined)('blob channel over a real Redis', () => {
  let redis: TestRedis;
  let secured: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ persistent: true });
    // A password from the start would fail startRedis' readiness check (a PING without AUTH).
    secured = await startRedis();
    const admin = new Redis(secured.url);
    await admin.config('SET', 'requirepass', 's3cret');
    admin.disconnect();
  });
  afterAll(async () => {
    await redis?.dispose();
    await secured?.dispose();
  });

  it('round-trips values of every size bit for bit, many in flight, pieced or whole', async () => {
    const channel = new BlobChannel(channelTarget(redis.url)!, 'test-rt');
    try {
      const sizes = [0, 1, 5, 4096, 65_537, 300_000, 3 * 2 ** 20 + 3];
      await Promise.all(sizes.map((n) => channel.send(['SET', `rt:${n}`, bytes(n), 'PX', '60000'])));
      const back = await Promise.all(sizes.map((n) => bulk(channel, `rt:${n}`)));
      back.forEach((b, i) => expect(b?.equals(bytes(sizes[i]!))).toBe(true));
      const whole = bytes(100_003);
      await channel.send([
        'SET',
        'rt:pieces',
        [whole.subarray(0, 10), new Uint8Array(0), whole.subarray(10, 70_000), whole.subarray(70_000)],
      ]);
      expect((await bulk(channel, 'rt:pieces'))?.equals(whole)).toBe(true);
      expect(await bulk(channel, 'rt:missing')).toBeNull();
      // A reply read into memory the caller gives (a worker's pool): exactly that memory, asked for only when there is a value.
      const given: number[] = [];
      const into = (n: number): Buffer => (given.push(n), Buffer.alloc(n));
      const read = await channel.send(['GET', 'rt:4096'], into);
      expect(read.kind === 'bulk' && read.value?.equals(bytes(4096))).toBe(true);
      expect((await channel.send(['GET', 'rt:missing'], into)).kind).toBe('bulk');
      expect(given).toEqual([4096]);
      // An error reply rejects its own command only.
      const wrong = channel.send(['INCR', 'rt:pieces']);
      const next = bulk(channel, 'rt:5');
      await expect(wrong).rejects.toBeInstanceOf(BlobReplyError);
      expect((await next)?.equals(bytes(5))).toBe(true);
    } finally {
      channel.close();
    }
  });

  it('authenticates and selects its database', async () => {
    const url = `redis://:s3cret@127.0.0.1:${secured.port}/2`;
    const channel = new BlobChannel(channelTarget(url)!, 'test-auth');
    const pool = new BlobPool(url, 'test-auth-pool', 2);
    try {
      await channel.send(['SET', 'in-db-2', bytes(10)]);
      expect((await pool.get('in-db-2', 10))?.equals(bytes(10))).toBe(true);
      expect(await pool.control.exists('in-db-2')).toBe(1);
      await pool.control.select(0);
      expect(await pool.control.exists('in-db-2')).toBe(0);
    } finally {
      channel.close();
      pool.disconnect();
    }
  });

  it('completes a command sent while Redis is away once it is back, and rejects the ones pending at close', async () => {
    const channel = new BlobChannel(channelTarget(redis.url)!, 'test-away');
    try {
      await channel.send(['SET', 'away:before', bytes(1000)]);
      await redis.stop();
      const write = channel.send(['SET', 'away:during', bytes(200_000)]);
      await new Promise((r) => setTimeout(r, 300));
      expect(channel.ready).toBe(false);
      await redis.start();
      await write;
      expect((await bulk(channel, 'away:during'))?.equals(bytes(200_000))).toBe(true);
      // The append-only file kept what was written before the stop.
      expect((await bulk(channel, 'away:before'))?.equals(bytes(1000))).toBe(true);
      await redis.stop();
      const stranded = channel.send(['GET', 'away:before']);
      channel.close();
      await expect(stranded).rejects.toMatchObject({ name: 'QueueUnavailableError' });
      await expect(channel.send(['PING'])).rejects.toMatchObject({ name: 'QueueUnavailableError' });
    } finally {
      channel.close();
      await redis.start();
    }
  }, 30_000);
});
