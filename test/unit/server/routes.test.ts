import { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServer, parseFieldsHeader, type TscudaServer } from '../../../src/server/index.js';
import type { InterpolationInput } from '../../../src/server/batch.js';
import { FakeEngine, fakeBatcher } from './fake-engine.js';

const servers: TscudaServer[] = [];
function make(options: Parameters<typeof createServer>[0] = {}): TscudaServer {
  // These cases count engine submits, one per request, and release a manual engine at once: fusing is off here (fusion*.test.ts has it on).
  const s = createServer({ ...options, limits: { maxBatchDelayMs: 0, ...options.limits } });
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Polls `what` until it holds (a loaded CI machine can take far longer than a fixed sleep), failing after 10 s. */
async function waitFor(what: () => boolean, label: string): Promise<void> {
  const t0 = performance.now();
  while (!what()) {
    if (performance.now() - t0 > 10_000) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function signal(n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.sin(i * 0.3) + i * 0.01);
}

const lerp = (item: InterpolationInput): Float32Array =>
  Float32Array.from(item.a, (a, i) => a + item.t * (item.b[i]! - a));
const batchers = {
  gradient: () => fakeBatcher<ArrayLike<number>>((v) => Float32Array.from(v, (x) => 2 * x)),
  lerp: () => fakeBatcher(lerp),
  slerp: () => fakeBatcher(lerp),
};

describe('synchronous job routes', () => {
  it('POST /v1/stft with a JSON signal returns the engine result as JSON, with shapes', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const x = signal(64);
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: x, fs: 100, previewBins: 5 },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      filtered: number[];
      spectrum: number[];
      shapes: Record<string, number[]>;
      fs: number;
      batch: number;
      length: number;
    }>();
    expect(body.fs).toBe(100);
    expect(body.shapes.filtered).toEqual([1, 64]);
    expect(body.shapes.spectrum).toEqual([1, 5]);
    expect(body.filtered).toEqual(Array.from(Float32Array.from(x, (v) => Math.fround(v) * 2)));
    expect(engine.submitted[0]!.flags).toEqual(['stft']);
    expect(engine.submitted[0]!.timeoutMs).toBe(30_000);
  });

  it('a 2-D JSON signal sets the batch', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: [signal(16), signal(16), signal(16)] },
    });
    expect(res.statusCode).toBe(200);
    expect(engine.submitted[0]!.batch).toBe(3);
    expect(res.json<{ shapes: { filtered: number[] } }>().shapes.filtered).toEqual([3, 16]);
  });

  it('response bytes are counted once per answer, joined (small) or streamed part by part (over 1 MiB)', async () => {
    const s = make({ engine: new FakeEngine() });
    const sizes: number[] = [];
    for (const n of [2 * 32, 2 * 262_144]) {
      const res = await s.app.inject({
        method: 'POST',
        url: '/v1/stft?dtype=f32&batch=2&previewBins=4',
        headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
        payload: Buffer.from(Float32Array.from(signal(n)).buffer),
      });
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.byteLength).toBe(4 * (n + 2 * 4)); // filtered + a 2 x 4 preview
      sizes.push(res.rawPayload.byteLength);
    }
    const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain(`tscuda_response_bytes_total{endpoint="/v1/stft"} ${sizes[0]! + sizes[1]!}`);
  });

  it('binary f32 and f64 bodies with query or header parameters; a binary Accept gets fields and metadata headers', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const data = Float32Array.from(signal(2 * 32));
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=f32&batch=2&fs=1000&passBand=10,200',
      headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
      payload: Buffer.from(data.buffer),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    const fields = parseFieldsHeader(String(res.headers['x-tscuda-fields']));
    expect(fields.map((f) => f.name)).toEqual(['filtered', 'spectrum']);
    expect(fields[0]!.shape).toEqual([2, 32]);
    const raw = res.rawPayload;
    const filtered = new Float32Array(
      raw.buffer.slice(raw.byteOffset + fields[0]!.offset, raw.byteOffset + fields[0]!.offset + fields[0]!.bytes),
    );
    expect(Array.from(filtered)).toEqual(Array.from(data, (v) => v * 2));
    const meta = JSON.parse(String(res.headers['x-tscuda-result'])) as { batch: number; fs: number; timings: unknown };
    expect(meta).toMatchObject({ batch: 2, fs: 1000 });
    expect(engine.submitted[0]!.passBand).toEqual([10, 200]);

    const d64 = Float64Array.from(signal(20));
    const res64 = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream', 'x-tscuda-dtype': 'f64', 'x-tscuda-fs': '50' },
      payload: Buffer.from(d64.buffer),
    });
    expect(res64.statusCode).toBe(200);
    expect(engine.submitted[1]!.data).toBeInstanceOf(Float64Array);
    expect(engine.submitted[1]!.fs).toBe(50);
  });

  it('binary and JSON bodies both default to the engine precision (f64 here)', async () => {
    const engine = new FakeEngine({ precision: 'f64' });
    const s = make({ engine });
    const samples = Float64Array.from({ length: 8 }, () => Math.random() - 0.5);
    const bin = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from(samples.buffer),
    });
    expect(bin.statusCode).toBe(200);
    const json = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: Array.from(samples) } });
    expect(json.statusCode).toBe(200);
    for (const spec of engine.submitted) {
      expect(spec.data).toBeInstanceOf(Float64Array);
      expect(Array.from(spec.data)).toEqual(Array.from(samples));
    }
  });

  it('POST /v1/cycles returns band powers and dominant cycles (binary: dominant as f64[B,4])', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/cycles',
      payload: {
        signal: [signal(32), signal(32)],
        fs: 10,
        bands: [
          [0.5, 1],
          [1, 4],
        ],
      },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      bandPowers: number[];
      dominant: { frequency: number }[];
      shapes: Record<string, number[]>;
    }>();
    expect(body.shapes.bandPowers).toEqual([2, 2]);
    expect(body.dominant).toHaveLength(2);
    const bin = await s.app.inject({
      method: 'POST',
      url: '/v1/cycles',
      headers: { accept: 'application/octet-stream' },
      payload: { signal: [signal(32), signal(32)], fs: 10, bands: [[0.5, 1]] },
    });
    const fields = parseFieldsHeader(String(bin.headers['x-tscuda-fields']));
    expect(fields.find((f) => f.name === 'dominant')!.shape).toEqual([2, 4]);
    expect(bin.rawPayload.byteLength).toBe(fields.reduce((a, f) => a + f.bytes, 0));
  });

  it('POST /v1/wavelet needs freqs and returns power B x freqs x N', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const missing = await s.app.inject({
      method: 'POST',
      url: '/v1/wavelet',
      payload: { signal: signal(32), fs: 100 },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json<{ error: { field: string } }>().error.field).toBe('freqs');
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/wavelet',
      payload: { signal: signal(32), fs: 100, freqs: [5, 10, 20] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ shapes: Record<string, number[]> }>().shapes.waveletPower).toEqual([1, 3, 32]);
  });
});

