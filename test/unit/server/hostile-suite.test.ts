/**
 * The hostile-input suite: over 500 hostile requests against one server over the fake engine (no
 * GPU): bad parameters in every place a request carries them, prototype keys, huge and flooding
 * bodies, slow bodies, broken framing. It asserts 0 crashes (no uncaught error, the server still
 * healthy), 0 requests unanswered past their bound, 0 5xx for bad input, and bounded memory.
 * `TSCUDA_HOSTILE_SUMMARY=<path>` (or `=1` for bench/results/hostile-summary.json) writes what
 * it saw as JSON, for the docs to quote. Loopback only.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TscudaServer } from '../../../src/server/index.js';
import { FakeEngine, fakeBatcher } from './fake-engine.js';
import { badParameterCases, prototypeCases, type InjectCase } from './hostile-cases.js';
import { MiB, connect, firstResponse, head, listen, peakGrowth, serverFactory, until } from './hostile-client.js';

/** Every request must be answered (or its connection closed) within this, ms: the body timeout below and slack for a loaded runner. */
const ANSWER_BOUND_MS = 5000;
/** The body and headers timeouts of the server under test, ms: slow bodies and headers get their 408 after it. */
const BODY_TIMEOUT_MS = 400;

interface Outcome {
  category: string;
  name: string;
  /** HTTP status, or 0 when the connection closed without an answer (a refusal at the socket). */
  status: number;
  ms: number;
  /** No answer and no close within ANSWER_BOUND_MS. */
  unanswered: boolean;
  field?: string | undefined;
}

const servers = serverFactory();
let server: TscudaServer;
let port: number;
const outcomes: Outcome[] = [];
const uncaught: unknown[] = [];
const onUncaught = (error: unknown): void => void uncaught.push(error);
let memory = { heapBytes: 0, bufferBytes: 0 };

beforeAll(async () => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  const identity = (v: Float32Array): Float32Array => v;
  const lerp = (item: { a: ArrayLike<number>; b: ArrayLike<number>; t: number }): Float32Array =>
    Float32Array.from(item.a, (a, i) => a + item.t * (item.b[i]! - a));
  server = servers.make({
    engine: new FakeEngine(),
    batchers: { gradient: () => fakeBatcher(identity), lerp: () => fakeBatcher(lerp) },
    // Load shedding off: every request reaches the checks under test (a 429 would hide them).
    limits: {
      bodyLimitBytes: 8 * MiB,
      jsonBodyLimitBytes: 4 * MiB,
      bodyTimeoutMs: BODY_TIMEOUT_MS,
      headersTimeoutMs: BODY_TIMEOUT_MS,
      maxEventLoopDelayMs: 0,
      maxTurnMs: 0,
    },
  });
  port = await listen(server);
});

afterAll(async () => {
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
  await servers.closeAll();
  writeSummary();
});

/** Sends an inject case, bounded by ANSWER_BOUND_MS. */
async function injectCase(c: InjectCase): Promise<Outcome> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ANSWER_BOUND_MS)));
  const r = await Promise.race([
    server.app.inject({
      method: c.method,
      url: c.url,
      headers: c.headers,
      ...(c.payload === undefined ? {} : { payload: c.payload }),
    }),
    bound,
  ]);
  clearTimeout(timer);
  const ms = performance.now() - t0;
  if (r === undefined) return { category: c.category, name: c.name, status: 0, ms, unanswered: true };
  let field: string | undefined;
  try {
    field = (r.json() as { error?: { field?: string } }).error?.field;
  } catch {
    field = undefined;
  }
  return { category: c.category, name: c.name, status: r.statusCode, ms, unanswered: false, field };
}

/** Sends raw bytes on a connection of its own (`then`: more, written once connected); resolves with the first answer, or status 0 if the server closed first. */
async function rawCase(
  category: string,
  name: string,
  first: string | Buffer,
  then?: (write: (data: string | Buffer) => Promise<void>, answered: () => boolean) => Promise<void>,
): Promise<Outcome> {
  const t0 = performance.now();
  const c = await connect(port, first, { allowHalfOpen: true });
  let closed = false;
  void c.closed.then(() => (closed = true));
  const answered = (): boolean => firstResponse(c.received()) !== undefined || closed;
  const writing = then?.(c.write, answered);
  while (!answered() && performance.now() - t0 < ANSWER_BOUND_MS) await new Promise((r) => setTimeout(r, 5));
  const ms = performance.now() - t0;
  const response = firstResponse(c.received());
  c.socket.destroy();
  await writing?.catch(() => undefined);
  const field = (response?.body as { error?: { field?: string } } | undefined)?.error?.field;
  return { category, name, status: response?.status ?? 0, ms, unanswered: !answered(), field };
}

