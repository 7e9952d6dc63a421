/**
 * A stop while a worker is still starting (a replacement after a crash, on a loaded machine): the
 * worker holds no request, so it is ended at once and the stop is a clean drain (exit 0), not a
 * drain cut at its bound (exit 3) after waiting for the worker to finish starting.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const fixture = join(import.meta.dirname, 'fixtures', 'stop-while-starting.ts');

describe('supervisor: a stop while a worker is starting', () => {
  it('ends the starting worker at once: drained, well within the 10 s drain bound', async () => {
    const r = await execa(process.execPath, ['--import', 'tsx', fixture], { reject: false, timeout: 60_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const { end, ms } = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      end: { kind: string; drained: boolean; cutWorkers: number };
      ms: number;
    };
    expect(end).toEqual({ kind: 'stopped', drained: true, cutWorkers: 0 });
    // Before: the stop waited out the drain bound and the kill grace (15 s), then counted a cut worker.
    expect(ms).toBeLessThan(5000);
  }, 70_000);
});
