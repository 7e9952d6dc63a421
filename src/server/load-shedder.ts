/**
 * Adaptive load shedding, CUDA- and HTTP-free: the share of new work a server refuses, driven by
 * how busy its event loop is (utilization) and how late it runs (delay).
 *
 * Refusing everything while the loop is late and nothing once it has caught up oscillates: under
 * an offered rate twice what the loop can serve, the loop recovers between samples, lets a flood
 * in, falls behind again, and on the whole refuses too little (measured: 22 % of the requests at
 * 2x, with every answer, 429s included, seconds late). A refused request still costs the loop its
 * headers, body and answer, so keeping up at 2x means refusing most of the excess on every turn.
 * Delay alone is not enough either: a saturated loop can turn quickly (each turn reads what the
 * sockets hold) while the backlog waits in the sockets and the clients (measured: loop delay under
 * 25 ms while requests waited seconds). Utilization (the share of time the loop is not idle,
 * `performance.eventLoopUtilization()`) shows that saturation.
 * The shedder therefore keeps a refusal share: raised on each sample where the loop was saturated
 * or late (at once to all when it runs twice its target behind), held while it is busy but keeps
 * up, lowered geometrically once it has idle time again, so under steady overload it settles
 * where the loop just keeps up and a request, refused or not, waits about one turn.
 */
export class LoadShedder {
  /** The loop delay the shedder holds the loop to, ms. */
  readonly targetMs: number;
  #share = 0;
  #lastLagMs = 0;
  #lastUtilization = 0;
  readonly #random: () => number;

  /** `targetMs` > 0; `random` in [0, 1) decides each refusal (tests pass their own). */
  constructor(targetMs: number, random: () => number = Math.random) {
    if (!(Number.isFinite(targetMs) && targetMs > 0)) throw new RangeError(`LoadShedder target must be a positive number of milliseconds, got ${String(targetMs)}`);
    this.targetMs = targetMs;
    this.#random = random;
  }

  /** Share of new work refused now, 0..1. */
  get share(): number {
    return this.#share;
  }

  /** The last sample's loop delay, ms. */
  get lastLagMs(): number {
    return this.#lastLagMs;
  }

  /** The last sample's loop utilization, 0..1. */
  get lastUtilization(): number {
    return this.#lastUtilization;
  }

  /**
   * One measurement: how late the loop ran, ms (how much later than due a timer fired), and its
   * utilization over the same interval, 0..1 (the share of time it was not idle).
   */
  sample(lagMs: number, utilization = 0): void {
    this.#lastLagMs = lagMs;
    this.#lastUtilization = utilization;
    if (lagMs >= 2 * this.targetMs) this.#share = 1;
    else if (lagMs > this.targetMs || utilization >= SATURATED) this.#share = Math.min(1, this.#share + SHARE_STEP_UP);
    else if (utilization < KEEPING_UP) {
      this.#share *= SHARE_DECAY;
      if (this.#share < SHARE_FLOOR) this.#share = 0;
    }
  }

  /** Whether to refuse one new piece of work now. */
  refuse(): boolean {
    return this.#share > 0 && this.#random() < this.#share;
  }
}

/** Added to the refusal share per saturated or late sample (below twice the target). */
const SHARE_STEP_UP = 0.05;
/** Utilization at which the loop counts as saturated: work arrives faster than it is served. */
const SATURATED = 0.97;
/** Utilization below which the loop has time to spare and the share fades; between the two it is held. */
const KEEPING_UP = 0.9;
/** The share kept per on-time sample: at one sample per 10 ms it halves in ~30 ms and is gone in ~0.3 s. */
const SHARE_DECAY = 0.8;
/** Below this the share is zero: no stray refusals long after the overload. */
const SHARE_FLOOR = 0.01;

/**
 * Samples how late a 10 ms interval timer fires, and the loop's utilization since the last tick,
 * and feeds them to `shedder`; returns the stop function. The timer is unref'd: it keeps no process alive. In a saturated loop it fires once
 * per turn, so each turn's length is one sample.
 */
export function sampleLoopDelay(shedder: LoadShedder, intervalMs = 10): () => void {
  let due = performance.now() + intervalMs;
  let busy = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.now();
    const current = performance.eventLoopUtilization();
    shedder.sample(Math.max(0, now - due), performance.eventLoopUtilization(current, busy).utilization);
    busy = current;
    due = now + intervalMs;
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
