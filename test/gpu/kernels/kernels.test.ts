import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { BATCH_SIGNATURES, loadBatchKernels, type BatchKernels } from '../../../src/kernels/index.js';
import { BASIC_SIGNATURES, loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { maxRelativeError, poison, randomF32, randomF64 } from '../helpers.js';

/** f(v) = sum_j sin(v_j) * v_{(j+1) mod dim}, the objective of batch.cu's gradient_f32, in float64. */
function objective(v: Float64Array): number {
  let acc = 0;
  for (let j = 0; j < v.length; j++) acc += Math.sin(v[j]!) * v[(j + 1) % v.length]!;
  return acc;
}

describe.skipIf(!gpu.available)(
  `typed launchers over the built fatbins${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let basic!: BasicKernels;
    let batch!: BatchKernels;
    beforeAll(() => {
      basic = loadBasicKernels();
      batch = loadBatchKernels();
    });
    afterAll(() => {
      basic?.module.dispose();
      batch?.module.dispose();
    });

    it('loads both fatbins with every kernel the launchers bind', () => {
      expect(new Set(basic.module.kernelNames())).toEqual(new Set(Object.keys(BASIC_SIGNATURES)));
      expect(new Set(batch.module.kernelNames())).toEqual(new Set(Object.keys(BATCH_SIGNATURES)));
    });

    it('saxpy in f32 and f64 matches a float64 CPU reference', async () => {
      const n = 1_000_007;
      using s = new Stream();
      const cfg = { grid: 1024, block: 256, stream: s };
      const x = randomF32(n);
      const y = randomF32(n);
      const a = Math.random() * 4 - 2;
      using dx = DeviceBuffer.from('f32', x);
      using dy = DeviceBuffer.from('f32', y);
      basic.saxpy_f32(cfg, n, a, dx, dy);
      const x64 = randomF64(n);
      const y64 = randomF64(n);
      using dx64 = DeviceBuffer.from('f64', x64);
      using dy64 = DeviceBuffer.from('f64', y64);
      basic.saxpy_f64(cfg, n, a, dx64, dy64);
      await s.done();
      // Read into poisoned copies: an element the kernel did not write stays NaN and fails below.
      const got = dy.read(poison(new Float32Array(n)));
      const got64 = dy64.read(poison(new Float64Array(n)));
      const af = Math.fround(a);
      // f32: one rounding of a*x+y (FMA) or two; bound by float32 ulps of the terms.
      let worstF32 = 0;
      for (let i = 0; i < n; i++) {
        const want = af * x[i]! + y[i]!;
        const err = Math.abs(got[i]! - want) / (2 ** -23 * (Math.abs(af * x[i]!) + Math.abs(y[i]!)) + 1e-38);
        if (!(err <= worstF32)) worstF32 = Number.isNaN(err) ? Infinity : err;
      }
      expect(worstF32).toBeLessThanOrEqual(2);
      // f64: FMA on the GPU rounds once; allow a few ulps of the terms (cancellation makes relative error meaningless).
      let worstUlps = 0;
      for (let i = 0; i < n; i++) {
        const err =
          Math.abs(got64[i]! - (a * x64[i]! + y64[i]!)) /
          (2.2e-16 * (Math.abs(a * x64[i]!) + Math.abs(y64[i]!)) + 1e-300);
        if (!(err <= worstUlps)) worstUlps = Number.isNaN(err) ? Infinity : err;
      }
      expect(worstUlps).toBeLessThanOrEqual(2);
    });

    it('scale and add match the CPU', async () => {
      const n = 100_003;
      using s = new Stream();
      const x = randomF32(n);
      const b = randomF32(n);
      const a = Math.random() * 3;
      using dx = DeviceBuffer.from('f32', x);
      using db = DeviceBuffer.from('f32', b);
      using scaled = DeviceBuffer.alloc('f32', n);
      using sum = DeviceBuffer.alloc('f32', n);
      basic.scale_f32({ grid: 128, block: 256, stream: s }, scaled, dx, a, n);
      basic.add_f32({ grid: 128, block: 256, stream: s }, sum, dx, db, n);
      await s.done();
      // Both are one float32 rounding of the exact result.
      expect(
        maxRelativeError(
          scaled.read(poison(new Float32Array(n))),
          Float64Array.from(x, (v) => Math.fround(a) * v),
        ),
      ).toBeLessThanOrEqual(2 ** -24);
      const gotSum = sum.read(poison(new Float32Array(n)));
      expect(gotSum.every((v, i) => v === Math.fround(x[i]! + b[i]!))).toBe(true);
    });

    it('fills f32 and f64 and writes indices', async () => {
      const n = 333_333;
      using s = new Stream();
      using f = DeviceBuffer.alloc('f32', n);
      using d = DeviceBuffer.alloc('f64', n);
      using idx = DeviceBuffer.alloc('i32', n);
      const v = Math.random();
      const w = Math.random() * 1e10;
      basic.fill_f32({ grid: 512, block: 256, stream: s }, f, v, n);
      basic.fill_f64({ grid: 512, block: 256, stream: s }, d, w, n);
      basic.write_index_i32({ grid: 512, block: 256, stream: s }, idx, n);
      await s.done();
      expect(f.read(poison(new Float32Array(n))).every((e) => e === Math.fround(v))).toBe(true);
      expect(d.read(poison(new Float64Array(n))).every((e) => e === w)).toBe(true);
      expect(idx.read(new Int32Array(n).fill(-1)).every((e, i) => e === i)).toBe(true);
    });

    it('reduces f64 and f32 data to a float64 sum, for power-of-two and other block sizes', async () => {
      const n = 1_000_003;
      using s = new Stream();
      const x = randomF64(n);
      const xf = randomF32(n);
      using dx = DeviceBuffer.from('f64', x);
      using dxf = DeviceBuffer.from('f32', xf);
      const cpu = x.reduce((acc, e) => acc + e, 0);
      const cpuF = xf.reduce((acc, e) => acc + e, 0);
      for (const block of [256, 1024, 96, 1000, 1]) {
        using sum = DeviceBuffer.alloc('f64', 1);
        using sumF = DeviceBuffer.alloc('f64', 1);
        sum.memset(0, { stream: s });
        sumF.memset(0, { stream: s });
        basic.reduce_sum_f64({ grid: 264, block, stream: s }, dx, sum, n);
        basic.reduce_sum_f32_to_f64({ grid: 264, block, stream: s }, dxf, sumF, n);
        await s.done();
        // Sums of a million values in [-1, 1) in another order differ by about 1e-10; one element lost would be about 0.5.
        expect(Math.abs(sum.read()[0]! - cpu), `f64, block ${block}`).toBeLessThan(1e-7);
        expect(Math.abs(sumF.read()[0]! - cpuF), `f32 -> f64, block ${block}`).toBeLessThan(1e-7);
      }
    });

    it('spin_ns keeps the GPU busy for about the time asked; k4 writes nothing', async () => {
      using s = new Stream();
      await s.done();
      const t0 = performance.now();
      basic.spin_ns({ grid: 1, block: 1, stream: s }, 20_000_000n);
      await s.done();
      const ms = performance.now() - t0;
      expect(ms).toBeGreaterThanOrEqual(19);
      expect(ms).toBeLessThan(1000);
      using a = DeviceBuffer.from('f32', new Float32Array([7]));
      using b = DeviceBuffer.from('f32', new Float32Array([3]));
      basic.k4({ grid: 4, block: 128, stream: s }, a, b, 1000, 2);
      await s.done();
      expect(a.read()[0]).toBe(7);
    });

    it('batched gradient, lerp and slerp match float64 CPU references', async () => {
      const dim = 16;
      const count = 500;
      const h = 1e-2;
      using s = new Stream();
      const x = randomF32(dim * count);
      const b = randomF32(dim * count);
      const t = Float32Array.from({ length: count }, () => Math.random());
      // A few vectors nearly parallel to their partner: slerp falls back to lerp there.
      for (const i of [3, 77]) for (let j = 0; j < dim; j++) b[i * dim + j] = x[i * dim + j]! * 1.5;
      using dx = DeviceBuffer.from('f32', x);
      using db = DeviceBuffer.from('f32', b);
      using dt = DeviceBuffer.from('f32', t);
      using grad = DeviceBuffer.alloc('f32', dim * count);
      using lerp = DeviceBuffer.alloc('f32', dim * count);
      using slerp = DeviceBuffer.alloc('f32', dim * count);
      batch.gradient_f32({ grid: Math.ceil((dim * count) / 256), block: 256, stream: s }, dx, grad, dim, count, h);
      batch.lerp_f32({ grid: Math.ceil((dim * count) / 256), block: 256, stream: s }, dx, db, dt, lerp, dim, count);
      batch.slerp_f32({ grid: Math.ceil(count / 128), block: 128, stream: s }, dx, db, dt, slerp, dim, count);
      await s.done();
      const g = grad.read(poison(new Float32Array(dim * count)));
      const l = lerp.read(poison(new Float32Array(dim * count)));
      const sl = slerp.read(poison(new Float32Array(dim * count)));
      for (let i = 0; i < count; i++) {
        const v = Float64Array.from(x.subarray(i * dim, (i + 1) * dim));
        const w = Float64Array.from(b.subarray(i * dim, (i + 1) * dim));
        const tt = t[i]!;
        let dot = 0;
        let nv = 0;
        let nw = 0;
        for (let j = 0; j < dim; j++) {
          dot += v[j]! * w[j]!;
          nv += v[j]! ** 2;
          nw += w[j]! ** 2;
        }
        const omega = Math.acos(Math.min(1, Math.max(-1, dot / Math.sqrt(nv * nw))));
        for (let j = 0; j < dim; j++) {
          // The same central difference in float64, and the exact derivative of f with respect to v_j.
          const plus = Float64Array.from(v);
          const minus = Float64Array.from(v);
          plus[j]! += h;
          minus[j]! -= h;
          const fd = (objective(plus) - objective(minus)) / (2 * h);
          const exact = Math.cos(v[j]!) * v[(j + 1) % dim]! + Math.sin(v[(j - 1 + dim) % dim]!);
          // float32 rounding of two sums of 16 terms of size <= 1 (a few 1e-7 each), over 2h = 0.02.
          expect(Math.abs(g[i * dim + j]! - fd), `gradient ${i},${j}`).toBeLessThan(5e-4);
          expect(Math.abs(g[i * dim + j]! - exact), `gradient ${i},${j}`).toBeLessThan(2e-3);
          expect(Math.abs(l[i * dim + j]! - (v[j]! + tt * (w[j]! - v[j]!))), `lerp ${i},${j}`).toBeLessThan(1e-6);
          const want =
            omega < 1e-4
              ? v[j]! + tt * (w[j]! - v[j]!)
              : (Math.sin((1 - tt) * omega) * v[j]! + Math.sin(tt * omega) * w[j]!) / Math.sin(omega);
          expect(Math.abs(sl[i * dim + j]! - want), `slerp ${i},${j}`).toBeLessThan(1e-4);
        }
      }
    });

    it('reports kernel attributes from the driver', () => {
      const saxpy = basic.kernels.saxpy_f32.attributes;
      expect(saxpy.registers).toBeGreaterThan(0);
      expect(saxpy.maxThreadsPerBlock).toBeGreaterThan(0);
      expect(saxpy.maxThreadsPerBlock).toBeLessThanOrEqual(1024);
      // The sm_80 or sm_90 cubin of the fatbin (or JIT-compiled compute_90 PTX on a newer GPU).
      expect(saxpy.binaryVersion).toBeGreaterThanOrEqual(80);
      expect(saxpy.localBytes).toBe(0);
      // block_sum_to's __shared__ double[1024].
      expect(basic.kernels.reduce_sum_f64.attributes.staticSharedBytes).toBeGreaterThanOrEqual(8192);
      expect(basic.kernels.empty.attributes.staticSharedBytes).toBe(0);
      const { blockSize } = basic.kernels.saxpy_f32.suggestedLaunch();
      expect(blockSize).toBeGreaterThan(0);
    });

    it('rejects a wrong argument count with a TypeError before anything is launched', async () => {
      using s = new Stream();
      using f = DeviceBuffer.alloc('f32', 64);
      f.memset(0, { stream: s });
      await s.done();
      const cfg = { grid: 1, block: 64, stream: s };
      // Through the typed launcher (as JavaScript could call it) and through Kernel.launch.
      const untyped = basic.fill_f32 as unknown as (...args: unknown[]) => void;
      expect(() => untyped(cfg, f, 1)).toThrow(TypeError);
      expect(() => untyped(cfg, f, 1, 64, 5)).toThrow(TypeError);
      expect(() => basic.kernels.fill_f32.launch(cfg, f, 1)).toThrow(TypeError);
      // A wrong kind of argument too: a bigint where float is expected.
      expect(() => basic.kernels.fill_f32.launch(cfg, f, 1n, 64)).toThrow(TypeError);
      await s.done();
      expect(f.read().every((e) => e === 0)).toBe(true);
      // The kernel and context are fine afterwards.
      basic.fill_f32(cfg, f, 2, 64);
      await s.done();
      expect(f.read().every((e) => e === 2)).toBe(true);
    });

    it('rejects a block of 2048 threads with a RangeError', () => {
      expect(() => basic.empty({ grid: 1, block: 2048 })).toThrow(RangeError);
      expect(() => basic.empty({ grid: 1, block: [1024, 2] })).toThrow(RangeError);
      expect(() => basic.empty({ grid: 0, block: 32 })).toThrow(RangeError);
    });
  },
);