describe('validation: 4xx naming the field', () => {
  const cases: [string, Record<string, unknown> | string, number, string][] = [
    ['NaN fs in the query', 'NaN', 400, 'fs'],
    [
      'band above fs/2',
      {
        signal: signal(32),
        fs: 10,
        bands: [
          [1, 2],
          [3, 6],
        ],
      },
      400,
      'bands[1][1]',
    ],
    ['band low >= high', { signal: signal(32), fs: 10, passBand: [3, 3] }, 400, 'passBand'],
    ['unknown flag', { signal: signal(32), flags: ['stft', 'fly'] }, 400, 'flags[1]'],
    ['unknown parameter', { signal: signal(32), windw: 'hann' }, 400, 'windw'],
    ['non-number sample', { signal: [1, 2, 'x', 4] }, 400, 'signal[2]'],
    [
      'ragged rows',
      {
        signal: [
          [1, 2, 3],
          [1, 2],
        ],
      },
      400,
      'signal[1]',
    ],
    ['batch does not divide', { signal: signal(10), batch: 3 }, 400, 'batch'],
    ['wrong type fs', { signal: signal(10), fs: 'fast' }, 400, 'fs'],
    ['previewBins too large', { signal: signal(10), previewBins: 7 }, 400, 'previewBins'],
    ['bad detrend', { signal: signal(10), detrend: 'cubic' }, 400, 'detrend'],
    ['missing signal', { fs: 10 }, 400, 'signal'],
    ['timeout above the limit', { signal: signal(10), timeout: 1e9 }, 400, 'timeout'],
  ];
  for (const [name, payload, status, field] of cases) {
    it(name, async () => {
      const s = make({ engine: new FakeEngine() });
      const res =
        typeof payload === 'string'
          ? await s.app.inject({
              method: 'POST',
              url: `/v1/stft?fs=${payload}`,
              headers: { 'content-type': 'application/octet-stream' },
              payload: Buffer.alloc(64),
            })
          : await s.app.inject({ method: 'POST', url: '/v1/stft', payload });
      expect(res.statusCode).toBe(status);
      const error = res.json<{ error: { field: string; code: string; message: string } }>().error;
      expect(error.field).toBe(field);
      expect(error.message).toContain(field.split('[')[0]);
    });
  }

  it('malformed JSON, wrong content type, a length not a multiple of the element size, unknown query parameters', async () => {
    const s = make({ engine: new FakeEngine() });
    const bad = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/json' },
      payload: '{"signal": [1, 2,',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { code: string; field: string } }>().error).toMatchObject({
      code: 'malformed_json',
      field: 'body',
    });
    const ct = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'image/png' },
      payload: Buffer.alloc(8),
    });
    expect(ct.statusCode).toBe(415);
    expect(ct.json<{ error: { field: string } }>().error.field).toBe('content-type');
    const odd = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=f32',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(10),
    });
    expect(odd.statusCode).toBe(400);
    expect(odd.json<{ error: { field: string; message: string } }>().error).toMatchObject({ field: 'body' });
    expect(odd.json<{ error: { message: string } }>().error.message).toContain('multiple of the f32 element size');
    const unknownQuery = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?speed=11',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(16),
    });
    expect(unknownQuery.statusCode).toBe(400);
    expect(unknownQuery.json<{ error: { field: string } }>().error.field).toBe('speed');
    const dtype = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=int8',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(16),
    });
    expect(dtype.json<{ error: { field: string } }>().error.field).toBe('dtype');
    const notAcceptable = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { accept: 'text/html' },
      payload: { signal: signal(8) },
    });
    expect(notAcceptable.statusCode).toBe(406);
  });

  it('an engine JobValidationError is a 400 with its field; a failed job is a 500', async () => {
    const s = make({ engine: new FakeEngine(), extraFlags: ['reject-me', 'explode'] });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(8), flags: ['reject-me'] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { field: string } }>().error.field).toBe('flags[0]');
    const boom = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: signal(8), flags: ['explode'] },
    });
    expect(boom.statusCode).toBe(500);
    expect(boom.json<{ error: { code: string } }>().error.code).toBe('job_failed');
  });

  it('413 for a body over the limit and for too many samples; 404 JSON for unknown routes', async () => {
    const s = make({ engine: new FakeEngine(), limits: { bodyLimitBytes: 1024, maxSamples: 100 } });
    const big = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(4096),
    });
    expect(big.statusCode).toBe(413);
    const many = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(404),
    });
    expect(many.statusCode).toBe(413);
    expect(many.json<{ error: { field: string } }>().error.field).toBe('signal');
    const nf = await s.app.inject({ method: 'GET', url: '/v1/nothing' });
    expect(nf.statusCode).toBe(404);
    expect(nf.json<{ error: { code: string } }>().error.code).toBe('not_found');
  });
});

