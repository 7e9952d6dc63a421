/**
 * Liveness: whether Redis answers, not only whether its socket is up. A Redis that stops answering
 * (SIGSTOP, a network path that drops packets) keeps its TCP connection: ioredis still says
 * `ready`, and without this a client would call it reachable while every command waits. A probe
 * (PING, bounded) runs every half `timeoutMs` (from 50 ms to 1 s); one unanswered within
 * `timeoutMs`, or an operation that timed out, makes the client unreachable until a probe is
 * answered again.
 */

/** What Liveness needs: the probe, and whether the connections are up at all. */
export interface LivenessProbe {
  /** Resolves true when Redis answered within `timeoutMs` (never rejects). */
  probe(timeoutMs: number): Promise<boolean>;
  /** Whether the connections are up (a probe is pointless while they reconnect). */
  connected(): boolean;
}

/** Probes no more often than every this many ms, whatever the timeout: a probe is a command on the queue's Redis. */
const MAX_PROBE_INTERVAL_MS = 1000;
/** Probes at least this far apart, ms. */
const MIN_PROBE_INTERVAL_MS = 50;

/** The probe period for a bound of `timeoutMs`: half of it (a silent Redis is seen within about 1.5 bounds), from 50 ms to 1 s. */
export function probeIntervalMs(timeoutMs: number): number {
  return Math.min(MAX_PROBE_INTERVAL_MS, Math.max(MIN_PROBE_INTERVAL_MS, Math.floor(timeoutMs / 2)));
}

/** Tracks whether Redis answers (see the file's comment). */
export class Liveness {
  readonly #target: LivenessProbe;
  readonly #timeoutMs: number;
  readonly #timer: NodeJS.Timeout;
  #answering = true;
  #probing = false;

  constructor(target: LivenessProbe, timeoutMs: number) {
    this.#target = target;
    this.#timeoutMs = timeoutMs;
    this.#timer = setInterval(() => void this.#probe(), probeIntervalMs(timeoutMs));
    // A probe never keeps a process alive.
    this.#timer.unref();
  }

  /** False from an unanswered probe or a timed-out operation until a probe is answered. */
  get answering(): boolean {
    return this.#answering;
  }

  /** An operation got no answer within its bound: unreachable until a probe is answered. */
  stalled(): void {
    this.#answering = false;
  }

  /** Stops probing. */
  close(): void {
    clearInterval(this.#timer);
  }

  async #probe(): Promise<void> {
    if (this.#probing || !this.#target.connected()) return;
    this.#probing = true;
    try {
      this.#answering = await this.#target.probe(this.#timeoutMs);
    } finally {
      this.#probing = false;
    }
  }
}
