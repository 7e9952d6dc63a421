/**
 * A bounded graceful stop of one serving process (a worker, or `tscuda serve --workers 0`).
 *
 * Node's own `server.close()` closes every keep-alive connection it deems idle at once. Under
 * keep-alive load an "idle" connection often holds the client's next request, already sent and
 * sitting unread in the socket: closing it resets that request (observed: half the requests in
 * flight under load). And once closing, Node stops timing out request bodies, so one client that
 * never finishes its body held a stop for as long as it liked. So the drain here:
 * - stops accepting connections, and answers every request that arrives on an open connection
 *   with `503 shutting_down` (retryable, the server's error shape) and `Connection: close`;
 *   responses already in progress get `Connection: close` too;
 * - lets the requests already accepted finish as usual (the engine still runs them), then closes
 *   the server: its idle connections, its asynchronous jobs, its engine (a half-received request
 *   is left to arrive and get its 503);
 * - is bounded: at `deadlineMs` every connection still open is cut, and the outcome says so;
 *   `cut()` does the same at once (a second signal).
 * Installed when the server starts listening (`guardRequests`), because the requests already
 * in progress at the stop must be known to tell when they are done.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
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

/** The stop of a guarded server. */
export interface DrainGuard {
  /** Requests in progress (their response not yet finished or abandoned). */
  readonly active: number;
  /** Stops gracefully within `deadlineMs`; resolves once the server is closed or the drain was cut. Idempotent. */
  drain(deadlineMs: number): Promise<DrainOutcome>;
  /** Cuts a drain in progress now (every connection closed); the drain resolves with `drained: false`. */
  cut(reason: string): void;
}

const SHUTTING_DOWN = new HttpError(503, 'shutting_down', 'the server is shutting down; retry (another instance, or this one once restarted)', { retryable: true, retryAfterS: 1 });
const SHUTTING_DOWN_JSON = JSON.stringify(SHUTTING_DOWN.toJSON());

/**
 * Once no request is in progress, how long idle connections stay before they are closed, ms: a
 * request already on its way (in the socket's buffer, not yet parsed) arrives meanwhile and gets
 * its 503 instead of a reset.
 */
const IDLE_LINGER_MS = 200;

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
 * Counts the requests of `server` in progress from now on, and returns its bounded drain. Call
 * right after `server.listen()` resolves (the http.Server exists then).
 */
export function guardRequests(server: TscudaServer): DrainGuard {
  const http: Server = server.app.server;
  const active = new Set<ServerResponse>();
  let draining = false;
  let onIdle: (() => void) | undefined;
  // One shared listener, not a closure per request (the request path stays as cheap as it was).
  function settled(this: ServerResponse): void {
    if (active.delete(this) && active.size === 0) onIdle?.();
  }
  const dispatch = http.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  http.removeAllListeners('request');
  http.on('request', (request: IncomingMessage, response: ServerResponse) => {
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
    drain(deadlineMs) {
      if (outcome !== null) return outcome;
      draining = true;
      const t0 = performance.now();
      for (const response of active) if (!response.headersSent) response.setHeader('connection', 'close');
      // Stop accepting connections, but not with http.Server.close(): it would also close every
      // "idle" keep-alive connection now (resetting requests already on their way) and stop timing
      // out slow bodies. The server's own close() comes once the accepted requests are done.
      NetServer.prototype.close.call(http);
      outcome = new Promise<DrainOutcome>((resolve) => {
        let cutReason: string | null = null;
        let unfinished = 0;
        let closing = false;
        const finish = (): void => {
          clearTimeout(timer);
          onIdle = undefined;
          resolve({ drained: cutReason === null, unfinished, cutReason, ms: performance.now() - t0 });
        };
        /** Accepted requests done (or cut): the server's close (its idle connections, its jobs, its engine). */
        const close = (): void => {
          if (closing) return;
          closing = true;
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
        let lingering: NodeJS.Timeout | undefined;
        onIdle = () => {
          clearTimeout(lingering);
          lingering = setTimeout(() => {
            if (active.size === 0) close();
          }, IDLE_LINGER_MS);
        };
        if (active.size === 0) onIdle();
      });
      return outcome;
    },
  };
}