describe('queue limits, timeouts, cancellation', () => {
  it('a full engine queue answers 429 with Retry-After; accepted requests still finish', async () => {
    const engine = new FakeEngine({ manual: true, maxQueued: 2 });
    const s = make({ engine, limits: { retryAfterS: 2 } });
    const first = [
      s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } }),
      s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } }),
    ];
    await waitFor(() => engine.submitted.length === 2, 'two queued jobs');
    const rejected = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(rejected.statusCode).toBe(429);
    expect(rejected.headers['retry-after']).toBe('2');
    expect(rejected.json<{ error: { retryable: boolean } }>().error.retryable).toBe(true);
    engine.release();
    for (const r of await Promise.all(first)) expect(r.statusCode).toBe(200);
  });

  it('maxPending bounds requests in progress with 429', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine, limits: { maxPending: 1 } });
    const first = s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    await waitFor(() => engine.submitted.length === 1, 'the first job');
    const second = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(second.statusCode).toBe(429);
    expect(second.json<{ error: { code: string; retryable: boolean } }>().error).toMatchObject({
      code: 'too_many_requests',
      retryable: true,
    });
    // Refused on its headers, before its body is read: even a body that would be a 400 gets the 429.
    const unread = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/json' },
      payload: '{"signal": [1, 2,',
    });
    expect(unread.statusCode).toBe(429);
    expect(unread.headers['retry-after']).toBe('1');
    // Health and metrics still answer while full.
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
    engine.release();
    expect((await first).statusCode).toBe(200);
    // Room again: the same malformed body now gets its 400.
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/v1/stft',
          headers: { 'content-type': 'application/json' },
          payload: '{"signal": [1, 2,',
        })
      ).statusCode,
    ).toBe(400);
  });

  it('onLoadSample sees every look at the loop; a throwing callback becomes a warning, not a crash', async () => {
    const samples: {
      lagMs: number;
      utilization: number;
      arrivals: number;
      share: number;
      admitted: number;
      refused: number;
      pending: number;
    }[] = [];
    const warnings: string[] = [];
    // Captured instead of printed: a passing npm test prints no warning.
    const emitWarning = vi
      .spyOn(process, 'emitWarning')
      .mockImplementation((w: string | Error) => void warnings.push(typeof w === 'string' ? w : w.message));
    try {
      const s = make({
        engine: new FakeEngine(),
        onLoadSample: (sample) => {
          samples.push(sample);
          throw new Error('tracing bug');
        },
      });
      await s.app.ready();
      expect((await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } })).statusCode).toBe(
        200,
      );
      await waitFor(
        () => samples.some((x) => x.arrivals === 1 && x.admitted === 1) && warnings.length > 0,
        'a look that saw the request, and the warning',
      );
      expect(samples.at(-1)).toMatchObject({ share: 1, refused: 0 });
      expect(warnings[0]).toMatch(/onLoadSample threw: tracing bug/);
      expect((await s.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
    } finally {
      emitWarning.mockRestore();
    }
  });

  it('maxPending counts requests from their headers: bodies still arriving hold a place, a full server answers 429 without reading the body, and a client that leaves mid-body frees its place', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine, limits: { maxPending: 2 } });
    const base = await s.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(base);
    const head = (bytes: number): string =>
      `POST /v1/stft HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\ncontent-length: ${bytes}\r\n\r\n`;
    /** A raw connection: sends `bytes`, collects what comes back. */
    const connect = async (
      bytes: string | Buffer,
    ): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> => {
      const socket = new Socket();
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((r) => socket.once('close', () => r()));
      await new Promise<void>((r) => socket.connect(Number(port), '127.0.0.1', r));
      socket.write(bytes);
      return { socket, received: () => received, closed };
    };
    const until = async (what: () => boolean, label: string): Promise<void> => {
      const t0 = performance.now();
      while (!what()) {
        if (performance.now() - t0 > 5000) throw new Error(`timed out waiting for ${label}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    // Two requests whose headers came and whose bodies have not: both hold a place.
    const slowA = await connect(head(4096) + 'x'.repeat(100));
    const slowB = await connect(head(4096));
    await until(() => s.pending === 2, 'two admitted requests');
    expect(engine.submitted).toHaveLength(0);
    // A third is refused on its headers: its body never comes, its 429 does.
    const third = await connect(head(65536));
    await until(() => third.received().includes('\r\n\r\n'), 'the 429');
    expect(third.received()).toMatch(/^HTTP\/1\.1 429 /);
    expect(third.received()).toMatch(/retry-after: 1/i);
    third.socket.destroy();
    // One slow client leaves mid-body: its place is free again, and a whole request is served.
    slowA.socket.destroy();
    await slowA.closed;
    await until(() => s.pending === 1, 'the place of the client that left');
    const body = Buffer.from(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer);
    const served = await connect(Buffer.concat([Buffer.from(head(body.byteLength)), body]));
    await until(() => engine.submitted.length === 1, 'the submitted job');
    engine.release();
    await until(() => served.received().includes('\r\n\r\n'), 'the 200');
    expect(served.received()).toMatch(/^HTTP\/1\.1 200 /);
    served.socket.destroy();
    slowB.socket.destroy();
    await slowB.closed;
    await until(() => s.pending === 0, 'every place free');
  });

  it('load-shedding limits must be finite numbers of ms >= 0, named in the error', () => {
    expect(() => createServer({ limits: { maxTurnMs: -1 } })).toThrow(
      /limits\.maxTurnMs must be a finite number of ms >= 0 \(0 turns it off\), got -1/,
    );
    expect(() => createServer({ limits: { maxEventLoopDelayMs: Number.NaN } })).toThrow(
      /limits\.maxEventLoopDelayMs must be a finite number of ms >= 0/,
    );
    expect(() => createServer({ limits: { maxTurnMs: Number.POSITIVE_INFINITY } })).toThrow(/got Infinity/);
  });

  it('refuses within the turn: once one loop turn has spent maxTurnMs reading a flood, the rest it reads get 429 overloaded (under pressure only, with adaptive admission on); every request is answered', async () => {
    /** `requests` requests written at once on as many open connections reach the server in one poll phase; each job costs the loop 2 ms. */
    const flood = async (maxTurnMs: number, maxEventLoopDelayMs = 0, requests = 40): Promise<string[]> => {
      const engine = new FakeEngine();
      const submit = engine.submit.bind(engine) as (spec: unknown, options?: unknown) => unknown;
      Object.assign(engine, {
        submit: (spec: unknown, options?: unknown) => {
          const until = performance.now() + 2;
          while (performance.now() < until);
          return submit(spec, options);
        },
      });
      const s = make({ engine, limits: { maxTurnMs, maxEventLoopDelayMs } });
      const { port } = new URL(await s.listen({ port: 0, host: '127.0.0.1' }));
      const body = JSON.stringify({ signal: signal(8) });
      const request = `POST /v1/stft HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const clients = await Promise.all(
        Array.from({ length: requests }, async () => {
          const socket = new Socket();
          const client = { socket, received: '' };
          socket.on('data', (d: Buffer) => (client.received += d.toString('latin1')));
          socket.on('error', () => undefined);
          await new Promise<void>((r) => socket.connect(Number(port), '127.0.0.1', r));
          return client;
        }),
      );
      const connections = (): Promise<number> =>
        new Promise((resolve, reject) => s.app.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
      const t0 = performance.now();
      while ((await connections()) < requests) {
        if (performance.now() - t0 > 10_000) throw new Error(`timed out waiting for ${requests} accepted connections`);
        await new Promise((r) => setTimeout(r, 5));
      }
      for (const c of clients) c.socket.write(request);
      await waitFor(() => clients.every((c) => /\r\n\r\n[\s\S]*\}$/.test(c.received)), 'an answer on every connection');
      for (const c of clients) c.socket.destroy();
      return clients.map((c) => c.received);
    };
    const answers = await flood(20);
    const statuses = answers.map((a) => Number(/^HTTP\/1\.1 (\d{3}) /.exec(a)?.[1]));
    expect(statuses.every((c) => c === 200 || c === 429)).toBe(true);
    const refused = answers.filter((a) => a.startsWith('HTTP/1.1 429 '));
    // The first 16 of a turn (the flood threshold) are always taken; the budget trips after 20 ms of 2 ms jobs.
    expect(statuses.filter((c) => c === 200).length).toBeGreaterThanOrEqual(16);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatch(/retry-after: 1/i);
    expect(refused[0]).toContain('"code":"overloaded"');
    expect(refused[0]).toContain('spent over 20 ms of one turn reading new requests');
    // The same flood with the budget off: every request is taken.
    expect((await flood(0)).every((a) => a.startsWith('HTTP/1.1 200 '))).toBe(true);
    // With adaptive admission on and no flood seen yet, one long turn from a quiet loop, as a closed
    // loop of clients brings now and then, is served...
    expect((await flood(20, 1000)).every((a) => a.startsWith('HTTP/1.1 200 '))).toBe(true);
    // ...and so is a turn of 40 past it: fewer than the 64 new requests that show a flood's first turn (turnLimit)...
    expect((await flood(20, 30)).every((a) => a.startsWith('HTTP/1.1 200 '))).toBe(true);
    // ...while a turn of 80 is cut once it has read 64 and run past maxEventLoopDelayMs.
    const first = await flood(20, 30, 80);
    expect(first.filter((a) => a.startsWith('HTTP/1.1 200 ')).length).toBeGreaterThanOrEqual(64);
    expect(first.find((a) => a.startsWith('HTTP/1.1 429 '))).toContain('spent over 30 ms of one turn');
    expect(first.every((a) => a.startsWith('HTTP/1.1 200 ') || a.startsWith('HTTP/1.1 429 '))).toBe(true);
  });

  it('sheds load: while the event loop runs behind, new jobs get 429 overloaded at once; health still answers; it recovers', async () => {
    const engine = new FakeEngine({ manual: true });
    // The turn budget is off here: this case is about the loop-delay look alone (the turn budget has its
    // own case above). On a slow machine the injected flood can still be read in one long turn when the
    // last request comes, and the turn budget would refuse it first, with its own message.
    const s = make({ engine, limits: { maxEventLoopDelayMs: 100, maxTurnMs: 0, retryAfterS: 3 } });
    await s.app.ready();
    /** Holds the loop for `ms`, then lets the overdue sample of load shedding run. */
    const holdLoop = async (ms: number): Promise<void> => {
      const until = performance.now() + ms;
      while (performance.now() < until);
      await new Promise((r) => setTimeout(r, 1));
    };
    // Long blocks that no request reaches (start-up, say) are not overload.
    await holdLoop(300);
    await holdLoop(300);
    await holdLoop(300);
    const inFlight = s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    await waitFor(() => engine.submitted.length === 1, 'the first job');
    // Long blocks while many requests keep arriving, as under a flood: from the second such look on,
    // new jobs are refused. (A request sent before a block reaches the server after it.)
    const arrived: Promise<{ statusCode: number }>[] = [];
    for (let i = 0; i < 3; i++) {
      for (let k = 0; k < 16; k++)
        arrived.push(s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } }));
      await holdLoop(300);
    }
    await holdLoop(300);
    const shed = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(shed.statusCode).toBe(429);
    expect(shed.headers['retry-after']).toBe('3');
    const error = shed.json<{ error: { code: string; message: string; retryable: boolean } }>().error;
    expect(error.code).toBe('overloaded');
    expect(error.message).toMatch(/event loop runs behind \(limit 100 ms\), so it takes \d+ % of new work/);
    expect(error.retryable).toBe(true);
    const shareOf = async (): Promise<number> =>
      Number(
        /^tscuda_admission_share(?:\{[^}]*\})? ([\d.]+)$/m.exec(
          (await s.app.inject({ method: 'GET', url: '/metrics' })).body,
        )?.[1],
      );
    expect(await shareOf()).toBeLessThan(1);
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
    // The flood's first requests were taken (each answered below), then shedding began. Each arrived
    // request is either refused at once or, once its body is read, a job in the (held) engine.
    let refusedSoFar = 0;
    for (const a of arrived) void a.then((r) => (refusedSoFar += r.statusCode === 429 ? 1 : 0));
    await waitFor(
      () => refusedSoFar + engine.submitted.length - 1 === arrived.length,
      'every flood request refused or submitted',
    );
    const taken = engine.submitted.length;
    expect(taken).toBeGreaterThan(16);
    expect(taken).toBeLessThan(49);
    engine.release();
    expect((await inFlight).statusCode).toBe(200);
    const statuses = (await Promise.all(arrived)).map((r) => r.statusCode);
    expect(statuses.filter((c) => c === 200)).toHaveLength(taken - 1);
    expect(statuses.every((c) => c === 200 || c === 429)).toBe(true);
    // On time again, the share climbs back to all (tscuda_admission_share), within seconds.
    const t0 = performance.now();
    while ((await shareOf()) < 1) {
      expect(performance.now() - t0).toBeLessThan(5000);
      await new Promise((r) => setTimeout(r, 50));
    }
    const before = engine.submitted.length;
    const after = s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    await waitFor(() => engine.submitted.length === before + 1, 'the job after recovery');
    engine.release();
    expect((await after).statusCode).toBe(200);
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    const rejected = statuses.filter((c) => c === 429).length + 1;
    expect(metrics).toMatch(new RegExp(`tscuda_request_failure_total\\{[^}]*reason="REJECTED"[^}]*\\} ${rejected}\\n`));
  });

  it('a request that waits past its timeout gets 504 with the reason, and its queued job is cancelled', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine });
    const t0 = performance.now();
    const res = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8), timeout: 50 } });
    expect(res.statusCode).toBe(504);
    expect(performance.now() - t0).toBeLessThan(1000);
    const error = res.json<{ error: { code: string; message: string; field: string } }>().error;
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('50 ms');
    expect(engine.queued).toBe(0);
  });
});

