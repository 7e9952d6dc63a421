// cuFFT plans on streams, their cache (by key, bounded, shared across streams), their refusals, fft().
import FFT from 'fft.js';
import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Device } from '../../../src/runtime/device.js';
import { FftPlan } from '../../../src/runtime/fft/plan.js';
import { fft, FftPlanCache, fftPlans } from '../../../src/runtime/fft/plan-cache.js';
import type { FftType } from '../../../src/runtime/fft/geometry.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { randomF64 } from '../helpers.js';
import { dft, batchedDft, relL2, scaled, upload, poisoned, download, DOUBLE } from './fft-reference.js';

describe.skipIf(!gpu.available)(
  `cuFFT plans: streams, the plan cache and refusals${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    it('runs on the default stream, then on the stream it is bound to', async () => {
      const ctx = Device.get(0).context;
      const n = 2048;
      const x = randomF64(2 * n);
      using plan = FftPlan.create({ shape: [n], type: 'Z2Z' });
      expect(plan.stream).toBeUndefined();
      expect(Number.isInteger(plan.workAreaBytes) && plan.workAreaBytes >= 0).toBe(true);
      using dx = DeviceBuffer.from('c128', x);
      using out = DeviceBuffer.alloc('c128', n).memset(0xffffffff, { width: 32 });
      ctx.synchronize();
      plan.forward(dx, out);
      ctx.synchronize();
      expect(relL2(out.read(), dft(x, n))).toBeLessThan(DOUBLE);

      using s = new Stream();
      plan.setStream(s);
      expect(plan.stream).toBe(s);
      using out2 = poisoned('c128', n, s);
      plan.inverse(out, out2);
      expect(relL2(await download(out2, s), scaled(x, n))).toBeLessThan(DOUBLE);
      plan.setStream(null);
      expect(plan.stream).toBeUndefined();
    });

    it('prime sizes (n=1009, batch 2) match too, and report their work area', async () => {
      const n = 1009;
      using s = new Stream();
      const x = randomF64(2 * n * 2);
      using plan = FftPlan.create({ shape: [n], type: 'Z2Z', batch: 2, stream: s });
      expect(Number.isInteger(plan.workAreaBytes) && plan.workAreaBytes >= 0).toBe(true);
      using dx = upload('c128', x, s);
      using out = poisoned('c128', n * 2, s);
      plan.forward(dx, out);
      expect(relL2(await download(out, s), batchedDft(x, n, 2))).toBeLessThan(DOUBLE);
    });

    it('caches plans by shape, type, batch and layout, one plan for every stream; clear() disposes them', () => {
      using s1 = new Stream();
      using s2 = new Stream();
      using cache = new FftPlanCache(); // disposed first, before the streams its plans use
      const a = cache.get({ shape: [512], type: 'C2C', stream: s1 });
      expect(cache.get({ shape: [512], type: 'C2C', stream: s1, label: 'same plan, other label' })).toBe(a);
      expect(cache.get({ shape: [512], type: 'C2C', stream: s2 })).toBe(a);
      expect(cache.get({ shape: [512], type: 'C2C' })).toBe(a);
      expect([cache.hits, cache.misses]).toEqual([3, 1]);
      const others = [
        cache.get({ shape: [512], type: 'Z2Z', stream: s1 }),
        cache.get({ shape: [512], type: 'C2C', stream: s1, batch: 2 }),
        cache.get({ shape: [256], type: 'C2C', stream: s1 }),
        cache.get({ shape: [512], type: 'C2C', stream: s1, istride: 2 }),
      ];
      expect(new Set([a, ...others]).size).toBe(5);
      expect([cache.hits, cache.misses, cache.size]).toEqual([3, 5, 5]);
      cache.clear();
      expect(cache.size).toBe(0);
      expect([a, ...others].every((p) => p.disposed)).toBe(true);
      using x = DeviceBuffer.alloc('c64', 512);
      expect(() => a.forward(x)).toThrow(/disposed/);
      const fresh = cache.get({ shape: [512], type: 'C2C', stream: s1 });
      expect(fresh).not.toBe(a);
      expect(cache.misses).toBe(6);
    });

    it('keeps at most maxPlans plans: the least recently used is freed, the generation moves, results stay right', async () => {
      using s = new Stream({ label: 'bounded cache' });
      using cache = new FftPlanCache({ maxPlans: 3 });
      const run = async (n: number): Promise<void> => {
        const x = randomF64(2 * n);
        using input = upload('c128', x, s);
        using output = poisoned('c128', n, s);
        cache.get({ shape: [n], type: 'Z2Z' }).forward(input, output, { stream: s });
        expect(relL2(await download(output, s), dft(x, n))).toBeLessThan(DOUBLE);
      };
      await run(64);
      await run(96);
      await run(128);
      const first = cache.get({ shape: [64], type: 'Z2Z' });
      const second = cache.get({ shape: [96], type: 'Z2Z' });
      expect([cache.size, cache.evictions]).toEqual([3, 0]);
      const generation = cache.generation;
      await run(128); // last used, oldest first: 64, 96, 128
      await run(200); // a fourth shape: the least recently used (64) goes
      expect([cache.size, cache.evictions]).toEqual([3, 1]);
      expect(first.disposed).toBe(true);
      expect(second.disposed).toBe(false);
      expect(cache.generation).toBeGreaterThan(generation);
      expect(cache.has({ shape: [64], type: 'Z2Z' })).toBe(false);
      // The 1-D front (basic) drops evicted plans too, and a plan evicted there is planned again, right.
      for (const n of [64, 96, 128, 200, 256, 64]) {
        const x = randomF64(2 * n);
        using input = upload('c128', x, s);
        using output = poisoned('c128', n, s);
        cache.basic(Device.get(0).context, 'Z2Z', n, 1).forward(input, output, { stream: s });
        expect(relL2(await download(output, s), dft(x, n))).toBeLessThan(DOUBLE);
      }
      expect(cache.size).toBe(3);
      expect(cache.evictions).toBeGreaterThanOrEqual(4);
      expect(() => new FftPlanCache({ maxPlans: 0 })).toThrow(
        'FftPlanCache maxPlans must be a positive integer, got 0',
      );
    });

    it('one plan runs on several streams at once, each with its own work area, every result right', async () => {
      const n = 1 << 16;
      const batch = 8;
      using plan = FftPlan.create({ shape: [n], type: 'Z2Z', batch });
      const streams = [new Stream({ label: 'a' }), new Stream({ label: 'b' }), new Stream({ label: 'c' })];
      try {
        const inputs = streams.map(() => randomF64(2 * n * batch));
        const outs = streams.map((s, i) => {
          const dx = upload('c128', inputs[i]!, s);
          const out = poisoned('c128', n * batch, s);
          // Each transform is told its stream: the plan switches stream and work area per call.
          plan.forward(dx, out, { stream: s });
          plan.inverse(out, dx, { stream: s });
          return { dx, out };
        });
        for (let i = 0; i < streams.length; i++) {
          expect(relL2(await download(outs[i]!.dx, streams[i]!), scaled(inputs[i]!, n))).toBeLessThan(DOUBLE);
          outs[i]!.dx.dispose();
          outs[i]!.out.dispose();
        }
      } finally {
        for (const s of streams) s.dispose();
      }
    });

    it('rejects wrong element types, missing directions and short buffers before calling cuFFT', () => {
      using c2c = FftPlan.create({ shape: [512], type: 'C2C' });
      using z = DeviceBuffer.alloc('c128', 512);
      using small = DeviceBuffer.alloc('c64', 100);
      using big = DeviceBuffer.alloc('c64', 512);
      expect(() => c2c.forward(z as never)).toThrow(/must hold c64, not c128/);
      expect(() => c2c.forward(small)).toThrow(/holds 100 c64 elements, the plan reads 512/);
      expect(() => c2c.forward(big, small)).toThrow(/holds 100 c64 elements, the plan writes 512/);
      using twice = DeviceBuffer.alloc('c64', 1024);
      expect(() => c2c.forward(twice.view(0, 512), twice.view(100, 512))).toThrow(/overlap/);

      using r2c = FftPlan.create({ shape: [512], type: 'R2C' });
      using real = DeviceBuffer.alloc('f32', 512);
      using half = DeviceBuffer.alloc('c64', 257);
      expect(() => (r2c as FftPlan).inverse(half, real)).toThrow(/R2C plan only transforms forward/);
      expect(() => r2c.forward(real)).toThrow(/needs an output buffer of c64/);
      expect(() => r2c.forward(real, z as never)).toThrow(/must hold c64, not c128/);

      using c2r = FftPlan.create({ shape: [512], type: 'C2R' });
      expect(() => (c2r as FftPlan).forward(real, half)).toThrow(/C2R plan only transforms inverse/);
      expect(() => c2r.inverse(real as never, half as never)).toThrow(/must hold c64, not f32/);
    });

    it('fft(): one-call in-place complex FFT through the shared plan cache', async () => {
      using s = new Stream();
      const n = 4096;
      const x = randomF64(2 * n * 2);
      using dx = upload('c128', x, s);
      fft(dx, { stream: s, batch: 2 });
      expect(relL2(await download(dx, s), batchedDft(x, n, 2))).toBeLessThan(DOUBLE);
      fft(dx, { stream: s, batch: 2, inverse: true });
      expect(relL2(await download(dx, s), scaled(x, n))).toBeLessThan(DOUBLE);
      expect(fftPlans.size).toBe(1);
      fftPlans.clear();
    });

    it('plans of every type can be created and disposed repeatedly', () => {
      const types: FftType[] = ['C2C', 'R2C', 'C2R', 'Z2Z', 'D2Z', 'Z2D'];
      for (let i = 0; i < 20; i++)
        for (const type of types) FftPlan.create({ shape: [64, 64], type, batch: 2 }).dispose();
    });
  },
);
