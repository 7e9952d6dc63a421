/** Event-loop lag: how late a chain of 1 ms timers fires while something else runs. */

export interface LagProbe {
  /** Stops the timer and returns each tick's lateness in milliseconds. */
  stop(): number[];
}

export function startLagProbe(intervalMs = 1): LagProbe {
  const lags: number[] = [];
  let expected = performance.now() + intervalMs;
  let stopped = false;
  let timer: NodeJS.Timeout;
  const tick = (): void => {
    if (stopped) return;
    const now = performance.now();
    lags.push(Math.max(0, now - expected));
    expected = now + intervalMs;
    timer = setTimeout(tick, intervalMs);
  };
  timer = setTimeout(tick, intervalMs);
  return {
    stop(): number[] {
      if (!stopped) {
        stopped = true;
        clearTimeout(timer);
        // A tick that is overdue now counts too: a loop blocked for the whole run still shows.
        const late = performance.now() - expected;
        if (late > 0) lags.push(late);
      }
      return lags;
    },
  };
}