describe('asynchronous jobs', () => {
  it('POST /v1/jobs -> 202, GET until ready (JSON and binary), DELETE forgets it', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine, jobIdPrefix: 'w1-' });
    const post = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(16), flags: ['stft', 'cycles'], bands: [[0.1, 0.3]] },
    });
    expect(post.statusCode).toBe(202);
    const { id } = post.json<{ id: string }>();
    // The worker's routing prefix, then 128 random bits: no client guesses another's job.
    expect(id).toMatch(/^w1-[A-Za-z0-9_-]{22}$/);
    expect(post.headers.location).toBe(`/v1/jobs/${id}`);
    const queued = await s.app.inject({ method: 'GET', url: `/v1/jobs/${id}` });
    expect(queued.statusCode).toBe(202);
    expect(queued.json<{ status: string }>().status).toBe('queued');
    engine.release();
    await waitFor(() => engine.stats().jobs === 1, 'the job to finish');
    const ready = await s.app.inject({ method: 'GET', url: `/v1/jobs/${id}` });
    expect(ready.statusCode).toBe(200);
    expect(ready.json<{ status: string; result: { filtered: number[] } }>().result.filtered).toHaveLength(16);
    const bin = await s.app.inject({
      method: 'GET',
      url: `/v1/jobs/${id}`,
      headers: { accept: 'application/octet-stream' },
    });
    expect(bin.headers['x-tscuda-fields']).toContain('filtered=f32[1,16]');
    const del = await s.app.inject({ method: 'DELETE', url: `/v1/jobs/${id}` });
    expect(del.json<{ deleted: boolean }>().deleted).toBe(true);
    expect((await s.app.inject({ method: 'GET', url: `/v1/jobs/${id}` })).statusCode).toBe(404);
  });

  it('DELETE cancels a queued job; flags are required; unknown ids are 404 naming id', async () => {
    const engine = new FakeEngine({ manual: true });
    const s = make({ engine });
    const noFlags = await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(16) } });
    expect(noFlags.json<{ error: { field: string } }>().error.field).toBe('flags');
    const { id } = (
      await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(16), flags: ['stft'] } })
    ).json<{ id: string }>();
    const del = await s.app.inject({ method: 'DELETE', url: `/v1/jobs/${id}` });
    expect(del.json<{ status: string }>().status).toBe('cancelled');
    expect(engine.queued).toBe(0);
    const unknown = await s.app.inject({ method: 'GET', url: '/v1/jobs/424242' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json<{ error: { field: string } }>().error.field).toBe('id');
  });

  it('keeps at most maxFinished finished jobs', async () => {
    const s = make({ engine: new FakeEngine(), limits: { jobRetention: { maxFinished: 2, ttlMs: 60_000 } } });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (
          await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(8), flags: ['stft'] } })
        ).json<{ id: string }>().id,
      );
    await new Promise((r) => setTimeout(r, 10));
    const codes = await Promise.all(
      ids.map(async (id) => (await s.app.inject({ method: 'GET', url: `/v1/jobs/${id}` })).statusCode),
    );
    expect(codes).toEqual([404, 404, 200, 200]);
  });
});

