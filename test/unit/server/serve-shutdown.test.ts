/**
 * `tscuda serve` stopping, with the real CLI and no GPU: SIGHUP stops like SIGTERM and leaves no
 * worker behind; SIGTERM under keep-alive load resets no request already sent on an open
 * connection (each gets its answer, or `503 shutting_down` + `Connection: close`); the drain is
 * bounded (`--drain`) even against a client that never finishes its body, and the exit code says
 * whether it completed (0) or was cut (3); a second SIGTERM cuts the drain at once (exit 3).
 */
import { Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, call, startServe, workerPids, type ServeProcess } from './serve-process.js';

const running: ServeProcess[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of running.splice(0)) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  for (const s of sockets.splice(0)) s.destroy();
});

async function serve(args: string[]): Promise<ServeProcess & { base: string; port: number }> {
  const s = await startServe(args);
  running.push(s);
  return s;
}

/** Waits for the process's end, at most `ms`; resolves with its exit code and how long it took. */
async function endWithin(s: ServeProcess, ms: number): Promise<{ exitCode: number | undefined; ms: number }> {
  const t0 = performance.now();
  const timer = setTimeout(() => s.child.kill('SIGKILL'), ms);
  const result = await s.child;
  clearTimeout(timer);
  return { exitCode: result.exitCode, ms: performance.now() - t0 };
}

/** A POST whose body never finishes: headers declare 1000 bytes, 10 are sent. Resolves once it is written. */
async function neverFinishingBody(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(
    'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"signal":',
  );
  await new Promise((r) => setTimeout(r, 300));
  return socket;
}

