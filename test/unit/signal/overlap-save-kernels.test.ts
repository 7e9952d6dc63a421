/**
 * The overlap-save kernels of src/kernels/filter.cu (os_gather, os_product, os_scatter) on the
 * CPU (the g++ emulation), each against its definition, with rows longer than one tile (OS_TILE,
 * 2,048 samples): the bench row's 16,384-point rows take eight tiles each, and the CPU DFTs of the
 * whole-call tests are too slow for rows that long. A row's first tile, its partial last tile, the
 * head (samples before the series) and the tail (after it) all appear. f32 and f64. Skipped, with
 * the reason, where g++ is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { arr, emu, launch, loadEmulatedKernels, typed } from './emulation/emulator.js';

const skip = emu.so ? '' : emu.reason;
const random = (n: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() - 0.4);

describe.skipIf(!!skip)(`overlap-save kernels emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`, () => {
  beforeAll(loadEmulatedKernels);
  const batch = 2;

  for (const p of ['f32', 'f64'] as const) {
    it(`os_gather: row q of series b is samples first + q·step .. + nfft − 1, zero outside (${p})`, () => {
      const [length, nfft, ntaps] = [9000, 4500, 1201];
      const step = nfft - ntaps + 1;
      const first = -(ntaps - 1) + 7;
      const blocks = Math.ceil((length + 50) / step);
      const x = typed(p, random(batch * length));
      const rows = arr(p, batch * blocks * nfft);
      launch(`os_gather_${p}`, x, rows, batch, length, blocks, step, nfft, first);
      for (let b = 0; b < batch; b++)
        for (let q = 0; q < blocks; q++)
          for (let t = 0; t < nfft; t++) {
            const at = first + q * step + t;
            const want = at >= 0 && at < length ? x[b * length + at]! : 0;
            if (rows[(b * blocks + q) * nfft + t] !== want)
              expect(rows[(b * blocks + q) * nfft + t], `series ${b} row ${q} point ${t}`).toBe(want);
          }
    });

    it(`os_scatter: output q·step + t is point skip + t of row q, up to the window's end (${p})`, () => {
      const [nfft, ntaps, outLength] = [5000, 700, 12_345];
      const step = nfft - ntaps + 1;
      const skip = ntaps - 1;
      const blocks = Math.ceil(outLength / step);
      const rows = typed(p, random(batch * blocks * nfft));
      const y = arr(p, batch * outLength + 3);
      launch(`os_scatter_${p}`, rows, y, batch, blocks, step, nfft, skip, outLength);
      for (let b = 0; b < batch; b++)
        for (let j = 0; j < outLength; j++) {
          const q = Math.floor(j / step);
          const want = rows[(b * blocks + q) * nfft + skip + (j - q * step)]!;
          if (y[b * outLength + j] !== want) expect(y[b * outLength + j], `series ${b} output ${j}`).toBe(want);
        }
      // Nothing past the last series' window is written (the last block is partial).
      expect(Array.from(y.subarray(batch * outLength))).toEqual([NaN, NaN, NaN]);
    });

    it(`os_product: every row's bins times the taps' times the scale, in place (${p})`, () => {
      const [rows, bins, scale] = [3, 4097, 1 / 8192];
      const spectra = typed(p, random(2 * rows * bins));
      const before = Float64Array.from(spectra);
      const kernel = typed(p, random(2 * bins));
      launch(`os_product_${p}`, spectra, kernel, rows, bins, scale);
      const tol = p === 'f32' ? 1e-6 : 1e-15;
      for (let r = 0; r < rows; r++)
        for (let k = 0; k < bins; k++) {
          const [ar, ai] = [before[2 * (r * bins + k)]!, before[2 * (r * bins + k) + 1]!];
          const [hr, hi] = [kernel[2 * k]!, kernel[2 * k + 1]!];
          const i = 2 * (r * bins + k);
          const [re, im] = [scale * (ar * hr - ai * hi), scale * (ar * hi + ai * hr)];
          if (Math.abs(spectra[i]! - re) > tol * scale || Math.abs(spectra[i + 1]! - im) > tol * scale)
            expect([spectra[i], spectra[i + 1]], `row ${r} bin ${k}`).toEqual([re, im]);
        }
    });
  }
});