describe('batch endpoints', () => {
  it('gradient, lerp and slerp through their batchers, JSON and binary', async () => {
    const s = make({ engine: new FakeEngine(), batchers });
    const g = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/gradient',
      payload: {
        items: [
          [1, 2, 3],
          [4, 5, 6],
        ],
      },
    });
    expect(g.statusCode).toBe(200);
    expect(g.json<{ outputs: number[][] }>().outputs).toEqual([
      [2, 4, 6],
      [8, 10, 12],
    ]);
    const l = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/lerp',
      headers: { accept: 'application/octet-stream' },
      payload: { items: [{ a: [0, 0], b: [2, 4], t: 0.5 }] },
    });
    expect(l.headers['x-tscuda-fields']).toBe('outputs=f32[1,2]');
    expect(
      Array.from(new Float32Array(l.rawPayload.buffer.slice(l.rawPayload.byteOffset, l.rawPayload.byteOffset + 8))),
    ).toEqual([1, 2]);
    const sl = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/slerp',
      payload: { items: [{ a: [1, 0], b: [0, 1], t: 0 }] },
    });
    expect(sl.json<{ outputs: number[][] }>().outputs).toEqual([[1, 0]]);
  });

  it('bad items name their field; a full batcher is 429; no batcher is 503', async () => {
    const s = make({
      engine: new FakeEngine(),
      batchers: { ...batchers, gradient: () => fakeBatcher<ArrayLike<number>>((v) => Float32Array.from(v), 0) },
    });
    const t = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/lerp',
      payload: { items: [{ a: [0], b: [1], t: 2 }] },
    });
    expect(t.json<{ error: { field: string } }>().error.field).toBe('items[0].t');
    const dim = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/slerp',
      payload: {
        items: [
          { a: [0, 1], b: [1, 0], t: 0.1 },
          { a: [0], b: [1], t: 0.1 },
        ],
      },
    });
    expect(dim.json<{ error: { field: string } }>().error.field).toBe('items[1].a');
    const extra = await s.app.inject({
      method: 'POST',
      url: '/v1/batch/lerp',
      payload: { items: [{ a: [0], b: [1], t: 0.5, s: 1 }] },
    });
    expect(extra.json<{ error: { field: string } }>().error.field).toBe('items[0].s');
    const full = await s.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1]] } });
    expect(full.statusCode).toBe(429);
    expect(full.headers['retry-after']).toBe('1');
    const none = make({ engine: new FakeEngine() });
    expect(
      (await none.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1]] } })).statusCode,
    ).toBe(503);
  });
});

