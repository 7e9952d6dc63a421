/**
 * Connections the primary handed to a worker that died before taking them.
 *
 * node:cluster's round-robin scheduling accepts each connection in the primary and sends its
 * handle to a worker; the primary closes its own copy only when the worker answers that it took
 * it. A worker that dies in between (`kill -9`, a crash, a stopped process killed) never answers,
 * and Node keeps the primary's copy open forever: the client's request sits unread and unanswered
 * (observed: no answer and no close for 150 s and more). Node offers no hook for this, so the
 * guard watches the handles sent to each worker (the worker's `process.send`, which cluster's
 * hand-off calls) and the answers (`internalMessage` acks); when the worker exits, each handle it
 * never took is answered here: 503 `worker_lost` (retryable) in the server's error shape, then
 * closed. The worker never read from it, so nothing of the request was lost but its answer.
 */
import type { Worker } from 'node:cluster';
import { Socket } from 'node:net';

/** How long an orphaned connection may take to send its request before it is closed unanswered, ms. */
const ORPHAN_READ_MS = 2000;

const ORPHAN_BODY = JSON.stringify({
  error: {
    code: 'worker_lost',
    message: 'the worker process this connection was handed to exited before reading it; retry',
    retryable: true,
  },
});
const ORPHAN_RESPONSE =
  `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(ORPHAN_BODY)}\r\n` +
  `retry-after: 1\r\nconnection: close\r\n\r\n${ORPHAN_BODY}`;

/** cluster's internal hand-off message (node:internal/cluster/round_robin_handle). */
interface NewConn {
  cmd: 'NODE_CLUSTER';
  act: 'newconn';
  seq: number;
}

const isNewConn = (m: unknown): m is NewConn =>
  typeof m === 'object' &&
  m !== null &&
  (m as Partial<NewConn>).cmd === 'NODE_CLUSTER' &&
  (m as Partial<NewConn>).act === 'newconn' &&
  typeof (m as Partial<NewConn>).seq === 'number';

/** Answers an orphaned connection: waits for its request's first bytes, answers 503 + close, reads the rest away. */
function answerOrphan(handle: unknown): void {
  let socket: Socket;
  try {
    socket = new Socket({ handle: handle as never, readable: true, writable: true });
  } catch {
    return;
  }
  socket.on('error', () => socket.destroy());
  socket.setTimeout(ORPHAN_READ_MS, () => socket.destroy());
  // Answer once a request is there (an answer no request asked for confuses clients); reading on
  // until the client closes keeps unread bytes from turning the close into a reset.
  socket.once('data', () => socket.end(ORPHAN_RESPONSE));
  socket.resume();
}

/**
 * Watches the connections the primary hands to `worker`; once it exits, answers those it never
 * took. Calls `onOrphans(n)` when there were any. Install right after cluster.fork().
 */
export function guardHandoffs(worker: Worker, onOrphans?: (count: number) => void): void {
  const child = worker.process as unknown as {
    send: (...args: unknown[]) => boolean;
    on(event: 'internalMessage', listener: (m: unknown) => void): void;
  };
  const unacked = new Map<number, unknown>();
  const send = child.send;
  child.send = function guardedSend(this: unknown, ...args: unknown[]): boolean {
    const [message, handle] = args;
    if (isNewConn(message) && handle !== undefined && handle !== null) unacked.set(message.seq, handle);
    return send.apply(this, args);
  };
  child.on('internalMessage', (m: unknown) => {
    const ack =
      typeof m === 'object' && m !== null && (m as { cmd?: unknown }).cmd === 'NODE_CLUSTER'
        ? (m as { ack?: unknown }).ack
        : undefined;
    if (typeof ack === 'number') unacked.delete(ack);
  });
  worker.once('exit', () => {
    const orphans = [...unacked.values()];
    unacked.clear();
    for (const handle of orphans) answerOrphan(handle);
    if (orphans.length > 0) onOrphans?.(orphans.length);
  });
}
