/**
 * The CLI's answers, run in this process through main() (starting the executable costs seconds per
 * run on a small machine); the executable itself, bin/tscuda.js, is run once here (the failing
 * `info` without a driver) and from the installed package by the consumer test.
 */
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { COMMANDS } from '../../../src/cli/commands/index.js';
import { isLibraryAvailable } from '../../../src/ffi/index.js';
import { runCli } from './run-cli.js';

const root = join(import.meta.dirname, '..', '..', '..');
/** `tscuda ...args` in this process, with execa's field names. */
const tscuda = async (...args: string[]) => {
  const r = await runCli(...args);
  return { exitCode: r.code, stdout: r.out, stderr: r.err };
};
afterEach(() => vi.restoreAllMocks());

describe('tscuda CLI', { timeout: 60_000 }, () => {
  it('prints usage for -h and --help, exit code 0', async () => {
    for (const args of [['-h'], ['--help']]) {
      const r = await tscuda(...args);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toMatch(/^usage: tscuda <command>/);
      for (const c of COMMANDS) expect(r.stdout).toContain(c.name);
    }
  });
  it('prints the package version for --version', async () => {
    const r = await tscuda('--version');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });
  it('rejects an unknown command on stderr with exit code 2', async () => {
    const r = await tscuda('nonsense');
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/unknown command "nonsense"/);
  });
  it("prints every command's --help with exit code 0, without touching the GPU", async () => {
    for (const c of COMMANDS) {
      const r = await tscuda(c.name, '--help');
      expect(r.exitCode, c.name).toBe(0);
      expect(r.stdout.trim()).toBe(c.usage.trim());
      expect(c.usage).toMatch(new RegExp(`^usage: tscuda ${c.name}`));
    }
  });
  it('rejects an unknown option with exit code 2 and one line', async () => {
    const r = await tscuda('info', '--bogus');
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--bogus/);
  });
});

describe('tscuda info', { timeout: 60_000 }, () => {
  it('lists every library, found with its path or missing with a hint', async () => {
    const r = await tscuda('info');
    for (const label of ['libcuda', 'libcudart', 'cuFFT', 'NVRTC', 'NCCL'])
      expect(r.stdout).toMatch(new RegExp(`^  ${label} +(missing|\\S* +/)`, 'm'));
  });
  it('prints JSON with --json in every case, errors included', async () => {
    const r = await tscuda('info', '--json');
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      libraries: { name: string; found: boolean; path?: string }[];
      error?: { message: string };
    };
    expect(report.libraries.map((l) => l.name)).toEqual(['driver', 'runtime', 'cufft', 'nvrtc', 'nccl']);
    for (const l of report.libraries) if (l.found) expect(l.path).toMatch(/^\/|\.so/);
    expect(r.exitCode).toBe(report.ok ? 0 : 1);
    if (!report.ok) expect(report.error?.message).toBeTruthy();
  });
  it.runIf(!isLibraryAvailable('driver'))(
    'without a driver: exit code 1 and one clear line on stderr, no stack trace (the executable itself)',
    async () => {
      const r = await execa('node', [join(root, 'bin', 'tscuda.js'), 'info'], { reject: false, cwd: root });
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toMatch(/libcuda +missing/);
      expect(r.stderr.trim().split('\n')).toEqual([
        'tscuda: no NVIDIA driver found (libcuda.so.1); install the NVIDIA driver to use a GPU',
      ]);
      const json = await tscuda('info', '--json');
      expect(json.exitCode).toBe(1);
      expect(json.stderr).toBe('');
      expect((JSON.parse(json.stdout) as { error: { name: string } }).error.name).toBe('CudaUnavailableError');
    },
  );
});