/** Each case of `cases` through `send`, `concurrency` at a time; the outcomes recorded. */
async function runAll<T>(
  cases: readonly T[],
  concurrency: number,
  send: (c: T) => Promise<Outcome>,
): Promise<Outcome[]> {
  const done: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < cases.length) done.push(await send(cases[next++]!));
    }),
  );
  outcomes.push(...done);
  return done;
}

/** Chunked framing of `data`. */
const chunk = (data: Buffer | string): Buffer =>
  Buffer.concat([Buffer.from(`${Buffer.byteLength(data).toString(16)}\r\n`), Buffer.from(data), Buffer.from('\r\n')]);

/** A JSON flood of about `bytes`: `prefix`, `unit` repeated, `suffix`. */
const flood = (prefix: string, unit: string, suffix: string, bytes: number): Buffer =>
  Buffer.concat([Buffer.from(prefix), Buffer.alloc(bytes - prefix.length - suffix.length, unit), Buffer.from(suffix)]);

/** Huge, flooding and slow bodies and broken framing, over sockets. */
function socketCases(): [name: string, run: () => Promise<Outcome>][] {
  const octet = { 'content-type': 'application/octet-stream' };
  const json = { 'content-type': 'application/json' };
  const cases: [string, () => Promise<Outcome>][] = [];
  const add = (category: string, name: string, first: string | Buffer, then?: Parameters<typeof rawCase>[3]): void =>
    void cases.push([name, () => rawCase(category, name, first, then)]);
  for (const path of ['/v1/stft', '/v1/jobs', '/v1/batch/gradient']) {
    add(
      'huge body',
      `${path}: content-length 2^40 announced`,
      head('POST', path, { ...json, 'content-length': 2 ** 40 }),
    );
    add(
      'huge body',
      `${path}: content-length 9 PB announced`,
      head('POST', path, { ...octet, 'content-length': '9999999999999999' }),
    );
    add(
      'huge body',
      `${path}: chunked binary past the limit`,
      head('POST', path, { ...octet, 'transfer-encoding': 'chunked' }),
      async (write, answered) => {
        const piece = chunk(Buffer.alloc(256 * 1024));
        for (let i = 0; i < 64 && !answered(); i++) await write(piece);
      },
    );
    for (const [shape, prefix, unit] of [
      ['objects', '{"signal":[', '{},'],
      ['keys', '{"signal":[1,2,3,4,5,6,7,8],"stageParams":{', '"k":0,'],
      ['pairs', '{"signal":[1,2,3,4,5,6,7,8],"bands":[', '[1,2],'],
      ['one-sample rows', '{"signal":[', '[0],'],
      ['nesting', '{"signal":', '['],
    ] as const) {
      const body = flood(prefix, unit, '[0]]}', 3 * MiB);
      add(
        'huge body',
        `${path}: 3 MiB JSON flood of ${shape}`,
        head('POST', path, { ...json, 'content-length': body.length }),
        async (write, answered) => {
          for (let at = 0; at < body.length && !answered(); at += 256 * 1024)
            await write(body.subarray(at, at + 256 * 1024));
        },
      );
    }
    add(
      'huge body',
      `${path}: JSON past its limit, chunked`,
      head('POST', path, { ...json, 'transfer-encoding': 'chunked' }),
      async (write, answered) => {
        const piece = chunk(Buffer.alloc(256 * 1024, '1,'));
        await write(chunk('{"signal":['));
        for (let i = 0; i < 24 && !answered(); i++) await write(piece);
      },
    );
  }
  for (let i = 0; i < 12; i++) {
    const path = ['/v1/stft', '/v1/jobs', '/v1/batch/gradient'][i % 3]!;
    const type = i % 2 === 0 ? octet : json;
    add(
      'slow body',
      `${path}: a body trickled a byte at a time (${i})`,
      head('POST', path, { ...type, 'content-length': 1000 }),
      async (write, answered) => {
        while (!answered()) {
          await write('1');
          await new Promise((r) => setTimeout(r, 50));
        }
      },
    );
    add(
      'slow body',
      `${path}: a body announced and never sent (${i})`,
      head('POST', path, { ...type, 'content-length': 64 }) + '[1,',
    );
  }
  for (let i = 0; i < 6; i++)
    add(
      'slow headers',
      `headers trickled a line at a time (${i})`,
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\n',
      async (write, answered) => {
        for (let line = 0; !answered(); line++) {
          await write(`x-line-${line}: ${'a'.repeat(10)}\r\n`);
          await new Promise((r) => setTimeout(r, 50));
        }
      },
    );
  const framing: [string, string][] = [
    [
      'content-length and transfer-encoding',
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    [
      'two content-lengths',
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n{}',
    ],
    [
      'content-length -1',
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: -1\r\n\r\n',
    ],
    [
      'a bad chunk size',
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    ],
    ['an HTTP/0.9 request line', 'GET /v2/health/live\r\n\r\n'],
    ['HTTP/2.0 in a text request line', 'GET /v2/health/live HTTP/2.0\r\nhost: x\r\n\r\n'],
    ['no Host on HTTP/1.1', 'GET /v2/health/live HTTP/1.1\r\n\r\n'],
    ['a method that is not one', 'FOO@ / HTTP/1.1\r\nhost: x\r\n\r\n'],
    ['headers past 16 KiB', `GET /v2/health/live HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['a NUL in the path', 'GET /v1/jobs/\u0000 HTTP/1.1\r\nhost: x\r\n\r\n'],
    [
      'gzip content-encoding',
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: 2\r\n\r\n{}',
    ],
    ['text/plain body', 'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\n{}'],
    ['a body on GET', 'GET /v1/info HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\n\r\nabcd'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n'],
    [
      'Expect: 999-nothing',
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nexpect: 999-nothing\r\ncontent-length: 2\r\n\r\n{}',
    ],
    ['a percent-encoding that is not', 'GET /v1/jobs/%zz HTTP/1.1\r\nhost: x\r\n\r\n'],
    ['an id of 10,000 characters', `GET /v1/jobs/${'a'.repeat(10_000)} HTTP/1.1\r\nhost: x\r\n\r\n`],
  ];
  for (const [name, text] of framing) add('broken framing', name, text);
  return cases;
}

describe('the hostile-input suite', () => {
  it('over 500 hostile requests: 0 crashes, 0 unanswered past their bound, 0 5xx for bad input, memory bounded', async () => {
    const injected = [...badParameterCases(), ...prototypeCases()];
    const sockets = socketCases();
    const { heapBytes, bufferBytes } = await peakGrowth(async () => {
      await runAll(injected, 16, injectCase);
      await runAll(sockets, 8, ([, run]) => run());
    });
    memory = { heapBytes, bufferBytes };
    expect(outcomes.length).toBeGreaterThanOrEqual(500);
    expect(uncaught).toEqual([]);
    expect(outcomes.filter((o) => o.unanswered).map((o) => o.name)).toEqual([]);
    expect(outcomes.filter((o) => o.status >= 500).map((o) => `${o.status} ${o.name}`)).toEqual([]);
    // Bad input gets a 4xx, never a success; a connection may also be closed at once (slow-loris bounds, framing Node refuses).
    expect(
      outcomes.filter((o) => o.status !== 0 && (o.status < 400 || o.status >= 500)).map((o) => `${o.status} ${o.name}`),
    ).toEqual([]);
    // A bad parameter's 400 names the field at fault.
    const unnamed = outcomes
      .filter((o) => o.category === 'bad parameter' && o.field === undefined)
      .map((o) => `${o.status} ${o.name}`);
    expect(unnamed).toEqual([]);
    // The bodies in flight at once (8 at most, each refused by its limit or its scan) and their parse state: far under what they announced.
    expect(heapBytes).toBeLessThan(256 * MiB);
    expect(bufferBytes).toBeLessThan(256 * MiB);
    // Still healthy, nothing left in progress, nothing polluted.
    expect((await server.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
    await until(() => server.pending === 0, 'no request left in progress', 2000);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  }, 60_000);
});

/** Writes the summary when TSCUDA_HOSTILE_SUMMARY asks for it. */
function writeSummary(): void {
  const target = process.env.TSCUDA_HOSTILE_SUMMARY;
  if (target === undefined || target === '' || outcomes.length === 0) return;
  const path =
    target === '1' ? join(import.meta.dirname, '..', '..', '..', 'bench', 'results', 'hostile-summary.json') : target;
  const byCategory: Record<string, { requests: number; statuses: Record<string, number>; maxMs: number }> = {};
  for (const o of outcomes) {
    const c = (byCategory[o.category] ??= { requests: 0, statuses: {}, maxMs: 0 });
    c.requests++;
    const key = o.status === 0 ? 'closed' : String(o.status);
    c.statuses[key] = (c.statuses[key] ?? 0) + 1;
    c.maxMs = Math.max(c.maxMs, Math.round(o.ms));
  }
  const summary = {
    suite: 'test/unit/server/hostile-suite.test.ts',
    node: process.version,
    requests: outcomes.length,
    crashes: uncaught.length,
    unanswered: outcomes.filter((o) => o.unanswered).length,
    fiveHundreds: outcomes.filter((o) => o.status >= 500).length,
    namedField: outcomes.filter((o) => o.field !== undefined).length,
    answerBoundMs: ANSWER_BOUND_MS,
    peakHeapGrowthMiB: Math.round(memory.heapBytes / MiB),
    peakBufferGrowthMiB: Math.round(memory.bufferBytes / MiB),
    byCategory,
  };
  writeFileSync(path, `${JSON.stringify(summary, null, 2)}\n`);
}