describe('tscuda serve stopping', () => {
  it('SIGHUP stops like SIGTERM: drain, exit 0, no worker left behind', async () => {
    const s = await serve(['--workers', '2']);
    const pids = await workerPids(s.base, 2);
    expect(pids).toHaveLength(2);
    s.child.kill('SIGHUP');
    const end = await endWithin(s, 30_000);
    expect(end.exitCode, s.stderr()).toBe(0);
    for (const pid of pids) expect(alive(pid), `worker ${pid}`).toBe(false);
  }, 90_000);

  it('SIGTERM under keep-alive load: no request already sent is reset; new ones get 503 shutting_down + Connection: close', async () => {
    const s = await serve(['--workers', '2']);
    const clients = 24;
    const agents = Array.from({ length: clients }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    let signalled = false;
    const outcomes: {
      status?: number;
      code?: string;
      connection?: string;
      error?: string;
      reused: boolean;
      afterSignal: boolean;
    }[] = [];
    // One request whose body arrives slowly, accepted before the signal: it must get its answer.
    const slow = new Promise<string>((resolve) => {
      const socket = connect(s.port, '127.0.0.1');
      sockets.push(socket);
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', () => undefined);
      const body = JSON.stringify({ signal: [1, 2, 3, 4, 5, 6, 7, 8] });
      socket.write(
        `POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n`,
      );
      let i = 0;
      const drip = setInterval(() => {
        socket.write(body[i++]!);
        if (i === body.length) clearInterval(drip);
      }, 1500 / body.length);
    });
    const loop = async (agent: Agent): Promise<void> => {
      for (;;) {
        const afterSignal = signalled;
        const r = await call(s.base, '/v1/stft', {
          method: 'POST',
          body: '{"signal":[1,2,3,4,5,6,7,8]}',
          agent,
          timeoutMs: 15_000,
        });
        if ('error' in r) {
          outcomes.push({ error: r.error, reused: r.reused, afterSignal });
          if (afterSignal && !r.reused) return; // the server no longer accepts connections: this client is done
          continue;
        }
        const code = r.status === 503 ? (JSON.parse(r.text) as { error: { code: string } }).error.code : undefined;
        outcomes.push({
          status: r.status,
          ...(code === undefined ? {} : { code }),
          connection: String(r.headers.connection),
          reused: r.reused,
          afterSignal,
        });
      }
    };
    const loops = agents.map((a) => loop(a));
    await new Promise((r) => setTimeout(r, 700));
    signalled = true;
    s.child.kill('SIGTERM');
    const end = await endWithin(s, 30_000);
    await Promise.all(loops);
    for (const a of agents) a.destroy();
    expect(end.exitCode, s.stderr()).toBe(0);
    // Every request sent on a connection the server had accepted got an HTTP answer.
    const resetOnOpen = outcomes.filter((o) => o.error !== undefined && o.reused);
    expect(resetOnOpen, JSON.stringify(resetOnOpen)).toEqual([]);
    const answered = outcomes.filter((o) => o.status !== undefined);
    expect(answered.length).toBeGreaterThan(clients);
    // 429 overloaded: a loaded runner's load shedding, an answer like the others.
    for (const o of answered) expect([200, 429, 503]).toContain(o.status);
    const refused = answered.filter((o) => o.code === 'shutting_down');
    for (const o of refused) expect(o.connection).toBe('close');
    // The slow upload accepted before the signal was answered (no GPU here: 503 gpu_unavailable), not cut.
    expect(await slow).toMatch(/^HTTP\/1\.1 503[\s\S]*gpu_unavailable/);
  }, 90_000);

  it('SIGTERM with new connections arriving (cluster mode): every request sent before the signal is answered, none reset', async () => {
    const s = await serve(['--workers', '2']);
    let signalled = false;
    const outcomes: { status?: number; code?: string; error?: string; beforeSignal: boolean }[] = [];
    const send = async (): Promise<boolean> => {
      const beforeSignal = !signalled;
      // agent: false: a new connection for each request, as clients behind a load balancer open them.
      const r = await call(s.base, '/v1/stft', {
        method: 'POST',
        body: '{"signal":[1,2,3,4,5,6,7,8]}',
        agent: false,
        timeoutMs: 15_000,
      });
      if ('error' in r) outcomes.push({ error: r.error, beforeSignal });
      else
        outcomes.push({
          status: r.status,
          code: (JSON.parse(r.text) as { error?: { code: string } }).error?.code ?? '',
          beforeSignal,
        });
      return 'error' in r || r.status === 503;
    };
    const loop = async (): Promise<void> => {
      // Until the server refuses: after the signal, a 503 shutting_down or a refused connection ends it.
      while (!(await send()) || !signalled);
    };
    const loops = Array.from({ length: 16 }, () => loop());
    await new Promise((r) => setTimeout(r, 700));
    // A burst of 200 connections opened just before the signal: most still wait in the accept queue when it comes.
    const burst = Array.from({ length: 200 }, () => send());
    signalled = true;
    s.child.kill('SIGTERM');
    const end = await endWithin(s, 30_000);
    await Promise.all([...loops, ...burst]);
    expect(end.exitCode, s.stderr()).toBe(0);
    const before = outcomes.filter((o) => o.beforeSignal);
    expect(before.length).toBeGreaterThan(200);
    // Before: 13-17 resets per stop, most of them of requests sent before the signal.
    const unanswered = before.filter((o) => o.error !== undefined);
    expect(unanswered, JSON.stringify(unanswered.slice(0, 5))).toEqual([]);
    // No GPU here: answered 503, gpu_unavailable (accepted before the stop) or shutting_down (after it).
    for (const o of before)
      expect([o.status, o.code]).toSatisfy(
        ([status, code]: [number, string]) => status === 503 && ['gpu_unavailable', 'shutting_down'].includes(code),
      );
  }, 90_000);

  for (const workers of [0, 1]) {
    it(`--workers ${workers}: a client that never finishes its body cannot hold the stop past --drain; exit 3 says the drain was cut`, async () => {
      const s = await serve(['--workers', String(workers), '--drain', '1500']);
      const socket = await neverFinishingBody(s.port);
      s.child.kill('SIGTERM');
      const end = await endWithin(s, 20_000);
      expect(end.exitCode, s.stderr()).toBe(3);
      // The drain's bound, the server's close grace (2 s) and a loaded machine's slack; the old stop waited 30-59 s.
      expect(end.ms).toBeLessThan(10_000);
      expect(s.stderr()).toMatch(/drain cut: .*exit 3/);
      expect(socket.destroyed || socket.readableEnded).toBe(true);
    }, 60_000);
  }

  it('a second SIGTERM during the drain cuts it at once: exit 3', async () => {
    const s = await serve(['--workers', '1', '--drain', '60000']);
    await neverFinishingBody(s.port);
    s.child.kill('SIGTERM');
    await s.waitFor(/SIGTERM: stopping the workers gracefully/, 10_000);
    s.child.kill('SIGTERM');
    const end = await endWithin(s, 20_000);
    expect(end.exitCode, s.stderr()).toBe(3);
    expect(end.ms).toBeLessThan(10_000);
    expect(s.stderr()).toMatch(/SIGTERM again: cutting the drain/);
  }, 60_000);
});
