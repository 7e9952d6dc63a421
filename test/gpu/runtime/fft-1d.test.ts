// cuFFT 1-D plans of every type against float64 CPU DFTs (fresh random inputs, poisoned outputs).
import FFT from 'fft.js';
import { describe, expect, it } from 'vitest';
import { FftPlan } from '../../../src/runtime/fft/plan.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { randomF64 } from '../helpers.js';
import {
  batchedDft,
  complexFromReal,
  halfSpectra,
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
  `cuFFT plans: 1-D transforms${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
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
  },
);
