/**
 * Fuzz suite, requests (no GPU: the fake engine, or none): numbers that cost quadratic parsing,
 * bad input that must be refused before any GPU, refusals of Node and fastify in the documented
 * error shape, metrics that count what arrived, and what the server exposes. Each case asserts its
 * answer and how long it took.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeEngine, fakeBatcher } from './fake-engine.js';
import { connect, errorOf, head, listen, response, serverFactory, until } from './hostile-client.js';

const servers = serverFactory();
afterEach(() => servers.closeAll());

const binary = Buffer.from(new Float32Array(Array.from({ length: 64 }, (_, i) => Math.sin(i))).buffer);
const octet = { 'content-type': 'application/octet-stream' };

describe('numbers in query and header values: bounded and linear', () => {
  const digits = '1'.repeat(15_900) + 'x';
  const cases: [string, { url: string; headers?: Record<string, string> }, string][] = [
    ['?fs=<15,900 digits>x', { url: `/v1/stft?fs=${digits}` }, 'fs'],
    ['x-tscuda-fs: <15,900 digits>x', { url: '/v1/stft', headers: { 'x-tscuda-fs': digits } }, 'fs'],
    ['?window=kaiser,<15,900 digits>x', { url: `/v1/stft?window=kaiser,${digits}` }, 'window[1]'],
    ['?bands=1:<15,900 digits>x', { url: `/v1/cycles?bands=1:${digits}` }, 'bands[0][1]'],
  ];
  for (const [name, request, field] of cases) {
    it(`${name} is refused in well under a millisecond of parsing`, async () => {
      const s = servers.make({ engine: new FakeEngine() });
      await s.app.inject({
        method: 'POST',
        url: request.url,
        headers: { ...octet, ...request.headers },
        payload: binary,
      }); // warm up
      const t0 = performance.now();
      const rounds = 20;
      for (let i = 0; i < rounds; i++) {
        const r = await s.app.inject({
          method: 'POST',
          url: request.url,
          headers: { ...octet, ...request.headers },
          payload: binary,
        });
        expect(r.statusCode).toBe(400);
        const error = errorOf(r.json());
        expect(error.field).toBe(field);
        expect(error.message.length).toBeLessThan(300);
      }
      // Before: 436 ms per request (a backtracking regular expression over the digits); linear
      // parsing takes a few ms, under 40 with another test file busy on the other core.
      expect((performance.now() - t0) / rounds).toBeLessThan(100);
    });
  }
});

describe('bad input gets its 4xx before anything needs a GPU', () => {
  const cases: [string, { url: string; headers?: Record<string, string>; payload: unknown }, string][] = [
    [
      'window "bogus"',
      { url: '/v1/stft', payload: { signal: Array.from({ length: 64 }, (_, i) => i % 7), window: 'bogus' } },
      'window',
    ],
    [
      'nperseg 4, noverlap 0 on a short signal (NOLA)',
      { url: '/v1/stft', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], nperseg: 4, noverlap: 0 } },
      'noverlap',
    ],
    [
      'timeout 1e12 on a batch endpoint',
      { url: '/v1/batch/gradient', payload: { items: [[1, 2]], timeout: 1e12 } },
      'timeout',
    ],
    [
      'a batch value f32 cannot hold (1e39)',
      { url: '/v1/batch/gradient', payload: { items: [[1e39, 1, 2]] } },
      'items[0][0]',
    ],
    [
      'a lerp vector value f32 cannot hold (-1e39)',
      { url: '/v1/batch/lerp', payload: { items: [{ a: [-1e39, 0], b: [1, 1], t: 0.5 }] } },
      'items[0].a[0]',
    ],
    [
      'x-tscuda-window: bogus',
      { url: '/v1/stft', headers: { ...octet, 'x-tscuda-window': 'bogus' }, payload: binary },
      'window',
    ],
    [
      'fs both in the query and as x-tscuda-fs',
      { url: '/v1/stft?fs=3', headers: { ...octet, 'x-tscuda-fs': '2000' }, payload: binary },
      'fs',
    ],
    ['?__proto__=1', { url: '/v1/stft?__proto__=1', headers: octet, payload: binary }, '__proto__'],
    ['a series too short for the engine', { url: '/v1/stft', payload: { signal: [1, 2, 3] } }, 'signal'],
  ];
  for (const [name, request, field] of cases) {
    it(`${name}: 400 naming ${field}, with no engine at all`, async () => {
      const s = servers.make({ engine: null, unavailableReason: 'no CUDA driver' });
      const r = await s.app.inject({
        method: 'POST',
        url: request.url,
        headers: request.headers ?? {},
        payload: request.payload as string,
      });
      expect(r.statusCode).toBe(400);
      expect(errorOf(r.json()).field).toBe(field);
    });
  }

  it('a 10 MB flag name in a JSON body: 400 naming flags[0], the value quoted, not a 500', async () => {
    const s = servers.make({ engine: new FakeEngine(), limits: { jsonBodyLimitBytes: 16 * 2 ** 20 } });
    const r = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], flags: ['x'.repeat(10_000_000)] },
    });
    expect(r.statusCode).toBe(400);
    expect(errorOf(r.json())).toMatchObject({ field: 'flags[0]', message: expect.stringMatching(/characters\)/) });
    expect(r.body.length).toBeLessThan(1500);
  });

  it('good input without a GPU is still 503', async () => {
    const s = servers.make({ engine: null });
    const r = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: Array.from({ length: 64 }, (_, i) => i % 7) },
    });
    expect(r.statusCode).toBe(503);
  });
});

describe("Node's and fastify's refusals in the documented error shape", () => {
  const raw: [string, string, number, string | undefined][] = [
    [
      'a bad Content-Length',
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: abc\r\n\r\n',
      400,
      'content-length',
    ],
    [
      'bad chunked framing',
      'POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      400,
      'transfer-encoding',
    ],
    [
      'headers over the limit',
      `GET /v1/info HTTP/1.1\r\nhost: x\r\nx-long: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'headers',
    ],
    ['a bad URL encoding in a path parameter', 'GET /v1/jobs/%zz HTTP/1.1\r\nhost: x\r\n\r\n', 400, 'url'],
    ['an over-long job id', `GET /v1/jobs/${'a'.repeat(500)} HTTP/1.1\r\nhost: x\r\n\r\n`, 414, 'url'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n', 405, 'method'],
    ['an HTTP/1.1 request without Host', 'GET /v1/info HTTP/1.1\r\n\r\n', 400, 'host'],
  ];
  for (const [name, request, status, field] of raw) {
    it(`${name}: ${status} as { error: { code, message, retryable } }`, async () => {
      const s = servers.make({ engine: new FakeEngine() });
      const port = await listen(s);
      const c = await connect(port, request);
      const r = await response(c, 3000);
      expect(r.status).toBe(status);
      const error = errorOf(r.body);
      if (field !== undefined) expect(error.field).toBe(field);
      expect(error.message.length).toBeLessThan(300);
      c.socket.destroy();
    });
  }

  it('a parameter header given twice is 400 naming it (Node would join the two values)', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const port = await listen(s);
    const head = `POST /v1/stft HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\nx-tscuda-fs: 2\r\nx-tscuda-fs: 3\r\ncontent-length: ${binary.length}\r\n\r\n`;
    const c = await connect(port, Buffer.concat([Buffer.from(head, 'latin1'), binary]));
    const r = await response(c, 3000);
    c.socket.destroy();
    expect(r.status).toBe(400);
    expect(errorOf(r.body)).toMatchObject({ field: 'x-tscuda-fs', message: 'x-tscuda-fs: is given more than once' });
  });

  it('a wrong method on a known path is 405 with Allow', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    for (const [method, url, allow] of [
      ['GET', '/v1/stft', 'POST'],
      ['DELETE', '/v1/batch/lerp', 'POST'],
      ['POST', '/v1/jobs/abc', 'DELETE, GET'],
      ['PUT', '/v1/info', 'GET'],
    ] as const) {
      const r = await s.app.inject({ method, url });
      expect(r.statusCode, `${method} ${url}`).toBe(405);
      expect(r.headers.allow).toBe(allow);
      expect(errorOf(r.json()).code).toBe('method_not_allowed');
    }
    expect((await s.app.inject({ method: 'GET', url: '/v1/nothing' })).statusCode).toBe(404);
  });

  it('a batch request that is not JSON is 415', async () => {
    const s = servers.make({
      engine: new FakeEngine(),
      batchers: { gradient: () => fakeBatcher<ArrayLike<number>>((v) => Float32Array.from(v)) },
    });
    for (const type of ['application/octet-stream', 'text/plain']) {
      const r = await s.app.inject({
        method: 'POST',
        url: '/v1/batch/gradient',
        headers: { 'content-type': type },
        payload: '{"items":[[1,2]]}',
      });
      expect(r.statusCode, type).toBe(415);
      expect(errorOf(r.json()).field).toBe('content-type');
    }
  });

  it('long bad values are cut in messages (a 15 KB label, name, window, header)', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const long = 'L'.repeat(15_000);
    const requests = [
      { url: '/v1/stft', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], label: long } },
      { url: '/v1/stft', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], [long]: 1 } },
      { url: '/v1/stft', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], window: long } },
      { url: '/v1/stft', headers: { ...octet, 'x-tscuda-window': long }, payload: binary },
      { url: '/v1/stft', headers: { ...octet, 'x-tscuda-label': long }, payload: binary },
      { url: `/v1/stft?${long}=1`, headers: octet, payload: binary },
    ];
    for (const r of requests) {
      const res = await s.app.inject({
        method: 'POST',
        url: r.url,
        headers: r.headers ?? {},
        payload: r.payload as unknown as string,
      });
      expect(res.statusCode).toBe(400);
      expect(res.body.length, res.body.slice(0, 200)).toBeLessThan(600);
    }
  });

  it('an unexpected error in a handler (a bug) is a 500 naming a correlation id, logged with the error; never a 400', async () => {
    const logged: string[] = [];
    const logger = { level: 'error', stream: { write: (line: string) => logged.push(line) } };
    const engine = new FakeEngine();
    engine.submit = () => {
      throw new TypeError("Cannot read properties of undefined (reading 'secret internals')");
    };
    const s = servers.make({ engine, logger: logger as never });
    const r = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8] } });
    expect(r.statusCode).toBe(500);
    const error = errorOf(r.json());
    expect(error.code).toBe('internal');
    expect(error.message).not.toContain('secret');
    const id = /correlation id ([0-9a-f-]{36})/.exec(error.message)?.[1];
    expect(id).toBeDefined();
    expect(logged.some((line) => line.includes(id!) && line.includes('secret internals'))).toBe(true);
  });

  it('without a logger, the correlation id and the error go to stderr', async () => {
    const engine = new FakeEngine();
    engine.submit = () => {
      throw new RangeError('Invalid typed array length: -1');
    };
    const s = servers.make({ engine });
    const lines: string[] = [];
    const spy = vi
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    try {
      const r = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8] } });
      expect(r.statusCode).toBe(500);
      const id = /correlation id ([0-9a-f-]{36})/.exec(errorOf(r.json()).message)?.[1];
      expect(lines.some((l) => l.includes(id!) && l.includes('Invalid typed array length'))).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('metrics count what arrived', () => {
  it('request bytes are the bytes received, not the length announced; a request cut off is counted as aborted', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const port = await listen(s);
    const c = await connect(
      port,
      head('POST', '/v1/stft', { ...octet, 'content-length': 1_000_000 }) + 'x'.repeat(1000),
    );
    await until(() => s.pending === 1, 'the admitted request');
    await new Promise((r) => setTimeout(r, 50));
    c.socket.destroy();
    await until(() => s.pending === 0, 'its place freed');
    const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('tscuda_request_bytes_total{endpoint="/v1/stft"} 1000\n');
    expect(text).toContain('tscuda_request_aborted_total{endpoint="/v1/stft"} 1\n');
  });

  it('the exposition passes the lint rules promtool checks (suffixes by type, no quantile label outside summaries)', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8] } });
    const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    expect(types.size).toBeGreaterThan(10);
    for (const [name, type] of types) {
      if (type === 'counter') expect(name, name).toMatch(/_total$/);
      else expect(name, name).not.toMatch(/_total$|_count$|_sum$|_bucket$/);
      if (type !== 'summary') expect(text, name).not.toMatch(new RegExp(`^${name}\\{[^}]*quantile=`, 'm'));
    }
  });
});

describe('exposure', () => {
  it('/v1/info shows process details only when asked to', async () => {
    const hidden = await servers.make({ engine: new FakeEngine() }).app.inject({ method: 'GET', url: '/v1/info' });
    for (const key of ['pid', 'node', 'rssBytes', 'heapUsedBytes', 'uptimeS'])
      expect(hidden.json()).not.toHaveProperty(key);
    const shown = await servers
      .make({ engine: new FakeEngine(), exposeProcessInfo: true })
      .app.inject({ method: 'GET', url: '/v1/info' });
    expect(shown.json()).toMatchObject({ pid: process.pid, node: process.versions.node });
  });

  it('job ids are unguessable: the routing prefix, then 128 random bits', async () => {
    const s = servers.make({ engine: new FakeEngine(), jobIdPrefix: 'w3-' });
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const r = await s.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        payload: { signal: [1, 2, 3, 4, 5, 6, 7, 8], flags: ['stft'] },
      });
      const id = r.json<{ id: string }>().id;
      expect(id).toMatch(/^w3-[A-Za-z0-9_-]{22}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(20);
    for (const guess of ['w3-1', 'w3-2', 'w3-20'])
      expect((await s.app.inject({ method: 'GET', url: `/v1/jobs/${guess}` })).statusCode).toBe(404);
  });
});
