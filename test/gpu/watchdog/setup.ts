/**
 * vitest setupFile of the gpu project: arms the watchdog (watchdog.ts) around every test with the
 * test's own timeout plus a margin, and around the hooks before, between and after tests with
 * the longest of the test and hook timeouts plus the margin (a hook may be given a long timeout
 * of its own), so a test blocked in a synchronous call becomes one failed file instead of a
 * hung run.
 */
import { relative } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, type TestContext } from 'vitest';
import { startWatchdog, watchdogMarginMs } from './watchdog.js';

const watchdog = startWatchdog();
const margin = watchdogMarginMs();
// vitest's worker state holds the resolved config (its defaults: testTimeout 5 s, hookTimeout 10 s).
const config = (globalThis as { __vitest_worker__?: { config?: { testTimeout?: number; hookTimeout?: number } } })
  .__vitest_worker__?.config;
const testTimeout = config?.testTimeout || 5_000;
const hookTimeout = config?.hookTimeout || 10_000;
// Hooks may be given long timeouts of their own (a describe's { timeout } too), which the
// watchdog cannot see: it allows them TSCUDA_WATCHDOG_HOOKS_MS (default 5 minutes) at least.
const hooksFloor = Number(process.env.TSCUDA_WATCHDOG_HOOKS_MS ?? 300_000);
const hooksLimit = Math.max(testTimeout, hookTimeout, Number.isFinite(hooksFloor) ? hooksFloor : 300_000) + margin;

/** "file > describe > test", as vitest's report names it. */
function fullName(context: TestContext): string {
  const parts: string[] = [];
  for (
    let s: { name: string; suite?: unknown } | undefined = context.task;
    s !== undefined;
    s = s.suite as { name: string; suite?: unknown } | undefined
  )
    if (s.name) parts.unshift(s.name);
  return `${context.task.file?.name ?? '?'} > ${parts.join(' > ')}`;
}

beforeAll(() => {
  const path = expect.getState().testPath;
  watchdog.arm(`${path === undefined ? 'test file' : relative(process.cwd(), path)} (beforeAll hooks)`, hooksLimit);
});

beforeEach((context) => {
  // The test's resolved timeout: its own (it(name, fn, ms)) or the config's; 0 means none, so the config's bounds it.
  const own = context.task.timeout;
  watchdog.arm(fullName(context), (own > 0 ? own : testTimeout) + margin);
});

afterEach((context) => {
  // The afterEach hooks and the next test's beforeEach (or the file's afterAll) run next.
  watchdog.arm(`hooks after ${fullName(context)}`, hooksLimit);
});

afterAll(() => watchdog.disarm());
