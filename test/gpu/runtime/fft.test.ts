import FFT from 'fft.js';
import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Device } from '../../../src/runtime/device.js';
import type { DType, HostArray } from '../../../src/runtime/memory/dtype.js';
import { FftPlan } from '../../../src/runtime/fft/plan.js';
import { fft, FftPlanCache, fftPlans } from '../../../src/runtime/fft/plan-cache.js';
import type { FftType } from '../../../src/runtime/fft/geometry.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { randomF64 } from '../helpers.js';

// ---- CPU references, all in float64 ---------------------------------------------------------

const isPow2 = (n: number): boolean => n >= 2 && (n & (n - 1)) === 0;
const twiddles = new Map<number, { cos: Float64Array; sin: Float64Array }>();

/**
 * DFT of one interleaved complex signal (length 2n): forward e^(-2πi jk/n), inverse e^(+2πi jk/n)
 * unnormalized like cuFFT. fft.js (radix-4) for powers of two, a direct O(n²) sum otherwise.
 */
function dft(x: Float64Array, n: number, inverse = false): Float64Array {
  if (isPow2(n)) {
    const f = new FFT(n);
    const out = new Float64Array(2 * n);
    if (inverse) {
      f.inverseTransform(out, x);
      for (let i = 0; i < out.length; i++) out[i]! *= n; // fft.js divides its inverse by n (exact: n is a power of two)
    } else f.transform(out, x);
    return out;
  }
  let t = twiddles.get(n);
  if (!t) {
    t = { cos: new Float64Array(n), sin: new Float64Array(n) };
    for (let k = 0; k < n; k++) {
      t.cos[k] = Math.cos((2 * Math.PI * k) / n);
      t.sin[k] = Math.sin((2 * Math.PI * k) / n);
    }
    twiddles.set(n, t);
  }
  const sign = inverse ? 1 : -1;
  const out = new Float64Array(2 * n);
  for (let k = 0; k < n; k++) {
    let re = 0;
    let im = 0;
    let idx = 0; // (j·k) mod n
    for (let j = 0; j < n; j++) {
      const c = t.cos[idx]!;
      const s = sign * t.sin[idx]!;
      const a = x[2 * j]!;
      const b = x[2 * j + 1]!;
      re += a * c - b * s;
      im += a * s + b * c;
      idx += k;
      if (idx >= n) idx -= n;
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
  return out;
}

/** `batch` contiguous signals of n complex elements each. */
function batchedDft(x: Float64Array, n: number, batch: number, inverse = false): Float64Array {
  const out = new Float64Array(2 * n * batch);
  for (let b = 0; b < batch; b++) out.set(dft(x.subarray(2 * n * b, 2 * n * (b + 1)), n, inverse), 2 * n * b);
  return out;
}

/** The DFT along one axis of a row-major complex array of `shape` (last axis fastest). */
function dftAlong(x: Float64Array, shape: readonly number[], axis: number, inverse = false): Float64Array {
  const n = shape[axis]!;
  const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const out = new Float64Array(x.length);
  const line = new Float64Array(2 * n);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      for (let j = 0; j < n; j++) {
        const at = 2 * ((o * n + j) * inner + i);
        line[2 * j] = x[at]!;
        line[2 * j + 1] = x[at + 1]!;
      }
      const f = dft(line, n, inverse);
      for (let j = 0; j < n; j++) {
        const at = 2 * ((o * n + j) * inner + i);
        out[at] = f[2 * j]!;
        out[at + 1] = f[2 * j + 1]!;
      }
    }
  }
  return out;
}

/** The multi-dimensional DFT: one axis after the other (rows, then columns, ...). */
function dftNd(x: Float64Array, shape: readonly number[], inverse = false): Float64Array {
  let y = x;
  for (let axis = shape.length - 1; axis >= 0; axis--) y = dftAlong(y, shape, axis, inverse);
  return y;
}

