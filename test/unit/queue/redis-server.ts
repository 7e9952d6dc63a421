/**
 * A real redis-server for the queue's tests, GPU test and bench: started on a free loopback port
 * (no persistence unless asked), stopped at the end. The binary comes from `TSCUDA_REDIS_SERVER`
 * or PATH; without one, `redisSkipReason` says so in one line and the tests skip.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkRedis } from '../../../src/queue/connection.js';

/** The redis-server binary: `TSCUDA_REDIS_SERVER`, or the one on PATH; undefined when there is none. */
export function redisServerPath(): string | undefined {
  const fromEnv = process.env.TSCUDA_REDIS_SERVER;
  if (fromEnv !== undefined && fromEnv !== '') return existsSync(fromEnv) ? fromEnv : undefined;
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = which.stdout.trim();
  return which.status === 0 && path !== '' ? path : undefined;
}

/** Why the queue tests skip here, or undefined when a redis-server can be started. */
export const redisSkipReason: string | undefined =
  redisServerPath() === undefined
    ? `no redis-server binary (set TSCUDA_REDIS_SERVER or install redis-server; .ci/run does): queue tests skipped`
    : undefined;

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A running redis-server. */
export interface TestRedis {
  port: number;
  url: string;
  /** Its process id while it runs (to SIGSTOP it: a Redis that keeps its connections and stops answering). */
  readonly pid: number | undefined;
  /** Stops it (SIGTERM: with persistence on, Redis writes its append-only file first). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  dispose(): Promise<void>;
}

/** Starts a redis-server on a free port; `persistent` turns on the append-only file (in a temporary directory); `args` are more redis-server options (`--io-threads 4`). */
export async function startRedis(options: { persistent?: boolean; args?: readonly string[] } = {}): Promise<TestRedis> {
  const bin = redisServerPath();
  if (bin === undefined) throw new Error(redisSkipReason);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--dir',
    dir,
    '--appendonly',
    options.persistent === true ? 'yes' : 'no',
  ];
  if (options.persistent === true) args.push('--appendfsync', 'always');
  args.push(...(options.args ?? []));
  const start = async (): Promise<void> => {
    const spawned = spawn(bin, args, { stdio: 'ignore' });
    child = spawned;
    // A program that ends without dispose() (an uncaught error, process.exit) takes its Redis
    // with it: an orphaned one would keep every byte it was sent.
    const orphan = (): void => void spawned.kill('SIGKILL');
    process.once('exit', orphan);
    spawned.once('exit', () => process.off('exit', orphan));
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await checkRedis(url, 500);
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    // Ended already (killed by a signal: exitCode stays null, signalCode says which).
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
    });
  };
  await start();
  return {
    port,
    url,
    get pid() {
      return child?.pid;
    },
    start,
    stop,
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
