/**
 * Fused requests on the real engine: the same concurrent requests (fresh random series, batches of
 * 1 to 3, f32 and i16 in, f32 and f16 out, stft, cycles and wavelet) through a server that fuses
 * them (`maxBatchDelayMs` 50) and one that does not (0), both over one JobEngine. Each fused answer
 * equals the unfused one within 1e-5 of each array's largest value (f16 waves: within one f16
 * step), as the same kernels run on the same series and only the batch a series rides in differs;
 * and the fusing server ran fewer engine jobs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import type { JobEngine } from '../../../src/engine/index.js';
import type { TscudaServer } from '../../../src/server/create-server.js';
import type { FieldLayout } from '../../../src/server/codec.js';

/** Each field of a binary answer as numbers (f16 bits as their values), with its dtype. */
type Decoded = Record<string, { dtype: string; values: number[] }>;

describe.skipIf(!gpu.available)(
  `fused requests over the real engine${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let engine: JobEngine;
    /** engine.submit() calls through the two servers. */
    let submits = 0;
    let fused: TscudaServer;
    let plain: TscudaServer;
    let parseFields: (header: string) => FieldLayout[];
    let f16Value: (bits: number) => number;

    beforeAll(async () => {
      const { JobEngine } = await import('../../../src/engine/index.js');
      const { createServer } = await import('../../../src/server/create-server.js');
      ({ parseFieldsHeader: parseFields } = await import('../../../src/server/codec.js'));
      ({ f16Value } = await import('../../../src/runtime/memory/half.js'));
      engine = new JobEngine({ device: 0, lanes: 2 });
      // The engine as the servers see it, counting its submits.
      const counted = new Proxy(engine, {
        get(target, key) {
          const value: unknown = Reflect.get(target, key, target);
          if (key === 'submit')
            return (...args: Parameters<JobEngine['submit']>) => (submits++, target.submit(...args));
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      fused = createServer({ engine: counted, limits: { maxBatchDelayMs: 50 } });
      plain = createServer({ engine: counted, limits: { maxBatchDelayMs: 0 } });
    }, 60_000);
    afterAll(async () => {
      await Promise.all([fused?.close(), plain?.close()]);
      await engine?.close();
    });

    function decode(raw: Buffer, header: string): Decoded {
      const out: Decoded = {};
      for (const f of parseFields(header)) {
        const bytes = raw.subarray(f.offset, f.offset + f.bytes);
        const copy = new Uint8Array(bytes).buffer;
        const view =
          f.dtype === 'f64'
            ? new Float64Array(copy)
            : f.dtype === 'f16'
              ? Array.from(new Uint16Array(copy), (b) => f16Value(b))
              : f.dtype === 'f32'
                ? new Float32Array(copy)
                : undefined;
        expect(view, `field ${f.name} of dtype ${f.dtype}`).toBeDefined();
        out[f.name] = { dtype: f.dtype, values: Array.from(view!) };
      }
      return out;
    }

    function expectClose(actual: Decoded, expected: Decoded, what: string): void {
      expect(Object.keys(actual), what).toEqual(Object.keys(expected));
      for (const [name, field] of Object.entries(expected)) {
        const want = field.values;
        const got = actual[name]!.values;
        // f16 waves: one rounding step of f16 (2^-10 relative) where the f32 values before it differ in their last bits.
        const rel = field.dtype === 'f16' ? 2 ** -10 : 1e-5;
        expect(got.length, `${what} ${name}: length`).toBe(want.length);
        let scale = 0;
        let worst = 0;
        for (let i = 0; i < want.length; i++) {
          scale = Math.max(scale, Math.abs(want[i]!));
          let d = Math.abs(got[i]! - want[i]!);
          // A dominant cycle's phase (column 3 of 4) near ±π may come out on the other side: compare it as an angle.
          if (name === 'dominant' && i % 4 === 3) d = Math.min(d, Math.abs(2 * Math.PI - d));
          worst = Math.max(worst, d);
        }
        expect(scale, `${what} ${name}: a reference of zeros proves nothing`).toBeGreaterThan(0);
        expect(worst, `${what} ${name}: max |fused - unfused| (scale ${scale})`).toBeLessThanOrEqual(rel * scale);
      }
    }

    /** B series of random cosines plus noise. */
    function series(batch: number, n: number, i16: boolean): Float32Array | Int16Array {
      const out = i16 ? new Int16Array(batch * n) : new Float32Array(batch * n);
      for (let b = 0; b < batch; b++) {
        const f = 10 + 30 * Math.random();
        const phase = Math.random() * 2 * Math.PI;
        for (let i = 0; i < n; i++) {
          const v = Math.cos((2 * Math.PI * f * i) / 1000 + phase) + (Math.random() * 2 - 1) * 0.3;
          out[b * n + i] = i16 ? Math.round(v * 12_000) : v;
        }
      }
      return out;
    }

    const CASES = [
      { endpoint: '/v1/stft', query: 'passBand=5,100&previewBins=32', i16: false },
      { endpoint: '/v1/stft', query: 'passBand=5,100&previewBins=32&outputDtype=f16', i16: true },
      { endpoint: '/v1/cycles', query: 'bands=1:20,20:60,60:200', i16: false },
      { endpoint: '/v1/wavelet', query: 'freqs=10,25,50', i16: false },
    ];

    for (const c of CASES) {
      it(`${c.endpoint}?${c.query}${c.i16 ? ' (i16 in)' : ''}: 12 concurrent requests fused, each equal to its unfused answer`, async () => {
        const n = 2048;
        const bodies = Array.from({ length: 12 }, (_, i) => ({
          batch: 1 + (i % 3),
          data: series(1 + (i % 3), n, c.i16),
        }));
        const send = (server: TscudaServer, body: (typeof bodies)[number]) =>
          server.app.inject({
            method: 'POST',
            url: `${c.endpoint}?dtype=${c.i16 ? 'i16' : 'f32'}&batch=${body.batch}&fs=1000&${c.query}`,
            headers: { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' },
            payload: Buffer.from(body.data.buffer, body.data.byteOffset, body.data.byteLength),
          });
        const before = submits;
        const mine = await Promise.all(bodies.map((b) => send(fused, b)));
        const fusedJobs = submits - before;
        const theirs = await Promise.all(bodies.map((b) => send(plain, b)));
        expect(submits - before - fusedJobs, 'unfused: one engine job per request').toBe(bodies.length);
        expect(fusedJobs, 'fused: fewer engine jobs than requests').toBeLessThan(bodies.length);
        mine.forEach((res, i) => {
          expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
          expect(theirs[i]!.statusCode).toBe(200);
          expect(res.headers['x-tscuda-fields']).toBe(theirs[i]!.headers['x-tscuda-fields']);
          expectClose(
            decode(res.rawPayload, String(res.headers['x-tscuda-fields'])),
            decode(theirs[i]!.rawPayload, String(theirs[i]!.headers['x-tscuda-fields'])),
            `request ${i}`,
          );
        });
      }, 60_000);
    }
  },
);
