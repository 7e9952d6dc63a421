/**
 * Binary bodies past the limit: a chunked body is refused at the limit and the server stops
 * reading it (the answer, then at most a few MiB dropped, then the connection cut); the body pool
 * gives a burst's memory back once idle; the body limit is one fixed bound on every Node line.
 * Loopback only.
 */
import type { Socket } from 'node:net';
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { BufferPool } from '../../../src/runtime/memory/buffer-pool.js';
import { IdleTrim } from '../../../src/server/shedding/body-pool.js';
import { FakeEngine } from './fake-engine.js';
import {
  MiB,
  connect,
  errorOf,
  firstResponse,
  head,
  listen,
  response,
  serverFactory,
  until,
} from './hostile-client.js';

const servers = serverFactory();
afterAll(() => servers.closeAll());

describe('a chunked binary body over the limit', () => {
  it('is answered 413 at the limit, and the server stops reading: at most a few MiB more, then the connection is cut', async () => {
    const s = servers.make({ engine: new FakeEngine(), limits: { bodyLimitBytes: MiB } });
    const port = await listen(s);
    const serverSockets: Socket[] = [];
    s.app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
    // Half-open allowed: the client goes on sending after the server's FIN, as a flood does (a Node client would stop there).
    const c = await connect(
      port,
      head('POST', '/v1/stft', { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' }),
      { allowHalfOpen: true },
    );
    const chunk = Buffer.concat([
      Buffer.from(`${(256 * 1024).toString(16)}\r\n`),
      Buffer.alloc(256 * 1024),
      Buffer.from('\r\n'),
    ]);
    // As fast as the socket takes it, for at most 3 s.
    const t0 = performance.now();
    let answeredAfter = -1;
    while (!c.socket.destroyed && c.socket.writable && performance.now() - t0 < 3000) {
      if (answeredAfter < 0 && firstResponse(c.received()) !== undefined) answeredAfter = c.socket.bytesWritten;
      if (!c.socket.write(chunk)) await new Promise((r) => setTimeout(r, 1));
    }
    await until(() => serverSockets.every((socket) => socket.destroyed), 'the server closed the connection', 3000);
    const answer = firstResponse(c.received());
    expect(answer?.status).toBe(413);
    expect(errorOf(answer?.body).code).toBe('body_too_large');
    const read = serverSockets.reduce((n, socket) => n + socket.bytesRead, 0);
    // The limit, what was in flight when the answer went, the 4 MiB dropped after it. Before: every
    // byte sent for 2 s after the answer (hundreds of MiB over loopback).
    expect(read).toBeLessThan(16 * MiB);
    expect(performance.now() - t0).toBeLessThan(3000);
    c.socket.destroy();
  }, 10_000);
});

describe('the bytes of bodies held at once, all requests together', () => {
  it('a chunk that would pass maxBodyBytesInFlight refuses its body (429 bodies_full, retryable); the others complete, and every byte is handed back', async () => {
    const s = servers.make({
      engine: new FakeEngine(),
      limits: { bodyLimitBytes: 4 * MiB, maxBodyBytesInFlight: 8 * MiB },
    });
    const port = await listen(s);
    const serverSockets: Socket[] = [];
    s.app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
    const headers = {
      'content-type': 'application/octet-stream',
      accept: 'application/octet-stream',
      'content-length': 4 * MiB,
    };
    const open = (): ReturnType<typeof connect> => connect(port, head('POST', '/v1/stft', headers));
    const send = async (c: Awaited<ReturnType<typeof connect>>, bytes: number): Promise<void> => {
      for (let at = 0; at < bytes; at += 256 * 1024) await c.write(Buffer.alloc(256 * 1024));
    };
    const [a, b, c] = await Promise.all([open(), open(), open()]);
    onTestFinished(() => [a, b, c].forEach((x) => x.socket.destroy()));
    await send(a, 3 * MiB);
    await send(b, 3 * MiB);
    // A client's write ends in its kernel's buffer: the server has counted a's and b's bytes only once
    // it has read them. Before that, c's chunks could be counted first and a or b refused instead.
    await until(
      () => serverSockets.filter((x) => x.bytesRead >= 3 * MiB).length >= 2,
      'the server to read 3 MiB of two bodies',
      10_000,
    );
    // 6 MiB held: the third body passes the 8 MiB bound on its way.
    await send(c, 3 * MiB);
    const refused = await response(c, 10_000);
    expect(refused.status).toBe(429);
    expect(errorOf(refused.body)).toMatchObject({ code: 'bodies_full', field: 'body', retryable: true });
    expect(refused.headers).toMatch(/^retry-after: 1$/im);
    await c.closed;
    // Its bytes handed back: the other two complete.
    await send(a, MiB);
    await send(b, MiB);
    expect((await response(a, 10_000)).status).toBe(200);
    expect((await response(b, 10_000)).status).toBe(200);
    a.socket.destroy();
    b.socket.destroy();
    await Promise.all([a.closed, b.closed]);
    // Nothing left counted: two whole bodies fit again, twice over.
    for (let round = 0; round < 2; round++) {
      const pair = await Promise.all([open(), open()]);
      onTestFinished(() => pair.forEach((x) => x.socket.destroy()));
      await Promise.all(pair.map((p) => send(p, 4 * MiB)));
      for (const p of pair) expect((await response(p, 10_000)).status).toBe(200);
      for (const p of pair) p.socket.destroy();
      await Promise.all(pair.map((p) => p.closed));
    }
  }, 60_000);

  it('the bound is never below one whole body', () => {
    const s = servers.make({ limits: { bodyLimitBytes: 64 * MiB, maxBodyBytesInFlight: MiB } });
    expect(s.app.initialConfig.bodyLimit).toBe(64 * MiB);
    expect(() => servers.make({ limits: { maxBodyBytesInFlight: 0 } })).toThrow(/limits\.maxBodyBytesInFlight/);
  });
});

describe('the body pool after a burst', () => {
  it('IdleTrim leaves a pool in use whole and trims an idle one to its bound', () => {
    vi.useFakeTimers();
    const pool = new BufferPool(256 * MiB);
    const trim = new IdleTrim(pool, { idleMs: 1000, keepBytes: 2 * MiB });
    try {
      const taken = [1, 2, 4, 8, 16].map((m) => pool.take(m * MiB));
      for (const b of taken) pool.release(b);
      expect(pool.cachedBytes).toBe(31 * MiB);
      // Touched between every two checks: kept whole.
      for (let i = 0; i < 5; i++) {
        trim.touch();
        vi.advanceTimersByTime(1000);
      }
      expect(pool.cachedBytes).toBe(31 * MiB);
      // Untouched for a whole interval: trimmed, largest buffers first, to at most the bound.
      vi.advanceTimersByTime(1000);
      expect(pool.cachedBytes).toBe(MiB);
    } finally {
      trim.stop();
      vi.useRealTimers();
    }
  });

  it('BufferPool.trim frees through the allocator and refuses a bad bound', () => {
    const freed: number[] = [];
    const pool = new BufferPool(64 * MiB, {
      allocate: (bytes) => Buffer.alloc(bytes),
      free: (buffer) => freed.push(buffer.byteLength),
    });
    for (const b of [pool.take(MiB), pool.take(4 * MiB)]) pool.release(b);
    expect(pool.trim(MiB)).toBe(4 * MiB);
    expect(freed).toEqual([4 * MiB]);
    expect(() => pool.trim(-1)).toThrow(/keepBytes must be a non-negative integer/);
  });
});

describe('the body limit is one fixed bound on every Node line', () => {
  it('takes 2 GiB and refuses more, whatever buffer.constants.MAX_LENGTH is (2^32 on Node 20, 2^53 - 1 on 22+)', () => {
    expect(() => servers.make({ limits: { bodyLimitBytes: 2 ** 31 } })).not.toThrow();
    for (const limit of [2 ** 31 + 1, 2 ** 32, 99_999_999_999, Number.MAX_SAFE_INTEGER])
      expect(() => servers.make({ limits: { bodyLimitBytes: limit } }), String(limit)).toThrow(
        new RangeError(
          `limits.bodyLimitBytes must be at most 2147483648 (2 GiB: larger binary bodies do not fit the body pool's largest buffer), got ${limit}`,
        ),
      );
  });
});
