import { describe, expect, it } from 'vitest';
import { checkRedis } from '../../../src/queue/index.js';
import { freePort } from './redis-server.js';

describe('checkRedis refuses bad arguments before it connects', () => {
  it('a timeout that is not a positive integer of milliseconds (ioredis threw it later from a timer, uncaught)', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    for (const bad of [-5, 0, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '3000' as unknown as number])
      await expect(checkRedis(url, bad)).rejects.toThrow(/^timeoutMs must be an integer in \[1, 2147483647\], got /);
    // Give a timer that would have fired the chance to do so (an uncaught error fails the run).
    await new Promise((r) => setTimeout(r, 50));
  });

  it('a connection that is not a Redis URL or options, named as such', async () => {
    await expect(checkRedis(null as never)).rejects.toThrow(/^connection: must be a Redis URL/);
    await expect(checkRedis('localhost:6379')).rejects.toThrow(/^connection: a Redis URL starts with redis:\/\//);
  });
});
