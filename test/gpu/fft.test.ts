import FFT from 'fft.js';
import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../src/runtime/device-buffer.js';
import { FftPlan, FftPlanCache } from '../../src/runtime/fft.js';
import { Stream } from '../../src/runtime/stream.js';
import { gpu } from './gpu-available.js';
import { randomF64 } from './helpers.js';

/** Forward DFT of interleaved complex data in float64: fft.js for powers of two, a direct sum otherwise. */
function dft(x: Float64Array, n: number, inverse = false): Float64Array {
  if ((n & (n - 1)) === 0 && n >= 4) {
    const f = new FFT(n);
    const out = f.createComplexArray() as number[];
    if (inverse) f.inverseTransform(out, Array.from(x));
    else f.transform(out, Array.from(x));
    // fft.js normalizes its inverse; cuFFT does not.
    return Float64Array.from(out, (v) => (inverse ? v * n : v));
  }
  const out = new Float64Array(2 * n);
  const sign = inverse ? 1 : -1;
  for (let k = 0; k < n; k++) {
    let re = 0;
    let im = 0;
    for (let j = 0; j < n; j++) {
      const a = (sign * 2 * Math.PI * ((j * k) % n)) / n;
      const c = Math.cos(a);
      const s = Math.sin(a);
      re += x[2 * j]! * c - x[2 * j + 1]! * s;
      im += x[2 * j]! * s + x[2 * j + 1]! * c;
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
  return out;
}

function relL2(actual: ArrayLike<number>, expected: ArrayLike<number>, count = expected.length): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < count; i++) {
    num += (actual[i]! - expected[i]!) ** 2;
    den += expected[i]! ** 2;
  }
  return Math.sqrt(num / den);
}

function batchedDft(x: Float64Array, n: number, batch: number, inverse = false): Float64Array {
  const out = new Float64Array(2 * n * batch);
  for (let b = 0; b < batch; b++) out.set(dft(x.subarray(2 * n * b, 2 * n * (b + 1)), n, inverse), 2 * n * b);
  return out;
}