/** Interleaved complex (im = 0) from reals. */
function complexFromReal(x: Float64Array): Float64Array {
  const c = new Float64Array(2 * x.length);
  for (let i = 0; i < x.length; i++) c[2 * i] = x[i]!;
  return c;
}

/** The first n/2+1 bins of each of `batch` spectra of length n (what R2C/D2Z produce). */
function halfSpectra(full: Float64Array, n: number, batch: number): Float64Array {
  const h = Math.floor(n / 2) + 1;
  const out = new Float64Array(2 * h * batch);
  for (let b = 0; b < batch; b++) out.set(full.subarray(2 * n * b, 2 * (n * b + h)), 2 * h * b);
  return out;
}

/** ‖actual − expected‖₂ / ‖expected‖₂ (NaN, hence failing, where the GPU left poison). */
function relL2(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < expected.length; i++) {
    num += (actual[i]! - expected[i]!) ** 2;
    den += expected[i]! ** 2;
  }
  return Math.sqrt(num / den);
}

const scaled = (x: ArrayLike<number>, k: number): Float64Array =>
  Float64Array.from(x as ArrayLike<number>, (v) => v * k);
/** float64 values as float32 would hold them, back in float64: the exact input of a single-precision transform. */
const asF32 = (x: Float64Array): Float64Array => Float64Array.from(Float32Array.from(x));

// ---- device helpers: every copy and poison on the test's stream, so nothing races it ------------

function upload<T extends DType>(dtype: T, data: HostArray<T>, s: Stream): DeviceBuffer<T> {
  const components = dtype === 'c64' || dtype === 'c128' ? 2 : 1;
  return DeviceBuffer.alloc(dtype, data.length / components).write(data, { stream: s });
}

/** A buffer of NaNs (all bits set), so an element the transform did not write is caught. */
function poisoned<T extends DType>(dtype: T, length: number, s: Stream): DeviceBuffer<T> {
  return DeviceBuffer.alloc(dtype, length).memset(0xffffffff, { width: 32, stream: s });
}

async function download<T extends DType>(b: DeviceBuffer<T>, s: Stream): Promise<HostArray<T>> {
  await s.done();
  return b.read();
}

const SINGLE = 1e-5;
const DOUBLE = 1e-12;

