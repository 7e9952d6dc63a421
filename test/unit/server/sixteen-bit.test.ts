/**
 * 16-bit binary bodies (issue 26) through the server, CUDA-free over the FakeEngine: `dtype`
 * i16/f16/bf16 (query or `x-tscuda-dtype`) decodes the body 2 bytes per sample, exactly, into
 * the job's `data` with its `dtype` and the request's `scale`; an odd byte count, a JSON body
 * naming a 16-bit dtype, `scale` on float samples are 400s naming the field; `outputDtype`
 * f16/bf16 waves come back named in `x-tscuda-fields` (binary) or widened to numbers (JSON).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type CreateServerOptions, type TscudaServer } from '../../../src/server/create-server.js';
import { decodeBinarySignal, parseFieldsHeader } from '../../../src/server/codec.js';
import { bf16Bits, bf16Value, f16Bits, f16Value } from '../../../src/runtime/memory/half.js';
import { FakeEngine } from './fake-engine.js';

const servers: TscudaServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function make(options: CreateServerOptions): TscudaServer {
  const s = createServer(options);
  servers.push(s);
  return s;
}

/** Fresh random 16-bit integers over the whole range (never zeros). */
function randomI16(n: number): Int16Array {
  return Int16Array.from({ length: n }, () => Math.floor(Math.random() * 65536) - 32768 || 1);
}

/** Fresh random values as f16 or bf16 bits. */
function randomHalf(n: number, bits: (x: number) => number): Uint16Array {
  return Uint16Array.from({ length: n }, () => bits((Math.random() * 2 - 1) * 100));
}

const BINARY = { 'content-type': 'application/octet-stream' };

function bytes(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

describe('16-bit request bodies', () => {
  it('i16 (query): decoded exactly into an Int16Array, dtype and scale passed to the engine', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const samples = randomI16(2 * 64);
    const scale = 0.001 + Math.random() / 1000;
    const res = await s.app.inject({
      method: 'POST',
      url: `/v1/stft?dtype=i16&batch=2&scale=${scale}`,
      headers: BINARY,
      payload: bytes(samples),
    });
    expect(res.statusCode, res.body).toBe(200);
    const spec = engine.submitted[0]!;
    expect(spec.data).toBeInstanceOf(Int16Array);
    expect(Array.from(spec.data)).toEqual(Array.from(samples));
    expect(spec).toMatchObject({ dtype: 'i16', scale, batch: 2 });
    // The fake engine reads them as the engine does: sample x scale.
    const filtered = res.json<{ filtered: number[] }>().filtered.flat();
    filtered.forEach((v, i) => expect(v).toBeCloseTo(Math.fround(samples[i]! * scale * 2), 4));
  });

  it('i16 (x-tscuda-dtype header), numpy spelling int16, no scale: the engine default (1/32768) applies', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const samples = randomI16(64);
    for (const dtype of ['i16', 'int16']) {
      const res = await s.app.inject({
        method: 'POST',
        url: '/v1/stft',
        headers: { ...BINARY, 'x-tscuda-dtype': dtype },
        payload: bytes(samples),
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    for (const spec of engine.submitted) {
      expect(spec.dtype).toBe('i16');
      expect(spec.scale).toBeUndefined();
      expect(Array.from(spec.data)).toEqual(Array.from(samples));
    }
  });

  it('f16 and bf16 bodies: their bits in a Uint16Array, named by dtype', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const cases = [
      { dtype: 'f16', bits: randomHalf(64, f16Bits) },
      { dtype: 'bf16', bits: randomHalf(64, bf16Bits) },
    ] as const;
    for (const c of cases) {
      const res = await s.app.inject({
        method: 'POST',
        url: `/v1/stft?dtype=${c.dtype}`,
        headers: BINARY,
        payload: bytes(c.bits),
      });
      expect(res.statusCode, res.body).toBe(200);
      const spec = engine.submitted.at(-1)!;
      expect(spec.data).toBeInstanceOf(Uint16Array);
      expect(spec.dtype).toBe(c.dtype);
      expect(Array.from(spec.data)).toEqual(Array.from(c.bits));
    }
  });

  it('an unaligned body (a slice of a pooled Buffer) is copied, exactly', () => {
    const samples = randomI16(33);
    const backing = Buffer.alloc(samples.byteLength + 1);
    bytes(samples).copy(backing, 1);
    const decoded = decodeBinarySignal(backing.subarray(1), 'i16');
    expect(decoded).toBeInstanceOf(Int16Array);
    expect(Array.from(decoded)).toEqual(Array.from(samples));
  });

  it('an odd byte count is 400 naming body and the 2-byte element size', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    for (const dtype of ['i16', 'f16', 'bf16']) {
      const res = await s.app.inject({
        method: 'POST',
        url: `/v1/stft?dtype=${dtype}`,
        headers: BINARY,
        payload: Buffer.alloc(129, 7),
      });
      expect(res.statusCode).toBe(400);
      expect(res.json<{ error: { field: string; message: string } }>().error).toMatchObject({ field: 'body' });
      expect(res.body).toMatch(new RegExp(`129 bytes is not a multiple of the ${dtype} element size \\(2 bytes\\)`));
    }
    expect(engine.submitted).toHaveLength(0);
  });

  it('refused with 400 naming the field: a JSON body with a 16-bit dtype, scale on f32 samples, an unknown dtype, outputDtype i16', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const json = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: Array.from(randomI16(64)), dtype: 'i16' },
    });
    expect(json.statusCode).toBe(400);
    expect(json.json<{ error: { field: string; message: string } }>().error.field).toBe('dtype');
    expect(json.body).toMatch(/binary bodies/);
    const f32 = new Float32Array(64).map(() => Math.random());
    const scaled = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?scale=2',
      headers: BINARY,
      payload: bytes(f32),
    });
    expect(scaled.statusCode).toBe(400);
    expect(scaled.json<{ error: { field: string } }>().error.field).toBe('scale');
    const unknown = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=u8',
      headers: BINARY,
      payload: bytes(f32),
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toMatch(/dtype/);
    const outI16 = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=i16&outputDtype=i16',
      headers: BINARY,
      payload: bytes(randomI16(64)),
    });
    expect(outI16.statusCode).toBe(400);
    expect(outI16.json<{ error: { field: string } }>().error.field).toBe('outputDtype');
    expect(engine.submitted).toHaveLength(0);
  });
});

