/**
 * What the GPU tests of the server's bodies share (window-f16.test.ts, sixteen-bit.test.ts): a server
 * over the real engine for the suite, a binary POST to it, and the relative comparison of two results.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { TscudaServer } from '../../../src/server/create-server.js';

/** A server's address, known once the suite's beforeAll has started it. */
export interface ServedEngine {
  readonly base: string;
}

/**
 * Starts a server over the real engine (two lanes, a free port on 127.0.0.1) before the suite's
 * tests and closes it after them; call it inside the suite's describe. Its modules are loaded only
 * then, so a file without a GPU skips without loading CUDA.
 */
export function serveOnGpu(): ServedEngine {
  let server: TscudaServer | undefined;
  let base = '';
  beforeAll(async () => {
    const { buildGpuParts } = await import('../../../src/server/supervision/gpu-parts.js');
    const { serverOptions } = await import('../../../src/server/supervision/server-options.js');
    const { createServer } = await import('../../../src/server/create-server.js');
    const config = { port: 0, host: '127.0.0.1', lanes: 2 };
    server = createServer(serverOptions(config, await buildGpuParts(config)));
    base = await server.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await server?.close();
  });
  return {
    get base() {
      return base;
    },
  };
}

/** max |actual - expected| within `rel` of max |expected| (never zero: the inputs are fresh random). */
export function expectRelClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  rel: number,
  what: string,
): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  let scale = 0;
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    scale = Math.max(scale, Math.abs(expected[i]!));
    const d = Math.abs(actual[i]! - expected[i]!);
    if (!(d <= worst)) worst = d;
  }
  expect(scale, `${what}: a reference of zeros proves nothing`).toBeGreaterThan(0);
  expect(worst, `${what}: max difference (scale ${scale})`).toBeLessThanOrEqual(rel * scale);
}

/** POSTs `body` as application/octet-stream to `url`, expects 200 (the body says why not) and returns the JSON answer. */
export async function postBinary<T>(url: string, body: ArrayBufferView): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as T;
}
