/**
 * Raw-socket clients for the server's fuzz suite: what a hostile or broken client sends (bad
 * framing, trickled bodies, lengths it never sends), and what comes back, with a time bound on
 * every wait and a peak-memory probe.
 */
import { Socket } from 'node:net';
import { expect } from 'vitest';
import { createServer, type TscudaServer } from '../../../src/server/index.js';

/** A raw connection: what it has received, whether it was reset, and when it closed. */
export interface RawConnection {
  socket: Socket;
  received(): string;
  /** Set when the connection ended with a reset (ECONNRESET) instead of a close. */
  reset(): boolean;
  closed: Promise<void>;
  write(data: string | Buffer): Promise<void>;
}

/** Opens a connection to `port` and writes `first` (if given); `allowHalfOpen` keeps it writable after the server's FIN. */
export async function connect(
  port: number,
  first?: string | Buffer,
  options: { allowHalfOpen?: boolean } = {},
): Promise<RawConnection> {
  const socket = new Socket({ allowHalfOpen: options.allowHalfOpen ?? false });
  let received = '';
  let reset = false;
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'ECONNRESET' || e.code === 'EPIPE') reset = true;
  });
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r) => socket.connect(port, '127.0.0.1', r));
  const write = (data: string | Buffer): Promise<void> =>
    new Promise<void>((resolve) => {
      if (socket.destroyed || !socket.writable) return resolve();
      socket.write(data, () => resolve());
    });
  if (first !== undefined) await write(first);
  return { socket, received: () => received, reset: () => reset, closed, write };
}

/** Waits until `what` holds, failing after `ms`. */
export async function until(what: () => boolean, label: string, ms = 5000): Promise<void> {
  const t0 = performance.now();
  while (!what()) {
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The status and JSON body of the first complete response in `text`, or undefined while incomplete. */
export function firstResponse(text: string): { status: number; headers: string; body: unknown } | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const headers = text.slice(0, end);
  const length = /content-length: (\d+)/i.exec(headers);
  const body = text.slice(end + 4, end + 4 + (length ? Number(length[1]) : 0));
  if (length && body.length < Number(length[1])) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = body;
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body: json };
}

/** Waits for a complete first response on `c`. */
export async function response(
  c: RawConnection,
  ms = 5000,
): Promise<{ status: number; headers: string; body: unknown }> {
  await until(() => firstResponse(c.received()) !== undefined || c.reset(), 'a response', ms);
  const r = firstResponse(c.received());
  if (r === undefined)
    throw new Error(
      `the connection was reset without a response (received ${JSON.stringify(c.received().slice(0, 200))})`,
    );
  return r;
}

/** Request head bytes. */
export function head(method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;
}

/** Asserts the documented error shape `{ error: { code, message, retryable, field? } }` and returns the error. */
export function errorOf(body: unknown): { code: string; message: string; field?: string; retryable: boolean } {
  expect(body).toMatchObject({
    error: { code: expect.any(String), message: expect.any(String), retryable: expect.any(Boolean) },
  });
  return (body as { error: { code: string; message: string; field?: string; retryable: boolean } }).error;
}

/** Peak growth of heap and array-buffer memory while `work` runs (sampled every 5 ms), bytes. */
export async function peakGrowth<T>(
  work: () => Promise<T>,
): Promise<{ result: T; heapBytes: number; bufferBytes: number; ms: number }> {
  const base = process.memoryUsage();
  let heap = 0;
  let buffers = 0;
  const sample = (): void => {
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapUsed - base.heapUsed);
    buffers = Math.max(buffers, m.arrayBuffers - base.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  const t0 = performance.now();
  try {
    const result = await work();
    sample();
    return { result, heapBytes: heap, bufferBytes: buffers, ms: performance.now() - t0 };
  } finally {
    clearInterval(timer);
  }
}

/** Servers made by a test file, closed after each test. */
export function serverFactory(): {
  make(options?: Parameters<typeof createServer>[0]): TscudaServer;
  closeAll(): Promise<void>;
} {
  const servers: TscudaServer[] = [];
  return {
    make(options = {}) {
      const s = createServer(options);
      servers.push(s);
      return s;
    },
    async closeAll() {
      await Promise.all(servers.splice(0).map((s) => s.close()));
    },
  };
}

/** Listens on a free port; returns it. */
export async function listen(s: TscudaServer): Promise<number> {
  return Number(new URL(await s.listen({ port: 0, host: '127.0.0.1' })).port);
}

export const MiB = 1024 * 1024;