describe('health, info, metrics', () => {
  it('live and ready are 200 with an engine; info lists the engine', async () => {
    const s = make({ engine: new FakeEngine(), batchers });
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(200);
    const info = (await s.app.inject({ method: 'GET', url: '/v1/info' })).json<{
      engine: { lanes: number };
      batch: string[];
      version: string;
    }>();
    expect(info.engine.lanes).toBe(2);
    expect(info.batch).toEqual(['gradient', 'lerp', 'slerp']);
    expect(info.version).toMatch(/^\d+\.\d+/);
  });

  it('/metrics exposes the Triton-style series after traffic', async () => {
    const s = make({ engine: new FakeEngine({ maxQueued: 0 }), batchers, metricsLabels: { worker: '3' } });
    await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8), fs: -1 } });
    const ok = make({ engine: new FakeEngine(), batchers });
    await ok.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    await ok.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1, 2]] } });
    const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('tscuda_request_failure_total{endpoint="/v1/stft",reason="REJECTED",worker="3"} 1');
    expect(text).toContain('tscuda_request_failure_total{endpoint="/v1/stft",reason="INVALID",worker="3"} 1');
    const okText = (await ok.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const name of [
      'tscuda_request_success_total{endpoint="/v1/stft"} 1',
      'tscuda_pending_requests',
      'tscuda_request_duration_seconds_bucket',
      'tscuda_queue_duration_seconds_bucket',
      'tscuda_compute_duration_seconds_bucket',
      'tscuda_gpu_compute_duration_seconds_bucket',
      'tscuda_request_batch_size_bucket',
      'tscuda_request_bytes_total',
      'tscuda_response_bytes_total',
      'tscuda_gpu_busy_fraction 0.25',
      'tscuda_event_loop_delay_seconds{stat="p99"}',
      'tscuda_batcher_fill_rate{kind="gradient",dim="2"} 0.5',
      'tscuda_ready 1',
    ]) {
      expect(okText).toContain(name);
    }
  });
});

