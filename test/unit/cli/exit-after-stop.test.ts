/**
 * The `tscuda` process ends once its command has returned (src/cli/exit-after-stop.ts): what is
 * still open after the grace (here an interval, as a Redis client reconnecting to a lost Redis)
 * does not keep it, and is named; a process with nothing open ends at once, without the line.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'exit-after-stop.ts');
const run = (...args: string[]) =>
  execa('node', ['--import', 'tsx', FIXTURE, ...args], { reject: false, timeout: 20_000 });

describe('exitAfterStop', { timeout: 30_000 }, () => {
  it('ends a process kept alive by an open handle after the grace, with the command code, naming what was open', async () => {
    const t0 = performance.now();
    const r = await run('3', '300', 'linger');
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/^still open 300 ms after the stop \(.*Timeout.*\): exiting with 3$/m);
    // Node's start and tsx take most of it; without the exit the interval would hold it until the timeout.
    expect(performance.now() - t0).toBeLessThan(15_000);
  });

  it('leaves a process with nothing open to end by itself at once, with its code and no line', async () => {
    const t0 = performance.now();
    const r = await run('0', '60000', 'clean');
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    expect(performance.now() - t0).toBeLessThan(15_000); // far below the 60 s grace: the timer kept nothing alive
  });
});
