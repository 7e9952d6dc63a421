/**
 * A bounded graceful stop of one serving process (a worker, or `tscuda serve --workers 0`).
 *
 * Node's own `server.close()` closes every keep-alive connection it deems idle at once. Under
 * keep-alive load an "idle" connection often holds the client's next request, already sent and
 * sitting unread in the socket: closing it resets that request (observed: half the requests in
 * flight under load). And once closing, Node stops timing out request bodies, so one client that
 * never finishes its body held a stop for as long as it liked. So the drain here:
 * - answers every request that arrives from now on with `503 shutting_down` (retryable, the
 *   server's error shape) and `Connection: close`; responses already in progress get
 *   `Connection: close` too;
 * - on a stop of the service, goes on accepting connections until none has come for
 *   ACCEPT_QUIET_MS (at most ACCEPT_LINGER_MAX_MS): connections already waiting in the kernel's
 *   accept queue (sent before the stop; under load, hundreds) are taken and answered, where
 *   closing the listening socket at once resets every one of them (in a cluster the primary closes
 *   the shared socket once the last worker stops listening). A worker that retires while its
 *   peers serve stops accepting at once: new connections go to them;
 * - waits, up to UNREAD_WAIT_MS, for the request of every connection it accepted and has not yet
 *   read (closing it would reset that request), then lets the requests accepted finish as usual
 *   (the engine still runs them), then closes the server: its idle connections, its asynchronous
 *   jobs, its engine (a half-received request is left to arrive and get its 503);
 * - is bounded: at `deadlineMs` every connection still open is cut, and the outcome says so;
 *   `cut()` does the same at once (a second signal).
 * Installed when the server starts listening (`guardRequests`), because the requests already
 * in progress at the stop must be known to tell when they are done.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { HttpError } from '../errors.js';
import type { TscudaServer } from '../create-server.js';

/** How a drain ended. */
export interface DrainOutcome {
  /** True when every accepted request and job finished before the deadline. */
  drained: boolean;
  /** Requests still in progress when the drain was cut (0 when drained). */
  unfinished: number;
  /** Why it was cut, one line; null when drained. */
  cutReason: string | null;
  /** How long the drain took, ms. */
  ms: number;
}

/** Options of a drain. */
export interface DrainOptions {
  /**
   * Whether connections are still accepted (and answered 503) until they stop coming: true for a
   * stop of the service (default), false for a worker leaving while its peers go on serving.
   */
  acceptQueued?: boolean | undefined;
}

/** The stop of a guarded server. */
export interface DrainGuard {
  /** Requests in progress (their response not yet finished or abandoned). */
  readonly active: number;
  /** Stops gracefully within `deadlineMs`; resolves once the server is closed or the drain was cut. Idempotent. */
  drain(deadlineMs: number, options?: DrainOptions): Promise<DrainOutcome>;
  /** Cuts a drain in progress now (every connection closed); the drain resolves with `drained: false`. */
  cut(reason: string): void;
}

const SHUTTING_DOWN = new HttpError(
  503,
  'shutting_down',
  'the server is shutting down; retry (another instance, or this one once restarted)',
  { retryable: true, retryAfterS: 1 },
);
const SHUTTING_DOWN_JSON = JSON.stringify(SHUTTING_DOWN.toJSON());

/**
 * Once no request is in progress, how long idle connections stay before they are closed, ms: a
 * request already on its way (in the socket's buffer, not yet parsed) arrives meanwhile and gets
 * its 503 instead of a reset.
 */
const IDLE_LINGER_MS = 200;

/**
 * A stop of the service accepts connections until none has come for this long, ms (an accept
 * queue empties far faster), counted in the drain's looks at the loop: on a starved machine,
 * where the primary hands connections late, the quiet lasts longer in time.
 */
const ACCEPT_QUIET_MS = 250;
/** ... and at most this long after the stop began, ms: clients that go on connecting meet a closed port. */
const ACCEPT_LINGER_MAX_MS = 3000;
/** How long a connection accepted but not yet read may take to send its request before the server closes, ms. */
const UNREAD_WAIT_MS = 1000;
/** How often the drain looks at where it stands, ms. */
const DRAIN_TICK_MS = 25;

/** After the deadline, how long the server's own close (engine, batchers) may still take, ms. */
const CLOSE_GRACE_MS = 2000;

