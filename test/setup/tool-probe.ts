/**
 * The outside tools some CPU tests use (g++ for the kernel emulation, python3 with scipy for the
 * references): a tool that is absent skips its tests with the reason, unless TSCUDA_REQUIRE_TOOLS=1
 * (set by CI, which installs them) makes that a failure; a tool that is present but fails (timed
 * out on a loaded machine, killed, a compile error) always fails the file, never skips it silently.
 */

/** What a probe of a spawned tool saw: execa's result fields that tell absence from failure. */
export interface ToolRun {
  code?: string | undefined;
  exitCode?: number | undefined;
  timedOut?: boolean | undefined;
  signal?: string | undefined;
  stderr?: unknown;
}

/** Whether the run failed because the program is not installed (spawn's ENOENT). */
export function notInstalled(run: ToolRun): boolean {
  return run.code === 'ENOENT';
}

/** The skip reason for an absent tool; a thrown Error instead where TSCUDA_REQUIRE_TOOLS=1 says it must be there. */
export function absentTool(reason: string): string {
  if (process.env.TSCUDA_REQUIRE_TOOLS === '1')
    throw new Error(`${reason}; TSCUDA_REQUIRE_TOOLS=1 says it must be present (CI installs it)`);
  return reason;
}

/** A present tool that failed: an Error naming how (timed out, killed, its own message). */
export function toolFailure(what: string, run: ToolRun): Error {
  const how = run.timedOut
    ? 'timed out'
    : run.signal
      ? `was killed (${run.signal})`
      : `exited ${run.exitCode ?? '?'}: ${String(run.stderr ?? '')
          .trim()
          .slice(-400)}`;
  return new Error(`${what} ${how}; the tool is installed, so its tests fail rather than skip`);
}