describe('16-bit result waves (outputDtype)', () => {
  it('binary: x-tscuda-fields names filtered f16, its bytes are the f16 bits, the spectrum follows as f32', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const samples = randomI16(2 * 32);
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft?dtype=i16&batch=2&outputDtype=f16',
      headers: { ...BINARY, accept: 'application/octet-stream' },
      payload: bytes(samples),
    });
    expect(res.statusCode, res.body).toBe(200);
    const header = String(res.headers['x-tscuda-fields']);
    expect(header).toMatch(/^filtered=f16\[2,32\];spectrum=f32\[2,\d+\]$/);
    const fields = parseFieldsHeader(header);
    expect(fields[0]).toMatchObject({ name: 'filtered', dtype: 'f16', shape: [2, 32], offset: 0, bytes: 128 });
    expect(fields[1]!.offset).toBe(128);
    expect(res.rawPayload.byteLength).toBe(fields.reduce((n, f) => n + f.bytes, 0));
    const raw = res.rawPayload;
    const bits = new Uint16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + 128));
    expect(Array.from(bits)).toEqual(Array.from(samples, (v) => f16Bits((v / 32768) * 2)));
  });

  it('JSON: bf16 waves widened to their values, dtypes names bf16', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const samples = new Float32Array(32).map(() => Math.random() * 2 - 1);
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      headers: { ...BINARY, 'x-tscuda-outputdtype': 'bf16' },
      payload: bytes(samples),
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ filtered: number[]; dtypes: Record<string, string> }>();
    expect(body.dtypes).toMatchObject({ filtered: 'bf16', spectrum: 'f32' });
    expect(body.filtered.flat()).toEqual(Array.from(samples, (v) => bf16Value(bf16Bits(v * 2))));
    expect(engine.submitted[0]!.outputDtype).toBe('bf16');
    // f16 likewise, from a JSON body (its samples are f32; the waves come back 16-bit).
    const json = await s.app.inject({
      method: 'POST',
      url: '/v1/stft',
      payload: { signal: Array.from(samples), outputDtype: 'f16' },
    });
    expect(json.statusCode, json.body).toBe(200);
    expect(json.json<{ filtered: number[] }>().filtered.flat()).toEqual(
      Array.from(samples, (v) => f16Value(f16Bits(v * 2))),
    );
  });

  it('/v1/jobs refuses 16-bit waves (a stored result does not say their type): 400 naming outputDtype', async () => {
    const engine = new FakeEngine();
    const s = make({ engine });
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/jobs?flags=stft&dtype=i16&outputDtype=f16',
      headers: BINARY,
      payload: bytes(randomI16(64)),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { field: string } }>().error.field).toBe('outputDtype');
    expect(engine.submitted).toHaveLength(0);
  });
});
