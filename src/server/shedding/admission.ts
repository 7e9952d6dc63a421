/**
 * Adaptive admission: the share of new work a worker takes while its event loop is the bottleneck.
 *
 * Why: one Node process parses HTTP, submits jobs and writes answers on one thread. Offered more
 * requests than that thread can finish, the excess does not queue where the server can see it:
 * it waits in the sockets until the saturated loop reads it, so every request, refused or not,
 * gets later and later (measured on an H100 at twice a worker's capacity: 429s after 4.7 s).
 * A limit on requests in progress never trips then (the GPU keeps up; the loop does not). What
 * keeps the answers quick is refusing enough work that the loop has time left to read, and
 * refuse, everything that arrives: a 429 costs the loop a fraction of a job.
 *
 * So a sampler measures, every interval, how late the event loop runs (its mean delay) and how
 * busy it is (event-loop utilization); once it has run late and busy, with many requests arriving,
 * for two looks in a row, the admitted share falls multiplicatively (by target / delay); once it
 * runs on time the share climbs back (AIMD, as TCP's congestion window). A look in which the turn
 * budget (turn-budget.ts) refused the ends of long turns also cuts the share, by the part refused,
 * so the refusals move from the turns' ends (the requests that waited longest) to all positions.
 * Admission is spread evenly through time by a credit counter, not drawn at random.
 * This file is the CUDA-free, timer-free core; shedding/index.ts samples the loop and asks it.
 */

/** The gentlest cut of the share per overloaded sample (a delay just over the target). */
const MILDEST_CUT = 0.9;
/**
 * Late looks in a row before shedding starts: one long block (a collection, say) is one late look;
 * a flood makes every look late. A look FAR_BEHIND times the target late, with a flood of new
 * requests, starts it at once: the backlog a flood builds in one more look is what its slowest
 * answers wait for.
 */
const LATE_LOOKS_TO_START = 2;
const FAR_BEHIND = 2;
/**
 * New requests a look must see to count toward a flood. A flood brings many to every look; one
 * client's heavy requests bring one at a time, and a burst of new connections trickles in (a busy
 * Node server accepts about one connection per loop turn), a few per look: neither is shed.
 */
const FLOOD_ARRIVALS = 16;
/** Utilization under which a look shows a loop with time to spare: nothing can be waiting. */
const IDLE_ENOUGH = 0.5;
/**
 * Looks that pressure (underPressure) lasts after the last look that shed or in which the turn
 * budget refused: the turn budget that pressure arms keeps the loop on time, so "on time" alone
 * must not disarm it while the flood lasts, or shedding would switch off and on every few looks.
 */
const PRESSURE_HOLD_LOOKS = 20;

/** One look at the event loop over a sampling interval. */
export interface LoopSample {
  /** Mean delay of the loop over the interval, ms (monitorEventLoopDelay). */
  lagMs: number;
  /** Share of the interval the loop was busy, 0..1 (performance.eventLoopUtilization). */
  utilization: number;
  /** New POSTs that reached the server in the interval: a late, busy loop that none reached is not flooded (start-up, a compile, one request's first-time setup). */
  arrivals: number;
  /** POSTs refused in the interval by the turn budget (turn-budget.ts), which pressure arms: while it refuses, the flood goes on. */
  refusedInLongTurns?: number | undefined;
}

/** How the admitted share reacts; every field has a default. */
export interface AdmissionOptions {
  /** The loop's mean delay above which, while it is busy, the share falls, ms. */
  targetLagMs: number;
  /** Utilization at or above which a late loop counts as saturated (not one late timer in an idle loop); default 0.8. */
  busyUtilization?: number | undefined;
  /**
   * The strongest cut per overloaded sample: the share is multiplied by target / delay, kept
   * within [decrease, 0.9], so a loop far behind sheds fast and one just over sheds gently; default 0.5.
   */
  decrease?: number | undefined;
  /** Added to the share per sample on time (delay under half the target); small, so the share creeps back instead of overshooting into another backlog; default 0.02. */
  increase?: number | undefined;
  /** The share never falls below this, so the loop keeps measuring real work; default 0.02. */
  minShare?: number | undefined;
}

/** The admitted share of new work and the decision per request. */
export class AdmissionController {
  readonly #targetLagMs: number;
  readonly #busy: number;
  readonly #decrease: number;
  readonly #increase: number;
  readonly #minShare: number;
  #share = 1;
  #credit = 0;
  #lateInARow = 0;
  /** Looks left until pressure ends. */
  #pressure = 0;
  #admitted = 0;
  #refused = 0;

