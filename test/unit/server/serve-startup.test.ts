/**
 * `tscuda serve` start-up, as a process manager sees it: a start that cannot succeed (port in use,
 * an address not on this machine, an engine that cannot be built) is one line naming the problem
 * and exit 1, never a crash loop behind a "serving" summary; a worker that keeps failing to start
 * after the service started ends the service (exit 1) instead of being respawned forever; bad
 * usage is one line and exit 2; `--port 0` prints the port it got. No GPU needed.
 */
import { execa } from 'execa';
import { createServer as netServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, ROOT, call, lines, spawnServe, workerPids, type ServeProcess } from './serve-process.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const running: ServeProcess[] = [];
const blockers: Server[] = [];
afterEach(() => {
  for (const s of running.splice(0)) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  for (const b of blockers.splice(0)) b.close();
});

/** A port some other process (here: this one) already listens on. */
async function takenPort(): Promise<number> {
  const s = netServer();
  blockers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as { port: number }).port;
}

/** Runs `tscuda serve <args>` to its end; the stopwatch starts at the spawn. */
async function runToEnd(
  args: string[],
  boundMs: number,
): Promise<{ exitCode: number | undefined; stderr: string; ms: number }> {
  const t0 = performance.now();
  const serve = spawnServe(args);
  running.push(serve);
  const timer = setTimeout(() => serve.child.kill('SIGKILL'), boundMs);
  const result = await serve.child;
  clearTimeout(timer);
  return { exitCode: result.exitCode, stderr: serve.stderr(), ms: performance.now() - t0 };
}

describe('tscuda serve start-up failures', () => {
  for (const workers of [0, 2]) {
    it(`--workers ${workers} on a port in use: one line naming the address, exit 1`, async () => {
      const port = await takenPort();
      const r = await runToEnd(['--workers', String(workers), '--port', String(port)], 60_000);
      expect(r.exitCode, r.stderr).toBe(1);
      expect(lines(r.stderr), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(`127.0.0.1:${port}`);
      expect(r.stderr).toMatch(/in use.*EADDRINUSE/);
    }, 70_000);
  }

  it('--host of an address not on this machine: one line naming it, exit 1', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
    const r = await runToEnd(['--workers', '1', '--host', '192.0.2.1', '--port', '0'], 60_000);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(lines(r.stderr), r.stderr).toHaveLength(1);
    expect(r.stderr).toContain('192.0.2.1');
    expect(r.stderr).toMatch(/EADDRNOTAVAIL/);
  }, 70_000);

  it('an engine that cannot be built: the supervisor fails once with its reason (no respawn loop)', async () => {
    const t0 = performance.now();
    const child = execa(
      'node',
      ['--import', 'tsx', join(FIXTURES, 'supervise.ts'), '2', join(FIXTURES, 'failing-worker.ts'), '0'],
      { cwd: ROOT, reject: false, timeout: 60_000 },
    );
    const result = await child;
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stdout).toContain(
      '"failed":"the GPU engine could not be built: device 99: invalid device ordinal (test)"',
    );
    // Failed once: no replacement was started for it.
    expect(result.stderr).not.toMatch(/replacing it|trying again/);
    expect(performance.now() - t0).toBeLessThan(60_000);
  }, 70_000);

  it('a replacement that cannot start is tried a few times, then the service exits 1 with one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tscuda-startfail-'));
    const mark = join(dir, 'fail');
    try {
      const child = execa(
        'node',
        ['--import', 'tsx', join(FIXTURES, 'supervise.ts'), '1', join(FIXTURES, 'failing-worker.ts'), '0'],
        {
          cwd: ROOT,
          reject: false,
          timeout: 90_000,
          env: { TSCUDA_TEST_FAIL_IF: mark, TSCUDA_SERVE_PROCESS_INFO: '1' },
        },
      );
      let out = '';
      await new Promise<void>((resolve) =>
        child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), out.includes('"started"') && resolve())),
      );
      const { port } = JSON.parse(lines(out)[0]!) as { port: number };
      const [pid] = await workerPids(`http://127.0.0.1:${port}`, 1);
      // From now on a worker of this service cannot start; the one that serves dies.
      writeFileSync(mark, '');
      process.kill(pid!, 'SIGKILL');
      const result = await child;
      expect(result.exitCode, result.stderr).toBe(1);
      expect(result.stdout).toMatch(
        /"failed":"a replacement worker failed to start 3 times: the GPU engine could not be built/,
      );
      expect((result.stderr.match(/could not start/g) ?? []).length).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 100_000);
});

describe('tscuda serve usage', () => {
  const cases: [string[], RegExp][] = [
    [['--workers', '100000'], /--workers must be at most \d+ \(4 per CPU/],
    [['--body-limit', '99999999999'], /--body-limit must be at most 511/],
    // A 600 MiB JSON body would not fit V8's longest string (ERR_STRING_TOO_LONG in the worker).
    [['--body-limit', '600'], /--body-limit must be at most 511/],
    [['--port', 'x'], /--port must be an integer/],
    [['--drain', '-1'], /--drain|option/],
    [['--bogus'], /bogus/],
  ];
  it('a bad option is one line and exit 2 (not the whole usage)', async () => {
    for (const [args, message] of cases) {
      const r = await execa('node', [BIN, 'serve', ...args], { cwd: ROOT, reject: false, timeout: 30_000 });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(lines(r.stderr), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  }, 120_000);
});

describe('tscuda serve --port 0', () => {
  for (const workers of [0, 1]) {
    it(`--workers ${workers}: prints the port the system picked, and serves there`, async () => {
      const serve = spawnServe(['--workers', String(workers), '--port', '0']);
      running.push(serve);
      const m = await serve.waitFor(/(?:worker\(s\) on |\[serve\] listening on )http:\/\/127\.0\.0\.1:(\d+)/);
      const port = Number(m[1]);
      expect(port).toBeGreaterThan(0);
      const live = await call(`http://127.0.0.1:${port}`, '/v2/health/live');
      expect('status' in live && live.status).toBe(200);
      serve.child.kill('SIGTERM');
      expect((await serve.child).exitCode).toBe(0);
    }, 70_000);
  }
});