describe.skipIf(!gpu.available)(`cuFFT plans${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  const complexSizes = [
    { n: 4096, batch: 8 },
    { n: 1000, batch: 4 },
    { n: 1155, batch: 3 }, // 3·5·7·11
  ];

  for (const { n, batch } of complexSizes) {
    it(`C2C n=${n} batch ${batch}: forward matches a float64 CPU FFT, inverse(forward(x)) = N·x`, async () => {
      using s = new Stream({ label: `C2C ${n}` });
      const x = asF32(randomF64(2 * n * batch));
      using plan = FftPlan.create({ shape: [n], type: 'C2C', batch, stream: s });
      expect(plan.stream).toBe(s);
      using dx = upload('c64', Float32Array.from(x), s);
      using spectrum = poisoned('c64', n * batch, s);
      plan.forward(dx, spectrum);
      const got = await download(spectrum, s);
      expect(relL2(got, batchedDft(x, n, batch))).toBeLessThan(SINGLE);

      using back = poisoned('c64', n * batch, s);
      plan.inverse(spectrum, back);
      expect(relL2(await download(back, s), scaled(x, n))).toBeLessThan(SINGLE);
    });

    it(`Z2Z n=${n} batch ${batch}: forward out of place, inverse in place, double precision`, async () => {
      using s = new Stream({ label: `Z2Z ${n}` });
      const x = randomF64(2 * n * batch);
      using plan = FftPlan.create({ shape: [n], type: 'Z2Z', batch, stream: s });
      using dx = upload('c128', x, s);
      using spectrum = poisoned('c128', n * batch, s);
      plan.forward(dx, spectrum);
      expect(relL2(await download(spectrum, s), batchedDft(x, n, batch))).toBeLessThan(DOUBLE);
      plan.inverse(spectrum); // in place
      expect(relL2(await download(spectrum, s), scaled(x, n))).toBeLessThan(DOUBLE);
    });
  }

  const realSizes = [
    { n: 4096, batch: 2 },
    { n: 1536, batch: 2 },
    { n: 1155, batch: 1 }, // odd: no Nyquist bin
  ];

  for (const { n, batch } of realSizes) {
    const h = Math.floor(n / 2) + 1;

    it(`R2C and C2R n=${n} batch ${batch}: the n/2+1 bins of the CPU FFT, and back to N·x`, async () => {
      using s = new Stream();
      const x = asF32(randomF64(n * batch));
      const half = halfSpectra(batchedDft(complexFromReal(x), n, batch), n, batch);

      using r2c = FftPlan.create({ shape: [n], type: 'R2C', batch, stream: s });
      using dx = upload('f32', Float32Array.from(x), s);
      using spectrum = poisoned('c64', h * batch, s);
      r2c.forward(dx, spectrum);
      expect(relL2(await download(spectrum, s), half)).toBeLessThan(SINGLE);

      // C2R from the CPU's spectrum, not the GPU's: each direction is checked on its own.
      using c2r = FftPlan.create({ shape: [n], type: 'C2R', batch, stream: s });
      using cpuSpectrum = upload('c64', Float32Array.from(half), s);
      using back = poisoned('f32', n * batch, s);
      c2r.inverse(cpuSpectrum, back);
      expect(relL2(await download(back, s), scaled(x, n))).toBeLessThan(SINGLE);
    });

    it(`D2Z and Z2D n=${n} batch ${batch}: double precision`, async () => {
      using s = new Stream();
      const x = randomF64(n * batch);
      const half = halfSpectra(batchedDft(complexFromReal(x), n, batch), n, batch);

      using d2z = FftPlan.create({ shape: [n], type: 'D2Z', batch, stream: s });
      using dx = upload('f64', x, s);
      using spectrum = poisoned('c128', h * batch, s);
      d2z.forward(dx, spectrum);
      expect(relL2(await download(spectrum, s), half)).toBeLessThan(DOUBLE);

      using z2d = FftPlan.create({ shape: [n], type: 'Z2D', batch, stream: s });
      using cpuSpectrum = upload('c128', half, s);
      using back = poisoned('f64', n * batch, s);
      z2d.inverse(cpuSpectrum, back);
      expect(relL2(await download(back, s), scaled(x, n))).toBeLessThan(DOUBLE);
    });
  }

  it('2D plans (64×48) equal row DFTs then column DFTs, in single and double precision', async () => {
    const shape = [64, 48];
    const N = 64 * 48;
    using s = new Stream();
    const x = randomF64(2 * N);
    const expected = dftNd(x, shape);
    // the reference itself: rows (48, direct sum) then columns (64, fft.js)
    const byRows = batchedDft(x, 48, 64);
    expect(relL2(dftAlong(byRows, shape, 0), expected)).toBe(0);

    using z = FftPlan.create({ shape, type: 'Z2Z', stream: s });
    using dz = upload('c128', x, s);
    using zout = poisoned('c128', N, s);
    z.forward(dz, zout);
    expect(relL2(await download(zout, s), expected)).toBeLessThan(DOUBLE);
    z.inverse(zout);
    expect(relL2(await download(zout, s), scaled(x, N))).toBeLessThan(DOUBLE);

    const x32 = asF32(x);
    using c = FftPlan.create({ shape, type: 'C2C', stream: s });
    using dc = upload('c64', Float32Array.from(x32), s);
    c.forward(dc); // in place
    expect(relL2(await download(dc, s), dftNd(x32, shape))).toBeLessThan(SINGLE);
  });

  it('2D real transforms (D2Z 64×48) keep 64×25 bins', async () => {
    const shape = [64, 48];
    using s = new Stream();
    const x = randomF64(64 * 48);
    const full = dftNd(complexFromReal(x), shape);
    const expected = new Float64Array(2 * 64 * 25);
    for (let r = 0; r < 64; r++) expected.set(full.subarray(2 * r * 48, 2 * (r * 48 + 25)), 2 * r * 25);
    using plan = FftPlan.create({ shape, type: 'D2Z', stream: s });
    expect(plan.outputElements).toBe(64 * 25);
    using dx = upload('f64', x, s);
    using out = poisoned('c128', 64 * 25, s);
    plan.forward(dx, out);
    expect(relL2(await download(out, s), expected)).toBeLessThan(DOUBLE);
  });

  it('3D batched plans (8×12×10, batch 2) equal DFTs along each axis', async () => {
    const shape = [8, 12, 10];
    const N = 8 * 12 * 10;
    using s = new Stream();
    const x = randomF64(2 * N * 2);
    const expected = new Float64Array(x.length);
    for (let b = 0; b < 2; b++) expected.set(dftNd(x.subarray(2 * N * b, 2 * N * (b + 1)), shape), 2 * N * b);
    using plan = FftPlan.create({ shape, type: 'Z2Z', batch: 2, stream: s });
    using dx = upload('c128', x, s);
    using out = poisoned('c128', 2 * N, s);
    plan.forward(dx, out);
    expect(relL2(await download(out, s), expected)).toBeLessThan(DOUBLE);
  });

  it('batched plans with strides and distances: interleaved signals (stride = batch, distance = 1)', async () => {
    const n = 256;
    const batch = 3;
    using s = new Stream();
    const x = randomF64(2 * n * batch); // signal b is x[b*n .. (b+1)*n)
    // Element j of signal b sits at j*batch + b.
    const interleaved = new Float64Array(x.length);
    for (let b = 0; b < batch; b++)
      for (let j = 0; j < n; j++)
        interleaved.set(x.subarray(2 * (b * n + j), 2 * (b * n + j) + 2), 2 * (j * batch + b));
    using plan = FftPlan.create({
      shape: [n],
      type: 'Z2Z',
      batch,
      istride: batch,
      idist: 1,
      ostride: batch,
      odist: 1,
      stream: s,
    });
    expect([plan.inputElements, plan.outputElements]).toEqual([n * batch, n * batch]);
    using dx = upload('c128', interleaved, s);
    using out = poisoned('c128', n * batch, s);
    plan.forward(dx, out);
    const got = await download(out, s);
    const regrouped = new Float64Array(x.length);
    for (let b = 0; b < batch; b++)
      for (let j = 0; j < n; j++)
        regrouped.set(got.subarray(2 * (j * batch + b), 2 * (j * batch + b) + 2), 2 * (b * n + j));
    expect(relL2(regrouped, batchedDft(x, n, batch))).toBeLessThan(DOUBLE);
  });

  it('batched plans with padded input rows (idist 1024 for n=1000) into packed output', async () => {
    const n = 1000;
    const batch = 5;
    const idist = 1024;
    using s = new Stream();
    const padded = asF32(randomF64(2 * idist * batch)); // the padding holds random values the plan must ignore
    const packed = new Float64Array(2 * n * batch);
    for (let b = 0; b < batch; b++) packed.set(padded.subarray(2 * idist * b, 2 * (idist * b + n)), 2 * n * b);
    using plan = FftPlan.create({ shape: [n], type: 'C2C', batch, idist, stream: s });
    expect([plan.inputElements, plan.outputElements]).toEqual([(batch - 1) * idist + n, n * batch]);
    using dx = upload('c64', Float32Array.from(padded), s);
    using out = poisoned('c64', n * batch, s);
    plan.forward(dx, out);
    expect(relL2(await download(out, s), batchedDft(packed, n, batch))).toBeLessThan(SINGLE);
  });

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
    expect(() => new FftPlanCache({ maxPlans: 0 })).toThrow('FftPlanCache maxPlans must be a positive integer, got 0');
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
});
