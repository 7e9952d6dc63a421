/**
 * vitest globalSetup beside the watchdog (watchdog.ts): gives the test processes a file to name
 * the tests it ended in, and after the run (the teardown runs after the reporter's summary)
 * prints each of them as a failed test and makes the run's exit code 1. vitest itself only sees
 * "Worker exited unexpectedly" for such a file, without the test's name.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The stuck tests the watchdog recorded in `file`, one JSON line each. */
export function readWatchdogReport(file: string): { name: string; limitMs: number; seconds: number }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { name: string; limitMs: number; seconds: number });
}

export default function watchdogReport(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-watchdog-'));
  const file = join(dir, 'timed-out.jsonl');
  // Set before the test processes are forked: they inherit it.
  process.env.TSCUDA_WATCHDOG_REPORT = file;
  return () => {
    const stuck = readWatchdogReport(file);
    rmSync(dir, { recursive: true, force: true });
    if (stuck.length === 0) return;
    const lines = stuck.map(
      (s) =>
        `  FAIL ${s.name}: blocked for ${s.seconds} s (limit ${s.limitMs} ms); the watchdog ended its file's process`,
    );
    console.log(
      `\n[tscuda watchdog] ${stuck.length} test(s) timed out with the test thread blocked:\n${lines.join('\n')}`,
    );
    process.exitCode = 1;
  };
}