describe('without a GPU', () => {
  it('live 200, ready 503 with the reason, info and metrics answer, bad input 4xx, GPU work 503', async () => {
    const s = make({ engine: null, unavailableReason: 'no CUDA driver (libcuda.so.1 not found)' });
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/live' })).statusCode).toBe(200);
    const ready = await s.app.inject({ method: 'GET', url: '/v2/health/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json<{ reason: string }>().reason).toContain('libcuda');
    expect(
      (await s.app.inject({ method: 'GET', url: '/v1/info' })).json<{ engine: null; ready: boolean }>(),
    ).toMatchObject({ engine: null, ready: false });
    expect((await s.app.inject({ method: 'GET', url: '/metrics' })).body).toContain('tscuda_ready 0');
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/v1/stft',
          headers: { 'content-type': 'application/json' },
          payload: '{',
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8), nope: 1 } })).statusCode,
    ).toBe(400);
    const nanFs = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?fs=NaN',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(32),
    });
    expect(nanFs.json<{ error: { field: string } }>().error.field).toBe('fs');
    const band = await s.app.inject({
      method: 'POST',
      url: '/v1/cycles',
      payload: { signal: signal(8), fs: 2, bands: [[0.5, 3]] },
    });
    expect(band.json<{ error: { field: string } }>().error.field).toBe('bands[0][1]');
    const item = await s.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1, null]] } });
    expect(item.json<{ error: { field: string } }>().error.field).toBe('items[0][1]');
    const work = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(work.statusCode).toBe(503);
    expect(work.json<{ error: { code: string } }>().error.code).toBe('gpu_unavailable');
    expect(
      (await s.app.inject({ method: 'POST', url: '/v1/batch/gradient', payload: { items: [[1]] } })).statusCode,
    ).toBe(503);
  });
});

