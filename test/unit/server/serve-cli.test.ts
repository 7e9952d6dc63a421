/** `tscuda serve` as a process: --help, bad usage, and a graceful SIGTERM (exit 0), with or without a GPU. */
import { execa } from 'execa';
import { createServer as netServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../../src/cli/commands/serve-options.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const MAIN = join(ROOT, 'src/cli/main.ts');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = netServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('tscuda serve', () => {
  it('parses its options', async () => {
    const p = await parseServeArgs([
      '--port',
      '9000',
      '--workers',
      '3',
      '--devices',
      '0,1',
      '--lanes',
      '2',
      '--max-queued',
      '8',
      '--precision',
      'f64',
    ]);
    expect(p).toMatchObject({
      help: false,
      workers: 3,
      config: { port: 9000, devices: [0, 1], lanes: 2, maxQueued: 8, precision: 'f64' },
    });
    await expect(parseServeArgs(['--lanes', '0'])).rejects.toThrow(/--lanes/);
    await expect(parseServeArgs(['--bogus'])).rejects.toThrow();
  });

  it('--help exits 0, a bad option exits 2', async () => {
    const help = await execa('node', ['--import', 'tsx', MAIN, 'serve', '--help'], { cwd: ROOT, reject: false });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('--max-queued');
    const bad = await execa('node', ['--import', 'tsx', MAIN, 'serve', '--port', 'x'], { cwd: ROOT, reject: false });
    expect(bad.exitCode).toBe(2);
  }, 30_000);

  const launches = [
    {
      how: 'node --import tsx src/cli/main.ts serve --workers 0',
      args: ['--import', 'tsx', MAIN, 'serve', '--workers', '0'],
      cwd: ROOT,
    },
    {
      how: 'node --import tsx src/cli/main.ts serve --workers 1',
      args: ['--import', 'tsx', MAIN, 'serve', '--workers', '1'],
      cwd: ROOT,
    },
    // What a user types in a checkout: bin/tscuda.js registers tsx in the primary only, so its worker processes must get it too.
    {
      how: 'bin/tscuda.js serve --workers 1, from another folder',
      args: [join(ROOT, 'bin', 'tscuda.js'), 'serve', '--workers', '1'],
      cwd: tmpdir(),
    },
  ];
  for (const launch of launches) {
    it(`${launch.how}: live answers, SIGTERM exits 0`, async () => {
      const port = await freePort();
      const child = execa('node', [...launch.args, '--port', String(port)], { cwd: launch.cwd, reject: false });
      let live = 0;
      for (let i = 0; i < 300 && live !== 200; i++) {
        try {
          live = (await fetch(`http://127.0.0.1:${port}/v2/health/live`)).status;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(live).toBe(200);
      const ready = await fetch(`http://127.0.0.1:${port}/v2/health/ready`);
      const body = (await ready.json()) as { ready: boolean; reason?: string };
      if (ready.status === 503) expect(body.reason).toMatch(/CUDA|GPU/);
      child.kill('SIGTERM');
      const result = await child;
      expect(result.exitCode, result.stderr).toBe(0);
    }, 60_000);
  }
});
