/**
 * `tscuda serve` catches its stop signals before it forks any worker: a signal in the fork's
 * instant stops the service gracefully (it once found the primary without handlers, which ended
 * the default way while its workers started, and they printed stack traces). The supervisor is
 * replaced by a fake that records what the process listened for when it was asked to fork.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Supervisor, SupervisorEnd, SupervisorOptions } from '../../../src/server/supervision/supervisor.js';

const forks: { sigint: number; sigterm: number; sighup: number; options: SupervisorOptions }[] = [];

vi.mock('../../../src/server/supervision/supervisor.js', () => ({
  superviseWorkers(options: SupervisorOptions): Supervisor {
    forks.push({
      sigint: process.listenerCount('SIGINT'),
      sigterm: process.listenerCount('SIGTERM'),
      sighup: process.listenerCount('SIGHUP'),
      options,
    });
    // A signal arriving while the workers are forked.
    process.emit('SIGINT');
    const end: SupervisorEnd = { kind: 'stopped', drained: true, cutWorkers: 0 };
    return {
      started: new Promise<string>(() => undefined),
      ended: new Promise<SupervisorEnd>(() => undefined),
      readyWorkers: 0,
      replacements: 0,
      stop: () => Promise.resolve(end),
      cut: () => undefined,
    };
  },
}));

const { serveCommand } = await import('../../../src/cli/commands/serve.js');

afterEach(() => vi.restoreAllMocks());

describe('serve: stop signals', { timeout: 20_000 }, () => {
  it('are listened for before the workers are forked; one then stops it gracefully (exit 0)', async () => {
    const before = {
      sigint: process.listenerCount('SIGINT'),
      sigterm: process.listenerCount('SIGTERM'),
      sighup: process.listenerCount('SIGHUP'),
    };
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void lines.push(String(line)));
    const code = await serveCommand.run(['--workers', '1', '--port', '0']);
    expect(forks).toHaveLength(1);
    expect(forks[0]).toMatchObject({
      sigint: before.sigint + 1,
      sigterm: before.sigterm + 1,
      sighup: before.sighup + 1,
    });
    expect(code).toBe(0);
    // The handlers go when serve returns: nothing is left listening in the process.
    expect(process.listenerCount('SIGINT')).toBe(before.sigint);
    expect(lines.join('\n')).not.toMatch(/\n\s+at /);
  });
});
