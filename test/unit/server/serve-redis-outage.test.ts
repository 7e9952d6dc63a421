/**
 * `tscuda serve --redis --workers 0` as a process when its Redis is killed for good with requests
 * in flight: every request is answered within the queue's bound (202 before the loss, 503
 * queue_unavailable after), and SIGTERM then stops the process (no wait on the lost Redis); at
 * start it says that its Redis has no memory limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisSkipReason, startRedis, type TestRedis } from '../queue/redis-server.js';
import { freePort, spawnServe } from './serve-process.js';

if (redisSkipReason !== undefined) console.log(redisSkipReason);

const BOUND_MS = 500;
/** Each answer's deadline: the bound and a reconnection's wait, with room for a loaded CI host (unbounded, they waited 110 s and more). */
const ANSWER_WITHIN_MS = BOUND_MS + 7500;
/** How long the process may take to exit after SIGTERM before the test says so (its drain is 3 s). */
const EXIT_WITHIN_MS = 20_000;

describe.skipIf(redisSkipReason !== undefined)('tscuda serve --redis: Redis killed for good', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.dispose();
  });

  it('answers every POST in flight within the bound, then exits on SIGTERM', async () => {
    const port = await freePort();
    const serve = spawnServe([
      '--workers',
      '0',
      '--port',
      String(port),
      '--redis',
      redis.url,
      '--command-timeout',
      String(BOUND_MS),
      '--drain',
      '3000',
    ]);
    try {
      await serve.waitFor(/listening on/, 60_000);
      // The test Redis has no memory limit: the front says so at start.
      expect(serve.stderr()).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ has no maxmemory: .*noeviction/);
      const base = `http://127.0.0.1:${port}`;
      const body = JSON.stringify({ signal: Array.from({ length: 4096 }, () => Math.random() - 0.5), flags: ['stft'] });
      const post = async (): Promise<number> => {
        const answer = await fetch(`${base}/v1/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
        });
        await answer.arrayBuffer();
        return answer.status;
      };
      const inFlight = Array.from({ length: 24 }, () => post());
      process.kill(redis.pid!, 'SIGKILL');
      const statuses = await Promise.all(inFlight);
      for (const status of statuses) expect([202, 503]).toContain(status);
      // Once the loss is seen, a new POST is refused within the bound.
      expect(await post()).toBe(503);
      const ready = await fetch(`${base}/v2/health/ready`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
      expect(ready.status).toBe(503);
    } finally {
      serve.child.kill('SIGTERM');
    }
    // Bounded here, not by the test's timeout: a process that does not exit is a failure that shows
    // what it said, and it is killed rather than left behind.
    const t0 = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      serve.child,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), EXIT_WITHIN_MS))),
    ]);
    clearTimeout(timer);
    if (exit === null) {
      serve.child.kill('SIGKILL');
      expect.fail(`tscuda serve did not exit within ${EXIT_WITHIN_MS} ms of SIGTERM; it said:\n${serve.stderr()}`);
    }
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(exit.exitCode, serve.stderr()).toBe(0);
  }, 90_000);
});
