/** `tscuda worker`: usage errors exit 2, an unreachable Redis is one line and exit 1, no GPU is one line and exit 1. */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { freePort, redisSkipReason, startRedis } from './redis-server.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const MAIN = join(ROOT, 'src', 'cli', 'main.ts');
const tscuda = (...args: string[]) =>
  execa('node', ['--import', 'tsx', MAIN, 'worker', ...args], { cwd: ROOT, reject: false, timeout: 30_000 });

describe('tscuda worker', () => {
  it('prints its usage, and refuses bad options with exit 2', async () => {
    const help = await tscuda('--help');
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/^usage: tscuda worker --redis URL/);
    const missing = await tscuda();
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/^tscuda worker: --redis URL is required/);
    const rate = await tscuda('--redis', 'redis://127.0.0.1:6379', '--rate', 'fast');
    expect(rate.exitCode).toBe(2);
    expect(rate.stderr).toMatch(/--rate must be N\/MS/);
    // Usage errors are one line, devices spelled as every command spells them (the placement rule's parser).
    expect(rate.stderr.trim().split('\n')).toHaveLength(1);
    const twice = await tscuda('--redis', 'redis://127.0.0.1:6379', '--devices', '0,0');
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr.trim().split('\n')).toHaveLength(1);
    expect(twice.stderr).toMatch(/^tscuda worker: --devices: device 0 is listed twice/);
    const blob = await tscuda('--redis', 'redis://127.0.0.1:6379', '--blob-redis', '10.0.0.6:6379');
    expect(blob.exitCode).toBe(2);
    expect(blob.stderr).toMatch(/^tscuda worker: --blob-redis must be a redis:\/\/ or rediss:\/\/ URL/);
  }, 60_000);

  it('says in one line that Redis is unreachable, and exits 1', async () => {
    const port = await freePort();
    const r = await tscuda('--redis', `redis://127.0.0.1:${port}`);
    expect(r.exitCode).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `tscuda worker: Redis at redis://127.0.0.1:${port} is unreachable: connect ECONNREFUSED 127.0.0.1:${port}`,
    ]);
  }, 60_000);

  it.skipIf(redisSkipReason !== undefined)(
    'refuses a database Redis does not have in one line, and exits 1 (it once passed the start check and failed every job)',
    async () => {
      const redis = await startRedis();
      try {
        const r = await tscuda('--redis', `${redis.url}/99`);
        expect(r.exitCode).toBe(1);
        expect(r.stderr.trim().split('\n')).toEqual([
          `tscuda worker: Redis at ${redis.url}/99 refused database 99: ERR DB index is out of range`,
        ]);
      } finally {
        await redis.dispose();
      }
    },
    60_000,
  );

  it.skipIf(redisSkipReason !== undefined)(
    'without a GPU, says so in one line and exits 1',
    async () => {
      const redis = await startRedis();
      try {
        const r = await tscuda('--redis', redis.url);
        if (r.exitCode === 0) return; // a GPU host: the worker ran (not what this CPU-only test checks)
        expect(r.exitCode).toBe(1);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toMatch(/^tscuda worker: (no NVIDIA driver|no CUDA device|CUDA error)/);
      } finally {
        await redis.dispose();
      }
    },
    60_000,
  );

  it.skipIf(redisSkipReason !== undefined)(
    '--metrics-port on a port in use: one line naming it, exit 1, before the engine and the worker start (the process exits)',
    async () => {
      const redis = await startRedis();
      const busy = createServer();
      await new Promise<void>((resolve) => busy.listen(0, resolve));
      const port = (busy.address() as { port: number }).port;
      try {
        const r = await tscuda('--redis', redis.url, '--metrics-port', String(port));
        expect(r.timedOut).toBe(false);
        expect(r.exitCode).toBe(1);
        expect(r.stderr.trim().split('\n')).toEqual([`tscuda worker: --metrics-port ${port}: the port is in use`]);
      } finally {
        busy.close();
        await redis.dispose();
      }
    },
    60_000,
  );
});
