/**
 * The stop signals of `tscuda serve`, caught from the moment they are asked for: the command asks
 * before it forks any worker, so a Ctrl-C in the fork's instant stops the service gracefully
 * instead of ending the primary the default way while its workers start (they printed stack
 * traces on their broken channel).
 */

/** SIGTERM, SIGINT and SIGHUP (a closed terminal, a reload by habit) all stop gracefully. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** The stop signals, listened for from stopSignals() until dispose(). */
export interface StopSignals {
  /** Resolves with the first stop signal (at once when one came already). */
  readonly first: Promise<string>;
  /** The first signal received so far, or null. */
  readonly received: string | null;
  /** What a second (and later) signal does: cut the drain. Until set, a later signal is ignored, never the default exit. */
  onAgain(handler: (signal: string) => void): void;
  /** Stops listening (the signals' default actions apply again). */
  dispose(): void;
}

/** Installs the listeners now. */
export function stopSignals(): StopSignals {
  let received: string | null = null;
  let again: (signal: string) => void = () => undefined;
  let resolveFirst!: (signal: string) => void;
  const first = new Promise<string>((resolve) => (resolveFirst = resolve));
  const on = (signal: string): void => {
    if (received === null) {
      received = signal;
      resolveFirst(signal);
    } else again(signal);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, on);
  return {
    first,
    get received() {
      return received;
    },
    onAgain(handler) {
      again = handler;
    },
    dispose() {
      for (const signal of STOP_SIGNALS) process.off(signal, on);
    },
  };
}
