/**
 * A time budget per event-loop turn for new requests: the part of load shedding that acts inside
 * the turn that reads a flood, not a look later.
 *
 * Why: a Node server reads every socket that became readable in one poll phase. Under a flood one
 * turn can read hundreds of requests; each admitted one costs the loop a job's worth of work, so
 * the turn grows to hundreds of ms, and every request that arrives meanwhile (refused or not)
 * waits for it in its socket. Adaptive admission (admission.ts) looks at the loop every 50 ms and
 * can only lower the share for the next turns: measured on an H100 at twice a worker's capacity,
 * long turns alternated with short ones, the mean delay stayed near 21 ms, and 429s took 79 ms at
 * the median and 193 ms at p99. Bounding the work a turn takes on bounds how long anything waits
 * to be read, and so how quickly the excess hears 429.
 *
 * How a turn is told apart without a hook into libuv: the first new request of a turn schedules
 * a check-phase callback (setImmediate); it runs after the poll phase that read the request and
 * marks the turn's end, and re-schedules itself while requests keep arriving. "How long has this
 * turn run" is then the time since that mark (or since the turn's first request when none was
 * scheduled). When requests stop, nothing stays scheduled: an idle server does not spin.
 * CUDA-free and clock-injected so that it is tested anywhere; shedding/index.ts asks it per POST.
 */

/** New requests in one turn before it can count as flooded: one client's heavy request, or a handful of new connections, is never refused for a long turn. */
export const TURN_FLOOD_ARRIVALS = 16;

/** How a TurnBudget reads the time and defers its end-of-turn mark; defaults: performance.now and setImmediate. */
export interface TurnClock {
  now(): number;
  /** Runs `callback` once the current loop turn's poll phase is over (setImmediate). */
  afterTurn(callback: () => void): void;
}

const REAL_CLOCK: TurnClock = {
  now: () => performance.now(),
  afterTurn: (callback) => {
    setImmediate(callback);
  },
};

/** Whether a new request arrives in a loop turn that has already run past its budget. */
export class TurnBudget {
  readonly budgetMs: number;
  readonly #clock: TurnClock;
  /** An end-of-turn mark is scheduled. */
  #scheduled = false;
  /** When the current turn started: the last end-of-turn mark, or the turn's first request. */
  #turnStart = 0;
  /** New requests since the last mark. */
  #arrivals = 0;
  readonly #mark = (): void => {
    if (this.#arrivals > 0) {
      // Requests came this turn: keep marking turns while the flood lasts.
      this.#arrivals = 0;
      this.#turnStart = this.#clock.now();
      this.#clock.afterTurn(this.#mark);
    } else this.#scheduled = false;
  };

  /** `budgetMs`: how long a turn may run before its further new requests are refused; > 0. */
  constructor(budgetMs: number, clock: TurnClock = REAL_CLOCK) {
    if (typeof budgetMs !== 'number' || !(budgetMs > 0) || !Number.isFinite(budgetMs))
      throw new RangeError(`budgetMs must be a positive number of ms, got ${String(budgetMs)}`);
    this.budgetMs = budgetMs;
    this.#clock = clock;
  }

  /**
   * Counts one new request; true when it should be refused: the turn reading it has run longer
   * than `budgetMs` (default: the constructor's) and has read more than `arrivals` new requests
   * (default TURN_FLOOD_ARRIVALS).
   */
  overBudget(budgetMs: number = this.budgetMs, arrivals: number = TURN_FLOOD_ARRIVALS): boolean {
    const now = this.#clock.now();
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#turnStart = now;
      this.#arrivals = 1;
      this.#clock.afterTurn(this.#mark);
      return false;
    }
    this.#arrivals++;
    return this.#arrivals > arrivals && now - this.#turnStart > budgetMs;
  }

  /** How long the current turn has run, ms (0 when no request arrived in it). */
  get elapsedMs(): number {
    return this.#scheduled ? this.#clock.now() - this.#turnStart : 0;
  }
}

/** New requests a turn must read before a flood is seen for its length to refuse: more than a pool of 64 clients can have in flight at once, so a closed loop of that size is never refused by it. */
export const FIRST_FLOOD_ARRIVALS = 64;

/** How long a loop turn may read, and how many new requests it must have read, before its further new requests are refused. */
export interface TurnLimit {
  ms: number;
  arrivals: number;
}

/**
 * The turn budget's limit: `maxTurnMs` past TURN_FLOOD_ARRIVALS under a flood (or always, with
 * adaptive admission off: `maxEventLoopDelayMs` 0). Before a flood is seen, the larger of
 * `maxTurnMs` and `maxEventLoopDelayMs` past FIRST_FLOOD_ARRIVALS: a closed loop of clients whose
 * turns run long now and then is served, while a flood's first long turn is cut (and its refusals
 * start the shedding).
 */
export function turnLimit(
  limits: { maxTurnMs: number; maxEventLoopDelayMs: number },
  underPressure: boolean,
): TurnLimit {
  return limits.maxEventLoopDelayMs === 0 || underPressure
    ? { ms: limits.maxTurnMs, arrivals: TURN_FLOOD_ARRIVALS }
    : { ms: Math.max(limits.maxTurnMs, limits.maxEventLoopDelayMs), arrivals: FIRST_FLOOD_ARRIVALS };
}