describe('context loss and graceful close', () => {
  it('a lost context answers every accepted request 503 retryable, and ready turns 503 (unless a peer serves)', async () => {
    const engine = new FakeEngine({ manual: true });
    let lost = 0;
    let peers = false;
    const s = make({ engine, onLost: () => lost++, peersReady: () => peers });
    const accepted = Array.from({ length: 5 }, () =>
      s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } }),
    );
    const job = (
      await s.app.inject({ method: 'POST', url: '/v1/jobs', payload: { signal: signal(8), flags: ['stft'] } })
    ).json<{ id: string }>();
    await new Promise((r) => setTimeout(r, 10));
    engine.loseContext();
    for (const r of await Promise.all(accepted)) {
      expect(r.statusCode).toBe(503);
      expect(r.json<{ error: { code: string; retryable: boolean } }>().error).toMatchObject({
        code: 'gpu_lost',
        retryable: true,
      });
      expect(r.headers.connection).toBe('close');
    }
    expect(lost).toBe(1);
    expect(
      (await s.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}` })).json<{
        status: string;
        error: { code: string };
      }>(),
    ).toMatchObject({
      status: 'error',
      error: { code: 'gpu_lost' },
    });
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(503);
    peers = true;
    expect((await s.app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(200);
    const later = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(later.statusCode).toBe(503);
    expect(later.json<{ error: { retryable: boolean } }>().error.retryable).toBe(true);
  });

  it('close() settles every accepted request and job before it resolves; later requests get 503', async () => {
    const engine = new FakeEngine({ delayMs: 80 });
    const s = createServer({ engine, ownsEngine: true, limits: { maxBatchDelayMs: 0 } });
    const accepted = Array.from({ length: 4 }, () =>
      s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } }),
    );
    const job = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { signal: signal(8), flags: ['stft'] },
    });
    expect(job.statusCode).toBe(202);
    await waitFor(() => engine.submitted.length === 5, 'every accepted job in the engine');
    const t0 = performance.now();
    const closed = s.close();
    const late = await s.app.inject({ method: 'POST', url: '/v1/stft', payload: { signal: signal(8) } });
    expect(late.statusCode).toBe(503);
    // In the documented shape, not fastify's own 503.
    expect(late.json<{ error: { code: string; retryable: boolean } }>().error).toMatchObject({
      code: 'shutting_down',
      retryable: true,
    });
    await closed;
    expect(performance.now() - t0).toBeGreaterThan(40);
    // Every accepted job (4 synchronous, 1 asynchronous) ran to its end before close() resolved.
    expect(engine.stats().jobs).toBe(5);
    expect(s.pending).toBe(0);
    for (const r of await Promise.all(accepted)) expect(r.statusCode).toBe(200);
    expect(s.ready).toBe(false);
  });
});