/** Answers a request that came during the drain: 503 + close, its body read away. */
function refuse(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  response.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(SHUTTING_DOWN_JSON),
    'retry-after': '1',
    connection: 'close',
  });
  response.end(SHUTTING_DOWN_JSON);
}

/**
 * Counts the requests of `server` in progress, and the connections whose first request has not
 * come, from now on, and returns its bounded drain. Call right after `server.listen()` resolves
 * (the http.Server exists then).
 */
export function guardRequests(server: TscudaServer): DrainGuard {
  const http: Server = server.app.server;
  const active = new Set<ServerResponse>();
  /** Connections accepted whose first request has not come yet. */
  const unread = new Set<Socket>();
  let draining = false;
  /** A connection came since the drain last looked. */
  let connected = false;
  let lastSettledAt = 0;
  // Shared listeners, not a closure per request or connection (the request path stays as cheap as it was).
  function settled(this: ServerResponse): void {
    if (active.delete(this)) lastSettledAt = performance.now();
  }
  function gone(this: Socket): void {
    unread.delete(this);
  }
  http.on('connection', (socket: Socket) => {
    connected = true;
    unread.add(socket);
    socket.once('close', gone);
  });
  const dispatch = http.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  http.removeAllListeners('request');
  http.on('request', (request: IncomingMessage, response: ServerResponse) => {
    unread.delete(request.socket);
    active.add(response);
    response.on('close', settled);
    if (draining) refuse(request, response);
    else for (const d of dispatch) d.call(http, request, response);
  });

  let outcome: Promise<DrainOutcome> | null = null;
  let cutNow: ((reason: string) => void) | undefined;
  return {
    get active() {
      return active.size;
    },
    cut(reason) {
      cutNow?.(reason);
    },
    drain(deadlineMs, options = {}) {
      if (outcome !== null) return outcome;
      draining = true;
      const t0 = performance.now();
      lastSettledAt = Math.max(lastSettledAt, t0);
      for (const response of active) if (!response.headersSent) response.setHeader('connection', 'close');
      let accepting = true;
      let stoppedAcceptingAt = t0;
      // Stops accepting, but not with http.Server.close(): it would also close every "idle"
      // keep-alive connection now (resetting requests already on their way) and stop timing out
      // slow bodies. The server's own close() comes once the accepted requests are done.
      const stopAccepting = (): void => {
        if (!accepting) return;
        accepting = false;
        stoppedAcceptingAt = performance.now();
        NetServer.prototype.close.call(http);
      };
      if (options.acceptQueued === false) stopAccepting();
      outcome = new Promise<DrainOutcome>((resolve) => {
        let cutReason: string | null = null;
        let unfinished = 0;
        let closing = false;
        const finish = (): void => {
          clearTimeout(timer);
          clearInterval(tick);
          resolve({ drained: cutReason === null, unfinished, cutReason, ms: performance.now() - t0 });
        };
        /** Accepted requests done (or cut): the server's close (its idle connections, its jobs, its engine). */
        const close = (): void => {
          if (closing) return;
          closing = true;
          clearInterval(tick);
          stopAccepting();
          server.close().then(finish, finish);
        };
        const cut = (reason: string): void => {
          if (cutReason !== null) return;
          cutReason = reason;
          unfinished = active.size;
          close();
          http.closeAllConnections();
          // The server's close still frees the engine; it gets a short grace, then the drain ends regardless.
          // Not unref()ed: the process must not end by itself (exit 0) before the drain reports its cut.
          setTimeout(finish, CLOSE_GRACE_MS);
        };
        cutNow = cut;
        const timer = setTimeout(() => cut(`the drain's deadline of ${deadlineMs} ms passed`), deadlineMs);
        let quietLooks = 0;
        const tick = setInterval(() => {
          const now = performance.now();
          quietLooks = connected ? 0 : quietLooks + 1;
          connected = false;
          if (accepting && (quietLooks * DRAIN_TICK_MS >= ACCEPT_QUIET_MS || now - t0 >= ACCEPT_LINGER_MAX_MS))
            stopAccepting();
          if (accepting || (unread.size > 0 && now - stoppedAcceptingAt < UNREAD_WAIT_MS)) return;
          if (active.size === 0 && now - lastSettledAt >= IDLE_LINGER_MS) close();
        }, DRAIN_TICK_MS);
      });
      return outcome;
    },
  };
}
