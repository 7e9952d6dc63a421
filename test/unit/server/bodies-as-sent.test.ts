/**
 * Bodies are read as sent, and a request's parameters are read from where its body type says:
 * a content type or coding the server does not read is refused before the body is (a trickled
 * text/plain body once held its request slot forever), a JSON number the samples cannot hold is
 * refused by name (it came back as null), and parameters in the wrong place are refused, never
 * ignored. No GPU: the fake engine.
 */
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeEngine } from './fake-engine.js';
import { connect, errorOf, head, listen, response, serverFactory } from './hostile-client.js';

const servers = serverFactory();
afterEach(() => servers.closeAll());

const signal = (n: number): number[] => Array.from({ length: n }, (_, i) => Math.sin(i / 3) + 0.1 * i);

describe('content types and codings the server does not read: 415 before the body', () => {
  it('a text/plain body that never finishes is answered at once (415 naming content-type), not held', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const port = await listen(s);
    const t0 = performance.now();
    const c = await connect(
      port,
      head('POST', '/v1/stft', { 'content-type': 'text/plain', 'content-length': 1000 }) + 'x',
    );
    const r = await response(c, 3000);
    c.socket.destroy();
    expect(r.status).toBe(415);
    expect(errorOf(r.body)).toMatchObject({ code: 'unsupported_media_type', field: 'content-type' });
    expect(errorOf(r.body).message).toContain('text/plain');
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('an Expect header other than 100-continue gets 417 in the documented error shape', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const port = await listen(s);
    const c = await connect(
      port,
      head('POST', '/v1/stft', { 'content-type': 'application/json', 'content-length': 2, expect: 'bogus' }) + '{}',
    );
    const r = await response(c, 3000);
    c.socket.destroy();
    expect(r.status).toBe(417);
    expect(errorOf(r.body)).toMatchObject({ code: 'expectation_failed', field: 'expect' });
  });

  it('a body with no content type says it is missing', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const port = await listen(s);
    const c = await connect(port, head('POST', '/v1/stft', { 'content-length': 2 }) + '{}');
    const r = await response(c, 3000);
    c.socket.destroy();
    expect(r.status).toBe(415);
    expect(errorOf(r.body).message).toMatch(/content-type: missing/);
  });

  it('a compressed body (content-encoding gzip) is refused by name, binary or JSON; identity is read as usual', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const samples = Buffer.from(Float32Array.from(signal(1024)).buffer);
    const binary = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
      payload: gzipSync(samples),
    });
    expect(binary.statusCode).toBe(415);
    expect(binary.json<{ error: { field: string; message: string } }>().error).toMatchObject({
      field: 'content-encoding',
    });
    const json = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync(JSON.stringify({ signal: signal(32) })),
    });
    expect(json.statusCode).toBe(415);
    expect(json.json<{ error: { message: string } }>().error.message).toContain('gzip');
    const identity = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'identity' },
      payload: samples,
    });
    expect(identity.statusCode).toBe(200);
    expect(identity.json<{ length: number }>().length).toBe(1024);
  });
});

describe('JSON samples the samples type cannot hold: 400 naming the element', () => {
  it('1e39 on an f32 server, 1e400 (JSON.parse reads Infinity) on any; f64 holds 1e39', async () => {
    const f32 = servers.make({ engine: new FakeEngine({ precision: 'f32' }) });
    const big = await f32.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: [1, 2, 1e39, ...signal(29)] },
    });
    expect(big.statusCode).toBe(400);
    const error = big.json<{ error: { field: string; message: string } }>().error;
    expect(error.field).toBe('signal[2]');
    expect(error.message).toContain('1e+39');
    const rows = await f32.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: [signal(16), [...signal(15), -1e39]] },
    });
    expect(rows.json<{ error: { field: string } }>().error.field).toBe('signal[1][15]');
    const f64 = servers.make({ engine: new FakeEngine({ precision: 'f64' }) });
    const held = await f64.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: [1, 2, 1e39, ...signal(29)] },
    });
    expect(held.statusCode).toBe(200);
    const infinite = await f64.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/json' },
      payload: `{"signal":[${signal(31).join(',')},1e400]}`,
    });
    expect(infinite.statusCode).toBe(400);
    expect(infinite.json<{ error: { field: string } }>().error.field).toBe('signal[31]');
  });
});

describe('parameters where the body type does not read them: refused, never ignored', () => {
  it('an x-tscuda-* parameter header on a JSON body is 400 naming the header', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'x-tscuda-fs': '100' },
      payload: { signal: signal(32) },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { field: string; message: string } }>().error).toMatchObject({ field: 'x-tscuda-fs' });
    // The same header with a binary body is the way to send fs.
    const binary = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/octet-stream', 'x-tscuda-fs': '100' },
      payload: Buffer.from(Float32Array.from(signal(32)).buffer),
    });
    expect(binary.statusCode).toBe(200);
    expect(binary.json<{ fs: number }>().fs).toBe(100);
  });
});

describe('refusals name what the client sent', () => {
  it("a bad flag on a synchronous endpoint is named by the client's own index", async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: signal(32), flags: ['bogus'] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { field: string } }>().error.field).toBe('flags[0]');
  });

  it('an enum field lists the values it takes', async () => {
    const s = servers.make({ engine: new FakeEngine() });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: signal(32), detrend: 'cubic' },
    });
    expect(res.statusCode).toBe(400);
    const error = res.json<{ error: { field: string; message: string } }>().error;
    expect(error.field).toBe('detrend');
    expect(error.message).toContain('"linear"');
  });
});