describe.skipIf(!gpu.available)(`cuFFT plans${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  for (const n of [4096, 1155, 1000]) {
    it(`C2C and Z2Z match a float64 CPU FFT (n=${n}, batch 4) forward and inverse`, async () => {
      const batch = 4;
      const x = randomF64(2 * n * batch);
      const expected = batchedDft(x, n, batch);
      using s = new Stream();
      using z = DeviceBuffer.from('c128', x);
      using zplan = FftPlan.create({ shape: [n], type: 'Z2Z', batch, stream: s });
      using zout = DeviceBuffer.alloc('c128', n * batch);
      zout.memset(0xff, { width: 8 });
      zplan.forward(z, zout);
      await s.done();
      expect(relL2(zout.read(), expected)).toBeLessThan(1e-12);
      zplan.inverse(zout);
      await s.done();
      const back = zout.read();
      expect(relL2(back, Float64Array.from(x, (v) => v * n))).toBeLessThan(1e-12);

      using c = DeviceBuffer.from('c64', Float32Array.from(x));
      using cplan = FftPlan.create({ shape: [n], type: 'C2C', batch, stream: s });
      cplan.forward(c);
      await s.done();
      expect(relL2(c.read(), batchedDft(Float64Array.from(Float32Array.from(x)), n, batch))).toBeLessThan(1e-5);
    });
  }

  it('R2C/C2R and D2Z/Z2D keep the n/2+1 non-redundant bins', async () => {
    const n = 1536;
    const real = randomF64(n);
    const complex = new Float64Array(2 * n);
    real.forEach((v, i) => (complex[2 * i] = v));
    const full = dft(complex, n);
    const half = full.subarray(0, 2 * (n / 2 + 1));
    using s = new Stream();
    using dr = DeviceBuffer.from('f64', real);
    using dz = DeviceBuffer.alloc('c128', n / 2 + 1);
    using d2z = FftPlan.create({ shape: [n], type: 'D2Z', stream: s });
    d2z.forward(dr, dz);
    await s.done();
    expect(relL2(dz.read(), half)).toBeLessThan(1e-12);
    using z2d = FftPlan.create({ shape: [n], type: 'Z2D', stream: s });
    using back = DeviceBuffer.alloc('f64', n);
    z2d.inverse(dz, back);
    await s.done();
    expect(relL2(back.read(), Float64Array.from(real, (v) => v * n))).toBeLessThan(1e-12);
    expect(() => d2z.inverse(dr, dz)).toThrow(/only runs forward/);

    using fr = DeviceBuffer.from('f32', Float32Array.from(real));
    using fc = DeviceBuffer.alloc('c64', n / 2 + 1);
    using r2c = FftPlan.create({ shape: [n], type: 'R2C', stream: s });
    r2c.forward(fr, fc);
    await s.done();
    expect(relL2(fc.read(), half)).toBeLessThan(1e-5);
    using c2r = FftPlan.create({ shape: [n], type: 'C2R', stream: s });
    using fback = DeviceBuffer.alloc('f32', n);
    c2r.inverse(fc, fback);
    await s.done();
    expect(relL2(fback.read(), Float64Array.from(real, (v) => v * n))).toBeLessThan(1e-5);
  });

  it('2D plans equal row then column transforms', async () => {
    const rows = 48;
    const cols = 64;
    const x = randomF64(2 * rows * cols);
    const byRows = batchedDft(x, cols, rows);
    const expected = new Float64Array(x.length);
    for (let c = 0; c < cols; c++) {
      const col = new Float64Array(2 * rows);
      for (let r = 0; r < rows; r++) col.set(byRows.subarray(2 * (r * cols + c), 2 * (r * cols + c) + 2), 2 * r);
      const f = dft(col, rows);
      for (let r = 0; r < rows; r++) expected.set(f.subarray(2 * r, 2 * r + 2), 2 * (r * cols + c));
    }
    using d = DeviceBuffer.from('c128', x);
    using plan = FftPlan.create({ shape: [rows, cols], type: 'Z2Z' });
    plan.forward(d);
    expect(relL2(d.read(), expected)).toBeLessThan(1e-12);
  });

  it('batched plans with strides and distances (interleaved signals)', () => {
    const n = 256;
    const batch = 3;
    const x = randomF64(2 * n * batch);
    // Element j of signal b sits at j*batch + b: stride = batch, distance = 1.
    const interleaved = new Float64Array(x.length);
    for (let b = 0; b < batch; b++) for (let j = 0; j < n; j++) interleaved.set(x.subarray(2 * (b * n + j), 2 * (b * n + j) + 2), 2 * (j * batch + b));
    using d = DeviceBuffer.from('c128', interleaved);
    using plan = FftPlan.create({ shape: [n], type: 'Z2Z', batch, istride: batch, idist: 1, ostride: batch, odist: 1, inembed: [n], onembed: [n] });
    plan.forward(d);
    const got = d.read();
    const expected = batchedDft(x, n, batch);
    const regrouped = new Float64Array(x.length);
    for (let b = 0; b < batch; b++) for (let j = 0; j < n; j++) regrouped.set(got.subarray(2 * (j * batch + b), 2 * (j * batch + b) + 2), 2 * (b * n + j));
    expect(relL2(regrouped, expected)).toBeLessThan(1e-12);
  });

  it('caches plans by shape, type, batch, layout and stream, and checks buffers', () => {
    const cache = new FftPlanCache();
    using s1 = new Stream();
    using s2 = new Stream();
    const a = cache.get({ shape: [512], type: 'C2C', stream: s1 });
    expect(cache.get({ shape: [512], type: 'C2C', stream: s1 })).toBe(a);
    expect(cache.get({ shape: [512], type: 'C2C', stream: s2 })).not.toBe(a);
    expect(cache.get({ shape: [512], type: 'Z2Z', stream: s1 })).not.toBe(a);
    expect(cache.hits).toBe(1);
    expect(cache.size).toBe(3);
    using wrong = DeviceBuffer.alloc('c128', 512);
    expect(() => a.forward(wrong)).toThrow(/must hold c64/);
    using small = DeviceBuffer.alloc('c64', 100);
    expect(() => a.forward(small)).toThrow(/holds 100 elements/);
    expect(a.workAreaBytes).toBeGreaterThanOrEqual(0);
    cache.clear();
    expect(a.disposed).toBe(true);
  });
});
