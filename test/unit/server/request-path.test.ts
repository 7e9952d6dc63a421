/**
 * The synchronous job route's memory per request, CUDA-free over the FakeEngine: the filtered wave
 * is written into pooled memory for f16/bf16 answers too (their bits, a Uint16Array), and a
 * binary answer of several parts joined in pooled memory stays intact while many are in flight
 * and the pool hands the same memory out again (over a real socket: the memory goes back only
 * once each response is done).
 */
import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type TscudaServer } from '../../../src/server/create-server.js';
import { parseFieldsHeader } from '../../../src/server/codec.js';
import { f16Bits } from '../../../src/runtime/memory/half.js';
import { FakeEngine } from './fake-engine.js';

const servers: TscudaServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const BINARY = { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' };

describe('the sync route in pooled memory', () => {
  it('f16 waves are written into a pooled Uint16Array (into.filtered), answered bit for bit', async () => {
    const engine = new FakeEngine();
    const s = createServer({ engine });
    servers.push(s);
    const samples = Float32Array.from({ length: 2 * 256 }, () => Math.random() * 2 - 1);
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?batch=2&outputDtype=f16&previewBins=4',
      headers: BINARY,
      payload: Buffer.from(samples.buffer),
    });
    expect(res.statusCode, res.body).toBe(200);
    const into = engine.submitted[0]!.into?.filtered;
    expect(into).toBeInstanceOf(Uint16Array);
    expect(into!.length).toBe(samples.length);
    const filtered = parseFieldsHeader(String(res.headers['x-tscuda-fields'])).find((f) => f.name === 'filtered')!;
    expect(filtered.dtype).toBe('f16');
    const bits = new Uint16Array(
      res.rawPayload.buffer.slice(
        res.rawPayload.byteOffset + filtered.offset,
        res.rawPayload.byteOffset + filtered.offset + filtered.bytes,
      ),
    );
    expect(Array.from(bits)).toEqual(Array.from(samples, (v) => f16Bits(v * 2)));
  }, 10_000);

  it('joined answers stay intact while 32 are in flight over a socket, each its own values', async () => {
    const engine = new FakeEngine({ delayMs: 2 });
    const s = createServer({ engine });
    servers.push(s);
    const address = new URL(await s.listen({ port: 0, host: '127.0.0.1' }));
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    const post = (seed: number): Promise<Buffer> =>
      new Promise((resolve, reject) => {
        const samples = Float32Array.from({ length: 4 * 512 }, (_, i) => seed + i / 4096);
        const r = request(
          {
            host: address.hostname,
            port: address.port,
            path: '/v1/stft?batch=4&previewBins=8',
            method: 'POST',
            headers: BINARY,
            agent,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`status ${res.statusCode}`)),
            );
          },
        );
        r.on('error', reject);
        r.end(Buffer.from(samples.buffer));
      });
    try {
      for (let round = 0; round < 3; round++) {
        const seeds = Array.from({ length: 32 }, (_, i) => round * 100 + i);
        const answers = await Promise.all(seeds.map(post));
        answers.forEach((body, k) => {
          // filtered (4 x 512 f32) then the spectrum (4 x 8 f32): 2x the samples, then the fake's
          // running index over the engine job's rows (requests fused into one job get rows further on).
          expect(body.byteLength).toBe(4 * (4 * 512 + 4 * 8));
          const values = new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
          expect(values[0]).toBeCloseTo(2 * seeds[k]!, 5);
          expect(values[2047]).toBeCloseTo(2 * (seeds[k]! + 2047 / 4096), 4);
          const spectrum = Array.from(values.subarray(2048, 2048 + 32));
          expect(spectrum[0]! % 32).toBe(0);
          expect(spectrum).toEqual(Array.from({ length: 32 }, (_, i) => spectrum[0]! + i));
        });
      }
    } finally {
      agent.destroy();
    }
  }, 20_000);
});
