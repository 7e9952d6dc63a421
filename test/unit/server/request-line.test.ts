/**
 * Request lines of HTTP versions this server does not speak: HTTP/0.9's bare `GET /path` and
 * `HTTP/2.0` as text get 400 (input is never a 5xx), in the documented error shape with the connection closed;
 * 1.0 and 1.1 are served. Loopback only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeEngine } from './fake-engine.js';
import { connect, errorOf, listen, response, serverFactory } from './hostile-client.js';

const servers = serverFactory();
let port: number;
beforeAll(async () => {
  port = await listen(servers.make({ engine: new FakeEngine() }));
});
afterAll(() => servers.closeAll());

describe('the HTTP version of a request line', () => {
  const cases: [line: string, status: number, code: string][] = [
    ['GET /v2/health/live\r\n\r\n', 400, 'unsupported_http_version'],
    ['GET /v2/health/live HTTP/0.9\r\n\r\n', 400, 'unsupported_http_version'],
    ['POST /v1/stft\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}', 400, 'unsupported_http_version'],
    ['GET /v2/health/live HTTP/2.0\r\nhost: x\r\n\r\n', 400, 'unsupported_http_version'],
    ['GET /v2/health/live HTTP/1.0\r\n\r\n', 200, ''],
    ['GET /v2/health/live HTTP/1.1\r\nhost: x\r\n\r\n', 200, ''],
  ];
  it.each(cases)('%j: %i', async (line, status, code) => {
    const c = await connect(port, line);
    const r = await response(c, 3000);
    expect(r.status).toBe(status);
    if (status !== 200) {
      const error = errorOf(r.body);
      expect(error).toMatchObject({ code, field: 'version' });
      expect(error.message).toMatch(/HTTP\/1\.1/);
      expect(r.headers).toMatch(/^connection: close$/im);
      await c.closed;
    }
    c.socket.destroy();
  });
});
