/**
 * The server's door for non-finite samples, CUDA-free over the FakeEngine: a binary body of f32,
 * f64, f16 or bf16 samples with a NaN or an infinity is a 400 naming the first one (`signal[i]`)
 * before any engine sees it (the engine itself finds such samples only on the GPU, after running);
 * a JSON signal's are refused as it is decoded; among requests fused into one engine job, only
 * the bad one is refused and the others are answered with their own rows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type TscudaServer } from '../../../src/server/create-server.js';
import { bf16Bits, f16Bits } from '../../../src/runtime/memory/half.js';
import { checkFiniteSamples } from '../../../src/engine/finite-samples.js';
import { FakeEngine } from './fake-engine.js';

const servers: TscudaServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const BINARY = { 'content-type': 'application/octet-stream' };
const bytes = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const values = (n: number): number[] => Array.from({ length: n }, () => (Math.random() * 2 - 1) * 50 || 1);

type Float = 'f32' | 'f64' | 'f16' | 'bf16';
function body(dtype: Float, x: number[]): Float32Array | Float64Array | Uint16Array {
  if (dtype === 'f32') return Float32Array.from(x);
  if (dtype === 'f64') return Float64Array.from(x);
  return Uint16Array.from(x, (v) => (dtype === 'f16' ? f16Bits(v) : bf16Bits(v)));
}
const BAD: Record<Float, readonly number[]> = {
  f32: [Number.NaN, Infinity, -Infinity],
  f64: [Number.NaN, Infinity, -Infinity],
  f16: [0x7e00, 0x7c00, 0xfc00],
  bf16: [0x7fc1, 0x7f80, 0xff80],
};

describe('non-finite samples at the server door', { timeout: 30_000 }, () => {
  it('a binary body of each float type: 400 naming the first bad sample; the engine never sees it', async () => {
    const engine = new FakeEngine();
    const s = createServer({ engine, limits: { maxBatchDelayMs: 0 } });
    servers.push(s);
    for (const dtype of ['f32', 'f64', 'f16', 'bf16'] as const)
      for (const [k, bad] of BAD[dtype].entries()) {
        const data = body(dtype, values(128));
        const at = [0, 127, 1 + Math.floor(Math.random() * 120)][k]!;
        data[at] = bad;
        data[Math.min(127, at + 3)] = bad; // a later one too
        const res = await s.app.inject({
          method: 'POST',
          url: `/v1/stft?dtype=${dtype}&batch=2`,
          headers: BINARY,
          payload: bytes(data),
        });
        expect(res.statusCode, `${dtype} at ${at}: ${res.body}`).toBe(400);
        const error = res.json<{ error: { code: string; field: string; message: string } }>().error;
        expect(error.code).toBe('invalid_field');
        expect(error.field).toBe(`signal[${at}]`);
        expect(error.message).toMatch(/samples must be finite/);
      }
    // f64 samples beyond the f32 range of this (f32) engine.
    const wide = Float64Array.from(values(128));
    wide[17] = -1e200;
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=f64',
      headers: BINARY,
      payload: bytes(wide),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { field: string; message: string } }>().error).toMatchObject({
      field: 'signal[17]',
      message: expect.stringMatching(/infinite in f32/),
    });
    expect(engine.submitted).toHaveLength(0);
    // Finite samples of each type pass the same door.
    for (const dtype of ['f32', 'f64', 'f16', 'bf16'] as const) {
      const res = await s.app.inject({
        method: 'POST',
        url: `/v1/stft?dtype=${dtype}&batch=2`,
        headers: BINARY,
        payload: bytes(body(dtype, values(128))),
      });
      expect(res.statusCode, `${dtype}: ${res.body}`).toBe(200);
    }
    expect(engine.submitted).toHaveLength(4);
  });

  it('a JSON signal with a number beyond the range of its samples is refused as it is decoded', async () => {
    const engine = new FakeEngine();
    const s = createServer({ engine });
    servers.push(s);
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { 'content-type': 'application/json' },
      payload: '{"signal":[1,2,3,4,5,1e999,7,8]}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { field: string } }>().error.field).toBe('signal[5]');
    expect(engine.submitted).toHaveLength(0);
  });

  it('requests fused in one window: the one with a NaN gets its 400, the others their own rows in one engine job', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const s = createServer({ engine, limits: { maxBatchDelayMs: 50 } });
    servers.push(s);
    const n = 64;
    const signals = Array.from({ length: 6 }, () => Float32Array.from(values(n)));
    const badIndex = 1 + Math.floor(Math.random() * 4);
    const at = Math.floor(Math.random() * n);
    signals[badIndex]![at] = Number.NaN;
    const answers = await Promise.all(
      signals.map((x) =>
        s.app.inject({
          method: 'POST',
          url: '/v1/stft?dtype=f32&previewBins=4',
          headers: { ...BINARY, accept: 'application/json' },
          payload: bytes(x),
        }),
      ),
    );
    answers.forEach((res, i) => {
      if (i === badIndex) {
        expect(res.statusCode).toBe(400);
        expect(res.json<{ error: { field: string } }>().error.field).toBe(`signal[${at}]`);
        return;
      }
      expect(res.statusCode, `request ${i}: ${res.body}`).toBe(200);
      const filtered = res.json<{ filtered: number[] | number[][] }>().filtered.flat();
      expect(filtered).toHaveLength(n);
      filtered.forEach((v, t) => expect(v).toBeCloseTo(Math.fround(2 * signals[i]![t]!), 3));
    });
    // The five good requests went to the engine together, the bad one's samples never.
    expect(engine.submitted.reduce((rows, spec) => rows + (spec.batch ?? 1), 0)).toBe(5);
    expect(engine.submitted.length).toBeLessThan(5);
  });

  it('an engine that searches samples itself (checksSamples): the door leaves a binary body to it, and its refusal is the same 400 naming signal[i]', async () => {
    // As JobEngine does on the GPU: the job's result rejects with the JobValidationError of the CPU scan.
    class SearchingEngine extends FakeEngine {
      readonly checksSamples = true;
    }
    const engine = new SearchingEngine({
      failJob: (spec) => {
        try {
          checkFiniteSamples(spec.data, spec.dtype ?? 'f32', 'f32');
          return undefined;
        } catch (error) {
          return error as Error;
        }
      },
    });
    const s = createServer({ engine, limits: { maxBatchDelayMs: 0 } });
    servers.push(s);
    const data = Float32Array.from(values(256));
    const at = 1 + Math.floor(Math.random() * 250);
    data[at] = Number.NaN;
    const res = await s.app.inject({ method: 'POST', url: '/v1/stft?batch=2', headers: BINARY, payload: bytes(data) });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json<{ error: { code: string; field: string; message: string } }>().error).toMatchObject({
      code: 'invalid_field',
      field: `signal[${at}]`,
      message: expect.stringMatching(/samples must be finite/),
    });
    // The engine saw the body: the door did not scan it first.
    expect(engine.submitted).toHaveLength(1);
    const good = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?batch=2',
      headers: BINARY,
      payload: bytes(Float32Array.from(values(256))),
    });
    expect(good.statusCode, good.body).toBe(200);
  });
});
