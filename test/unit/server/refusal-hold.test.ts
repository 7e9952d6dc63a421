/** Holding refused clients off (refusal-hold.ts): the back-off, and what a held keep-alive client sees through a real socket. */
import { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { holdMs } from '../../../src/server/refusal-hold.js';
import { createServer, type TscudaServer } from '../../../src/server/index.js';
import { FakeEngine } from './fake-engine.js';

describe('holdMs', () => {
  it('doubles with each refusal in a row from the base up to the cap; nothing without a base or a refusal', () => {
    expect([1, 2, 3, 4, 5, 6].map((k) => holdMs(k, 50, 1000))).toEqual([50, 100, 200, 400, 800, 1000]);
    expect(holdMs(1, 300, 1000)).toBe(300);
    expect(holdMs(10_000, 50, 1000)).toBe(1000);
    expect(holdMs(1, 0, 1000)).toBe(0);
    expect(holdMs(0, 50, 1000)).toBe(0);
    expect(holdMs(Number.NaN, 50, 1000)).toBe(0);
  });
});

const servers: TscudaServer[] = [];
const clients: Socket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

interface RawResponse {
  status: number;
  body: string;
  /** ms from send() to the whole response. */
  ms: number;
}

/** A keep-alive HTTP/1.1 client on one raw socket, as a closed loop that resends at once: one request at a time. */
class RawClient {
  readonly socket = new Socket();
  #buffer = '';
  #closed = false;
  #waiter: (() => void) | undefined;

  static async open(port: number): Promise<RawClient> {
    const c = new RawClient();
    clients.push(c.socket);
    c.socket.on('data', (d: Buffer) => {
      c.#buffer += d.toString('latin1');
      c.#waiter?.();
    });
    c.socket.on('close', () => {
      c.#closed = true;
      c.#waiter?.();
    });
    c.socket.on('error', () => undefined);
    await new Promise<void>((resolve) => c.socket.connect(port, '127.0.0.1', resolve));
    return c;
  }

  /** Sends one POST /v1/stft and resolves with its response, or null if the connection closed without one. */
  async post(): Promise<RawResponse | null> {
    const body = JSON.stringify({ signal: [1, 2, 3, 4, 5, 6, 7, 8] });
    const t0 = performance.now();
    this.socket.write(`POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    for (;;) {
      const head = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/.exec(this.#buffer);
      if (head !== null) {
        const length = Number(/content-length: (\d+)/i.exec(head[2]!)?.[1] ?? 0);
        const end = head[0].length + length;
        if (this.#buffer.length >= end) {
          const response = { status: Number(head[1]), body: this.#buffer.slice(head[0].length, end), ms: performance.now() - t0 };
          this.#buffer = this.#buffer.slice(end);
          return response;
        }
      }
      if (this.#closed) return null;
      await new Promise<void>((resolve) => (this.#waiter = resolve));
    }
  }
}

/** A server whose one slot of work (maxPending 1) a held job can fill, so the raw client's POSTs are refused. */
async function fullServer(holdRefusedMs: number, retryAfterS = 1): Promise<{ s: TscudaServer; engine: FakeEngine; port: number; fill: () => Promise<{ statusCode: number }> }> {
  const engine = new FakeEngine({ manual: true });
  const s = createServer({ engine, limits: { maxPending: 1, holdRefusedMs, retryAfterS, maxEventLoopDelayMs: 0, maxTurnMs: 0 } });
  servers.push(s);
  const port = Number(new URL(await s.listen({ port: 0, host: '127.0.0.1' })).port);
  const fill = async (): Promise<{ statusCode: number }> => {
    const before = engine.submitted.length;
    const pending = s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: [1, 2, 3, 4] } });
    while (engine.submitted.length === before) await new Promise((r) => setTimeout(r, 2));
    return pending;
  };
  return { s, engine, port, fill };
}

const heldGauge = async (s: TscudaServer): Promise<number> =>
  Number(/^tscuda_held_connections(?:\{[^}]*\})? (\d+)$/m.exec((await s.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1]);

describe('holding refused clients off', () => {
  it('a client that resends the moment it is refused is read again only after the back-off, doubling per refusal in a row; an admitted request starts it over', async () => {
    const { s, engine, port, fill } = await fullServer(150);
    const first = fill();
    const client = await RawClient.open(port);
    const r1 = await client.post();
    expect(r1?.status).toBe(429);
    expect(r1!.body).toContain('"code":"too_many_requests"');
    // Resent at once: not read for 150 ms, then refused again (the slot is still full)...
    const resend = client.post();
    await new Promise((r) => setTimeout(r, 50));
    expect(await heldGauge(s)).toBe(1);
    const r2 = await resend;
    expect(r2?.status).toBe(429);
    expect(r2!.ms).toBeGreaterThanOrEqual(140);
    // ...and the next one after 300 ms.
    const r3 = await client.post();
    expect(r3?.status).toBe(429);
    expect(r3!.ms).toBeGreaterThanOrEqual(290);
    // The slot frees while the client is held: its request is read after 600 ms and admitted.
    engine.release();
    expect((await first).statusCode).toBe(200);
    const admittedPost = client.post();
    await new Promise((r) => setTimeout(r, 400));
    expect(engine.submitted.length).toBe(1);
    while (engine.submitted.length < 2) await new Promise((r) => setTimeout(r, 5));
    engine.release();
    const r4 = await admittedPost;
    expect(r4?.status).toBe(200);
    expect(r4!.ms).toBeGreaterThanOrEqual(590);
    expect(await heldGauge(s)).toBe(0);
    // Admitted: the next refusal holds for the base again.
    const second = fill();
    expect((await client.post())?.status).toBe(429);
    const r6 = await client.post();
    expect(r6?.status).toBe(429);
    expect(r6!.ms).toBeGreaterThanOrEqual(140);
    expect(r6!.ms).toBeLessThan(290 + 1000);
    engine.release();
    expect((await second).statusCode).toBe(200);
  });

  it('holdRefusedMs 0 reads a resend at once, and other connections are never held by one client', async () => {
    const { engine, port, fill } = await fullServer(0);
    const first = fill();
    const client = await RawClient.open(port);
    expect((await client.post())?.status).toBe(429);
    const again = await client.post();
    expect(again?.status).toBe(429);
    expect(again!.ms).toBeLessThan(140);
    engine.release();
    expect((await first).statusCode).toBe(200);

    const held = await fullServer(2000, 2);
    const filled = held.fill();
    const a = await RawClient.open(held.port);
    expect((await a.post())?.status).toBe(429);
    const aResend = a.post();
    const b = await RawClient.open(held.port);
    const rb = await b.post();
    expect(rb?.status).toBe(429);
    expect(rb!.ms).toBeLessThan(1000);
    held.engine.release();
    expect((await filled).statusCode).toBe(200);
    while (held.engine.submitted.length < 2) await new Promise((r) => setTimeout(r, 5));
    held.engine.release();
    const ra = await aResend;
    expect(ra?.status).toBe(200);
    expect(ra!.ms).toBeGreaterThanOrEqual(1900);
  });

  it('close() reads held clients first: a request sent while held gets an answer, not a connection closed under it', async () => {
    const { s, engine, port, fill } = await fullServer(5000, 10);
    const first = fill();
    const client = await RawClient.open(port);
    expect((await client.post())?.status).toBe(429);
    const whileHeld = client.post();
    await new Promise((r) => setTimeout(r, 50));
    expect(await heldGauge(s)).toBe(1);
    const t0 = performance.now();
    const closed = s.close();
    const answer = await whileHeld;
    expect(answer).not.toBeNull();
    expect([429, 503]).toContain(answer!.status);
    expect(performance.now() - t0).toBeLessThan(2000);
    engine.release();
    expect((await first).statusCode).toBe(200);
    await closed;
  });

  it("a lost GPU context reads held clients at once: their requests get the worker's 503 before it leaves", async () => {
    const { engine, port, fill } = await fullServer(5000, 10);
    const first = fill();
    const client = await RawClient.open(port);
    expect((await client.post())?.status).toBe(429);
    const whileHeld = client.post();
    await new Promise((r) => setTimeout(r, 50));
    engine.loseContext();
    const answer = await whileHeld;
    expect(answer?.status).toBe(503);
    expect(answer!.body).toContain('"code":"gpu_lost"');
    expect(answer!.ms).toBeLessThan(2000);
    expect((await first).statusCode).toBe(503);
  });

  it('validates holdRefusedMs like the other limits', () => {
    expect(() => createServer({ limits: { holdRefusedMs: -1 } })).toThrow(/limits\.holdRefusedMs must be a finite number of ms >= 0 \(0 turns it off\), got -1/);
  });
});
