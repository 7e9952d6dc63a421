/**
 * The GPU project's watchdog (test/gpu/watchdog/) turns a test blocked in a synchronous call into
 * one failed file, and the run still reaches its summary (issue 22). vitest is run on two fixture
 * files under the gpu project's isolation: one blocks its thread for 60 s in Atomics.wait (as a
 * cuStreamSynchronize that never returns would: vitest's own testTimeout cannot fire), the next
 * must still run.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CONFIG = join(ROOT, 'test/unit/tools/fixtures/watchdog/vitest.config.ts');

describe('GPU test watchdog', () => {
  it('ends a file whose test thread is blocked, names the test, and the run reaches its summary', async () => {
    // The outer vitest's own variables would make the inner run think it is a worker.
    const env: Record<string, string | undefined> = {
      ...process.env,
      TSCUDA_WATCHDOG_MARGIN_MS: '1000',
      TSCUDA_WATCHDOG_HOOKS_MS: '1000',
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    };
    for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
    const started = performance.now();
    const r = await execa(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', CONFIG], {
      cwd: ROOT,
      env,
      extendEnv: false,
      reject: false,
      all: true,
      timeout: 55_000,
    });
    const seconds = (performance.now() - started) / 1000;
    const out = r.all ?? '';
    expect(r.timedOut, out.slice(-3000)).toBe(false);
    // Each blocked file waits 60 s; its limit is 1 s + a 1 s margin.
    expect(seconds, out.slice(-3000)).toBeLessThan(45);
    expect(r.exitCode, out.slice(-3000)).toBe(1);
    expect(out).toContain('[tscuda watchdog] TIMED OUT: "hang.fixture.ts > blocked > waits synchronously for 60 s"');
    expect(out).toMatch(
      /FAIL hang\.fixture\.ts > blocked > waits synchronously for 60 s: blocked for [\d.]+ s \(limit 2000 ms\)/,
    );
    // The next file ran, and the summary was printed.
    expect(out).toMatch(/✓ ok\.fixture\.ts/);
    expect(out).toMatch(/Test Files .*\(3\)/);
    expect(out).not.toContain('never reached');
    // A hook blocked the same way is caught too.
    expect(out).toMatch(/TIMED OUT: "[^"]*hook\.fixture\.ts \(beforeAll hooks\)"/);
    expect(out).toMatch(/2 test\(s\) timed out with the test thread blocked/);
  }, 90_000);
});
