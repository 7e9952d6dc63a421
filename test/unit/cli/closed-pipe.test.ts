/**
 * Output piped into a reader that stops early (`tscuda --help | true`, `tscuda info | head -1`):
 * the command ends with its own exit code and writes no EPIPE stack trace, as command-line tools do.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '..', '..', '..', 'bin', 'tscuda.js');

/** Runs `tscuda ...args` with its stdout a pipe closed before it writes; resolves with its exit code and stderr. */
function withClosedStdout(...args: string[]): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed at once: the child (which takes a moment to start) writes into a pipe without a reader.
    child.stdout.destroy();
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, err }));
  });
}

describe('a closed stdout pipe', { timeout: 60_000 }, () => {
  it('--help: exit 0, nothing on stderr', async () => {
    const r = await withClosedStdout('--help');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });

  it("info: the command's own exit code, at most its one line on stderr", async () => {
    const r = await withClosedStdout('info');
    expect(r.err).not.toMatch(/EPIPE|\n\s+at /);
    expect(r.err.trim().split('\n').filter(Boolean).length).toBeLessThanOrEqual(1);
    // 0 with a GPU, 1 (the one line says why) without.
    expect(r.code).toBe(r.err === '' ? 0 : 1);
  });
});
