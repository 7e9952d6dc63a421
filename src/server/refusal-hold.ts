/**
 * Holding refused clients off: after a 429 on a keep-alive connection, the server does not read
 * that connection again for a back-off, so a client that resends the moment it is refused
 * (a closed loop that ignores `Retry-After`, as load generators and naive retry loops do) waits
 * as if it had honoured it.
 *
 * Why: a refusal is cheap but not free — the refused request's headers and body must still be
 * read for the connection to live. A closed loop of N clients answered 429 in a millisecond
 * comes back N times per millisecond, so once the loop runs behind, refusals take the loop from
 * the work it admitted, the loop runs further behind, and more is refused: the goodput collapses
 * (measured on a 2-core host, 64 closed-loop clients: 868 requests/s served with shedding off,
 * 169 with it on and no hold). An open-loop flood of new clients is unaffected: each of them is
 * refused once. The held connection's next request is only read later, not lost; it is judged
 * anew then.
 *
 * The back-off doubles with each refusal in a row on the connection, from `baseMs` up to `maxMs`
 * (the `Retry-After` the client was given), and starts over once one of its requests is admitted.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

/** Back-off of a connection refused `streak` times in a row (1 = the first refusal), ms. */
export function holdMs(streak: number, baseMs: number, maxMs: number): number {
  if (!(streak >= 1) || baseMs <= 0) return 0;
  // 2^30 already dwarfs any cap; the exponent is bounded so the product stays finite.
  return Math.min(maxMs, baseMs * 2 ** Math.min(streak - 1, 30));
}

/** Options of a RefusalHold. */
export interface RefusalHoldOptions {
  /** Back-off after the first refusal in a row, ms (0 turns holding off). */
  baseMs: number;
  /** Longest back-off, ms: the `Retry-After` the refused client was given. */
  maxMs: number;
}

/** The connections held unread after a refusal, and each connection's streak of refusals. */
export class RefusalHold {
  readonly #options: RefusalHoldOptions;
  /** Held connections and the timers that read them again. */
  readonly #held = new Map<Socket, NodeJS.Timeout>();
  /** Refusals in a row per connection (gone with the connection). */
  readonly #streaks = new WeakMap<Socket, number>();
  #holds = 0;
  /** Set by releaseAll(): nothing is held from then on (the server is closing, or leaving). */
  #stopped = false;
  /** One listener for every held connection that closes while held (no closure per hold). */
  readonly #onClose: (this: Socket) => void;

  constructor(options: RefusalHoldOptions) {
    this.#options = options;
    const release = (socket: Socket): void => this.#release(socket);
    this.#onClose = function (this: Socket) {
      release(this);
    };
  }

  /** Connections held unread now. */
  get held(): number {
    return this.#held.size;
  }

  /** Holds started since this hold was made (a counter for metrics). */
  get holds(): number {
    return this.#holds;
  }

  /** A request on this connection was admitted: its next refusal is a first one again. */
  admitted(request: IncomingMessage): void {
    if (request.socket instanceof Socket) this.#streaks.delete(request.socket);
  }

  /**
   * `response` refuses `request` (a 429): once the request has been read to its end and the
   * answer written, its connection is held unread for the back-off. (Pausing any earlier would be
   * undone: Node resumes the socket to drain the body of a request answered before it was read.)
   */
  refused(request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    // inject() requests have no real socket: nothing to hold.
    if (this.#stopped || this.#options.baseMs <= 0 || !(socket instanceof Socket) || socket.destroyed) return;
    const streak = (this.#streaks.get(socket) ?? 0) + 1;
    this.#streaks.set(socket, streak);
    let waiting = 2;
    const both = (): void => {
      if (--waiting === 0) this.#hold(socket, holdMs(streak, this.#options.baseMs, this.#options.maxMs));
    };
    if (request.complete && request.readableEnded) waiting--;
    else request.once('end', both);
    if (response.writableFinished) both();
    else response.once('finish', both);
  }

  /** Reads every held connection again now, and holds none from here on. */
  releaseAll(): void {
    this.#stopped = true;
    for (const socket of [...this.#held.keys()]) this.#release(socket);
  }

  #hold(socket: Socket, ms: number): void {
    // A connection the client or the server is closing is not held; a pipelined request already
    // read is answered as usual (the hold only delays the reading of what comes next).
    if (this.#stopped || ms <= 0 || socket.destroyed || !socket.readable || this.#held.has(socket)) return;
    socket.pause();
    const timer = setTimeout(() => this.#release(socket), ms);
    timer.unref();
    this.#held.set(socket, timer);
    this.#holds++;
    socket.once('close', this.#onClose);
  }

  #release(socket: Socket): void {
    const timer = this.#held.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#held.delete(socket);
    socket.off('close', this.#onClose);
    if (!socket.destroyed) socket.resume();
  }
}
