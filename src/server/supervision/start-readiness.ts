/**
 * A server of a job queue (`--redis`) that has just started is not ready while its queue's Redis
 * is still connecting. Its start-up line (and the readiness a worker reports to the primary) waits
 * a moment for that, so a healthy start does not read "not ready".
 */

/** How long a start waits for readiness before reporting what still is not ready. */
export const START_READY_WAIT_MS = 2000;

/** Resolves once `isReady()` holds, or after `ms`. */
export async function readyWithin(isReady: () => boolean, ms = START_READY_WAIT_MS): Promise<void> {
  const until = performance.now() + ms;
  while (!isReady() && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}