  constructor(options: AdmissionOptions) {
    const { targetLagMs } = options;
    if (typeof targetLagMs !== 'number' || !(targetLagMs > 0) || !Number.isFinite(targetLagMs))
      throw new RangeError(`targetLagMs must be a positive number of ms, got ${String(targetLagMs)}`);
    const fraction = (name: string, value: number | undefined, fallback: number): number => {
      const v = value ?? fallback;
      if (typeof v !== 'number' || !(v > 0) || !(v <= 1))
        throw new RangeError(`${name} must be in (0, 1], got ${String(v)}`);
      return v;
    };
    this.#targetLagMs = targetLagMs;
    this.#busy = fraction('busyUtilization', options.busyUtilization, 0.8);
    this.#decrease = fraction('decrease', options.decrease, 0.5);
    this.#increase = fraction('increase', options.increase, 0.02);
    this.#minShare = fraction('minShare', options.minShare, 0.02);
  }

  /** The share of new work admitted now, minShare..1. */
  get share(): number {
    return this.#share;
  }

  /**
   * Whether the loop is under a flood: shedding started or went on (late, busy looks with many
   * arrivals, as update() counts them) within the last PRESSURE_HOLD_LOOKS looks, or the turn
   * budget refused in one, or the share is below 1. The server refuses within long turns only then,
   * so a closed loop of clients at capacity (whose turns also run long now and then) is served.
   */
  get underPressure(): boolean {
    return this.#pressure > 0 || this.#share < 1;
  }

  /** Requests admitted and refused by admit() since the last takeCounts(). */
  takeCounts(): { admitted: number; refused: number } {
    const counts = { admitted: this.#admitted, refused: this.#refused };
    this.#admitted = 0;
    this.#refused = 0;
    return counts;
  }

  /** Adjusts the share from one interval's look at the loop. */
  update(sample: LoopSample): void {
    const late =
      sample.lagMs > this.#targetLagMs && sample.utilization >= this.#busy && sample.arrivals >= FLOOD_ARRIVALS;
    this.#lateInARow = late ? this.#lateInARow + 1 : 0;
    const inLongTurns = sample.refusedInLongTurns ?? 0;
    // Shedding starts on the second late look in a row, or at once on one far behind.
    const shed =
      late &&
      (this.#share < 1 || this.#lateInARow >= LATE_LOOKS_TO_START || sample.lagMs > FAR_BEHIND * this.#targetLagMs);
    if (shed || inLongTurns > 0) this.#pressure = PRESSURE_HOLD_LOOKS;
    else if (this.#pressure > 0) this.#pressure--;
    if (sample.utilization < IDLE_ENOUGH) {
      // A loop idle for half the interval had nothing waiting to be read: whatever the share was
      // for, it is over (a burst, a block) and all new work is taken again at once.
      this.#share = 1;
      this.#credit = 0;
      this.#pressure = 0;
    } else if (shed) this.#cut(this.#targetLagMs / sample.lagMs);
    else if (inLongTurns > 0) {
      // The turn budget refused the ends of long turns, the requests read last, which had waited
      // longest: take that much less, spread evenly by the credit counter, so that the refusals fall
      // on every position of a turn and the budget itself rarely has to act.
      this.#cut(1 - inLongTurns / Math.max(inLongTurns, sample.arrivals));
    } else if (sample.lagMs < this.#targetLagMs / 2 && this.#share < 1) {
      this.#share = Math.min(1, this.#share + this.#increase);
      if (this.#share === 1) this.#credit = 0;
    }
  }

  /** Multiplies the share by `factor`, kept within [decrease, MILDEST_CUT]; never below minShare. */
  #cut(factor: number): void {
    this.#share = Math.max(this.#minShare, this.#share * Math.min(MILDEST_CUT, Math.max(this.#decrease, factor)));
  }

  /** Whether to take one more request: all while the share is 1, else `share` of them, evenly spaced. */
  admit(): boolean {
    if (this.#share >= 1) {
      this.#admitted++;
      return true;
    }
    this.#credit += this.#share;
    // Within rounding of 1: ten additions of 0.1 come to 0.9999999999999999.
    if (this.#credit >= 1 - 1e-9) {
      this.#credit -= 1;
      this.#admitted++;
      return true;
    }
    this.#refused++;
    return false;
  }
}
