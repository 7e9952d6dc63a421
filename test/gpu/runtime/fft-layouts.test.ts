// cuFFT 2-D, 3-D, strided and padded plans against float64 CPU DFTs along each axis.
import { describe, expect, it } from 'vitest';
import { FftPlan } from '../../../src/runtime/fft/plan.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { randomF64 } from '../helpers.js';
import {
  batchedDft,
  dftAlong,
  dftNd,
  complexFromReal,
  relL2,
  scaled,
  asF32,
  upload,
  poisoned,
  download,
  SINGLE,
  DOUBLE,
} from './fft-reference.js';

describe.skipIf(!gpu.available)(
  `cuFFT plans: several dimensions and layouts${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
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
  },
);
