/** The rule for outside tools of CPU tests: absent skips (or fails where CI requires it), present but failing fails. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { absentTool, notInstalled, toolFailure } from '../../setup/tool-probe.js';

afterEach(() => vi.unstubAllEnvs());

describe('tool probes', { timeout: 10_000 }, () => {
  it('an absent tool is a skip reason, or an error where TSCUDA_REQUIRE_TOOLS=1', () => {
    vi.stubEnv('TSCUDA_REQUIRE_TOOLS', '');
    expect(absentTool('g++ is not installed')).toBe('g++ is not installed');
    vi.stubEnv('TSCUDA_REQUIRE_TOOLS', '1');
    expect(() => absentTool('g++ is not installed')).toThrow(
      /^g\+\+ is not installed; TSCUDA_REQUIRE_TOOLS=1 says it must be present/,
    );
  });

  it('only spawn ENOENT counts as absent; a timeout or a kill is a failure that says so', () => {
    expect(notInstalled({ code: 'ENOENT' })).toBe(true);
    expect(notInstalled({ timedOut: true })).toBe(false);
    expect(toolFailure('python3 (importing scipy)', { timedOut: true }).message).toBe(
      'python3 (importing scipy) timed out; the tool is installed, so its tests fail rather than skip',
    );
    expect(toolFailure('g++', { signal: 'SIGKILL' }).message).toMatch(/^g\+\+ was killed \(SIGKILL\)/);
    expect(toolFailure('g++', { exitCode: 1, stderr: 'harness.cpp:1: error' }).message).toMatch(
      /^g\+\+ exited 1: harness\.cpp:1: error;/,
    );
  });
});
