/**
 * Adaptive load shedding, CUDA- and HTTP-free: the share of new work a server refuses, driven by
 * how late its event loop runs.
 *
 * Refusing everything while the loop is late and nothing once it has caught up oscillates: under
 * an offered rate twice what the loop can serve, the loop recovers between samples, lets a flood
 * in, falls behind again, and on the whole refuses too little (measured: 22 % of the requests at
 * 2x, with every answer, 429s included, seconds late). A refused request still costs the loop its
 * headers, body and answer, so keeping up at 2x means refusing most of the excess on every turn.
 * The shedder therefore keeps a refusal share: raised on each late sample (at once to all when
 * the loop runs twice its target behind), lowered geometrically on each sample that is on time,
 * so under steady overload it settles where the loop runs near its target and a request, refused
 * or not, waits about one turn.
 */
export class LoadShedder {
  /** The loop delay the shedder holds the loop to, ms. */
  readonly targetMs: number;
  #share = 0;
  #lastLagMs = 0;
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

  /** One measurement of how late the loop ran, ms (how much later than due a timer fired). */
  sample(lagMs: number): void {
    this.#lastLagMs = lagMs;
    if (lagMs >= 2 * this.targetMs) this.#share = 1;
    else if (lagMs > this.targetMs) this.#share = Math.min(1, this.#share + SHARE_STEP_UP);
    else {
      this.#share *= SHARE_DECAY;
      if (this.#share < SHARE_FLOOR) this.#share = 0;
    }
  }

  /** Whether to refuse one new piece of work now. */
  refuse(): boolean {
    return this.#share > 0 && this.#random() < this.#share;
  }
}

/** Added to the refusal share per late sample (below twice the target). */
const SHARE_STEP_UP = 0.1;
/** The share kept per on-time sample: at one sample per 10 ms it halves in ~30 ms and is gone in ~0.3 s. */
const SHARE_DECAY = 0.8;
/** Below this the share is zero: no stray refusals long after the overload. */
const SHARE_FLOOR = 0.01;

/**
 * Samples how late a 10 ms interval timer fires and feeds it to `shedder`; returns the stop
 * function. The timer is unref'd: it keeps no process alive. In a saturated loop it fires once
 * per turn, so each turn's length is one sample.
 */
export function sampleLoopDelay(shedder: LoadShedder, intervalMs = 10): () => void {
  let due = performance.now() + intervalMs;
  const timer = setInterval(() => {
    const now = performance.now();
    shedder.sample(Math.max(0, now - due));
    due = now + intervalMs;
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
