import { beforeAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../src/runtime/device-buffer.js';
import { loadBasicKernels, loadBatchKernels, type BasicKernels, type BatchKernels } from '../../src/runtime/kernels/index.js';
import { Stream } from '../../src/runtime/stream.js';
import { gpu } from './gpu-available.js';
import { randomF32, randomF64 } from './helpers.js';

describe.skipIf(!gpu.available)(`typed launchers over the built fatbins${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let basic!: BasicKernels;
  let batch!: BatchKernels;
  beforeAll(() => {
    basic = loadBasicKernels();
    batch = loadBatchKernels();
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
    const got = dy.read();
    const got64 = dy64.read();
    const want = Float64Array.from(y, (v, i) => Math.fround(a) * x[i]! + v);
    const want64 = Float64Array.from(y64, (v, i) => a * x64[i]! + v);
    let worst = 0;
    for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
    expect(worst).toBeLessThan(1e-5);
    // FMA on the GPU rounds once; allow a few ulps of the terms (cancellation makes relative error meaningless).
    let worstUlps = 0;
    for (let i = 0; i < n; i++) worstUlps = Math.max(worstUlps, Math.abs(got64[i]! - want64[i]!) / (2.2e-16 * (Math.abs(a * x64[i]!) + Math.abs(y64[i]!))));
    expect(worstUlps).toBeLessThanOrEqual(2);
  });

  it('reduces, fills and writes indices', async () => {
    const n = 333_333;
    using s = new Stream();
    const x = randomF64(n);
    using dx = DeviceBuffer.from('f64', x);
    using sum = DeviceBuffer.alloc('f64', 1);
    sum.memset(0, { stream: s });
    basic.reduce_sum_f64({ grid: 256, block: 256, stream: s }, dx, sum, n);
    using idx = DeviceBuffer.alloc('i32', n);
    basic.write_index_i32({ grid: 512, block: 256, stream: s }, idx, n);
    using f = DeviceBuffer.alloc('f32', n);
    const v = Math.random();
    basic.fill_f32({ grid: 512, block: 256, stream: s }, f, v, n);
    await s.done();
    const cpu = x.reduce((acc, e) => acc + e, 0);
    expect(Math.abs(sum.read()[0]! - cpu)).toBeLessThan(1e-9 * n);
    expect(idx.read().every((e, i) => e === i)).toBe(true);
    expect(f.read().every((e) => e === Math.fround(v))).toBe(true);
  });

  it('batched gradient, lerp and slerp match float64 CPU references', async () => {
    const dim = 16;
    const count = 500;
    const h = 1e-2;
    using s = new Stream();
    const x = randomF32(dim * count);
    const b = randomF32(dim * count);
    const t = Float32Array.from({ length: count }, () => Math.random());
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
    const g = grad.read();
    const l = lerp.read();
    const sl = slerp.read();
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
        // The exact derivative of f with respect to v_j.
        const exact = Math.cos(v[j]!) * v[(j + 1) % dim]! + Math.sin(v[(j - 1 + dim) % dim]!);
        expect(Math.abs(g[i * dim + j]! - exact)).toBeLessThan(2e-3);
        expect(Math.abs(l[i * dim + j]! - (v[j]! + tt * (w[j]! - v[j]!)))).toBeLessThan(1e-6);
        const want = omega < 1e-4 ? v[j]! + tt * (w[j]! - v[j]!) : (Math.sin((1 - tt) * omega) * v[j]! + Math.sin(tt * omega) * w[j]!) / Math.sin(omega);
        expect(Math.abs(sl[i * dim + j]! - want)).toBeLessThan(1e-4);
      }
    }
  });
});
