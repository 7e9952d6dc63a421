/**
 * The `tscuda` process ends when its command is done, not when the last handle closes. A command's
 * stop is bounded (serve's drain, the queue's close), but a handle it does not own can outlive it:
 * a Redis client of a lost Redis reconnecting on timers, a socket a library holds. Those kept
 * `tscuda serve` alive after "drain cut … exit 3" for minutes. So once the command has returned,
 * the process exits with its code after a short grace (which a clean end, with nothing left open,
 * never waits for), and says what was still open. Only the executable's entry (main.ts) arms it:
 * a command run inside another program (a test, an embedding) never ends that program.
 */

/**
 * How long after its command a process may stay for what is still open, ms: past ioredis's own
 * 2 s wait for a socket it ended (a client's `disconnect()` arms it), which is bounded and ends by itself.
 */
export const EXIT_GRACE_MS = 5000;

/**
 * Exits with `code` in `graceMs` unless the process has ended by then; the timer itself keeps
 * nothing alive. `log` gets one line naming what was still open (`process.getActiveResourcesInfo()`).
 */
export function exitAfterStop(code: number, log: (line: string) => void, graceMs = EXIT_GRACE_MS): void {
  setTimeout(() => {
    const open = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
    log(`still open ${graceMs} ms after the stop (${open.join(', ') || 'nothing named'}): exiting with ${code}`);
    process.exit(code);
  }, graceMs).unref();
}
