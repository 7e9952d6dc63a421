import { describe, expect, it } from 'vitest';
import { bandPowersReference, bandRanges, finishDominantCycles } from '../../../src/signal/cycles.js';
import {
  bandMembers,
  cwtReference,
  fastLength,
  morletGeometry,
  morletShape,
  morletWavelet,
} from '../../../src/signal/morlet.js';
import { getWindow, windowSum } from '../../../src/signal/window.js';

/** One-sided DFT (interleaved re, im; N/2+1 bins) by direct summation in float64. */
function rdft(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const h = Math.floor(n / 2) + 1;
  const out = new Float64Array(2 * h);
  for (let k = 0; k < h; k++) {
    let re = 0;
    let im = 0;
    for (let t = 0; t < n; t++) {
      const a = (-2 * Math.PI * ((k * t) % n)) / n;
      re += x[t]! * Math.cos(a);
      im += x[t]! * Math.sin(a);
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
  return out;
}

function rows(spectrum: Float64Array, k: number): Float64Array {
  return Float64Array.from([
    k,
    spectrum[2 * k]!,
    spectrum[2 * k + 1]!,
    spectrum[2 * k]! ** 2 + spectrum[2 * k + 1]! ** 2,
  ]);
}

describe('dominant cycle finishing', () => {
  it('recovers frequency, period, amplitude and phase of a bin-centred cosine, with and without a window', () => {
    for (const n of [64, 81]) {
      const k0 = 7;
      const A = 0.5 + Math.random();
      const phi = Math.random() * 2 * Math.PI - Math.PI;
      const fs = 250;
      const x = Float64Array.from({ length: n }, (_, t) => A * Math.cos((2 * Math.PI * k0 * t) / n + phi));
      const [c] = finishDominantCycles(rows(rdft(x), k0), { batch: 1, length: n, fs });
      expect(c!.bin).toBe(k0);
      expect(c!.frequency).toBeCloseTo((k0 * fs) / n, 12);
      expect(c!.period).toBeCloseTo(n / (k0 * fs), 12);
      expect(c!.amplitude).toBeCloseTo(A, 12);
      expect(c!.phase).toBeCloseTo(phi, 12);
      const w = getWindow('hann', n);
      const xw = x.map((v, t) => v * w[t]!);
      const [cw] = finishDominantCycles(rows(rdft(xw), k0), {
        batch: 1,
        length: n,
        fs,
        windowSum: windowSum('hann', n),
      });
      expect(cw!.amplitude).toBeCloseTo(A, 12);
      expect(cw!.phase).toBeCloseTo(phi, 12);
    }
  });

  it('Nyquist is not doubled; a missing bin gives NaN', () => {
    const n = 16;
    const x = Float64Array.from({ length: n }, (_, t) => 0.75 * (t % 2 ? -1 : 1));
    const [c] = finishDominantCycles(rows(rdft(x), 8), { batch: 1, length: n });
    expect(c!.amplitude).toBeCloseTo(0.75, 13);
    const [none] = finishDominantCycles(Float64Array.from([-1, 0, 0, 0]), { batch: 1, length: n });
    expect(none!.frequency).toBeNaN();
  });
});

describe('band powers convention', () => {
  it('all bins give mean(x^2) (one-sided Parseval), even and odd N', () => {
    for (const n of [64, 65]) {
      const x = Float64Array.from({ length: n }, () => Math.random() * 2 - 1);
      const ranges = bandRanges([[0, 0.5]], 1, n);
      const [p] = bandPowersReference(rdft(x), n, ranges);
      const ms = x.reduce((a, v) => a + v * v, 0) / n;
      expect(p! / ms).toBeCloseTo(1, 12);
    }
  });

  it('a bin-centred cosine of amplitude A gives A^2/2 in its band and nothing elsewhere', () => {
    const n = 128;
    const A = 1.7;
    const x = Float64Array.from({ length: n }, (_, t) => A * Math.cos((2 * Math.PI * 10 * t) / n + 0.3));
    const ranges = bandRanges(
      [
        [0.07, 0.09],
        [0, 0.05],
      ],
      1,
      n,
    );
    const [inBand, outBand] = bandPowersReference(rdft(x), n, ranges);
    expect(inBand).toBeCloseTo((A * A) / 2, 12);
    expect(Math.abs(outBand!)).toBeLessThan(1e-20);
  });

  it('bandRanges refuses bad bands', () => {
    expect(() => bandRanges([], 1, 10)).toThrow(/non-empty/);
    expect(() => bandRanges([[0, 0.7]], 1, 10)).toThrow(/bands\[0\]/);
  });
});

describe('Morlet convention (MNE morlet)', () => {
  it('fastLength is the smallest 2^a 3^b 5^c 7^d >= n', () => {
    expect([1, 2, 11, 13, 97, 1000, 1025, 65536 + 1].map(fastLength)).toEqual([1, 2, 12, 14, 98, 1000, 1029, 65610]);
  });

  it('||W|| = sqrt(2), support |t| < 5 sigma, sigma = nCycles / (2 pi f)', () => {
    for (const [cps, nc] of [
      [0.05, 6],
      [0.2, 3],
      [0.013, 7],
    ] as const) {
      const { sigma, half } = morletShape(cps, nc);
      expect(sigma).toBeCloseTo(nc / (2 * Math.PI * cps), 12);
      expect(half).toBeLessThan(5 * sigma);
      expect(half + 1).toBeGreaterThanOrEqual(5 * sigma);
      const { values } = morletWavelet(cps, nc);
      let e = 0;
      for (const v of values) e += v * v;
      expect(Math.sqrt(e)).toBeCloseTo(Math.SQRT2, 12);
    }
  });

  it('geometry: scales with w0 map to freqs = w0 fs / (2 pi s); pad covers the support', () => {
    const g = morletGeometry(500, { fs: 100, scales: [4, 8], w0: 6 });
    expect(g.freqs[0]).toBeCloseTo((6 * 100) / (2 * Math.PI * 4), 12);
    expect(g.nCycles).toBe(6);
    const maxHalf = Math.max(g.params[3]!, g.params[7]!);
    expect(g.paddedLength).toBeGreaterThanOrEqual(500 + Math.min(maxHalf, 499));
    expect(() => morletGeometry(500, { fs: 100 })).toThrow(/freqs or scales/);
    expect(() => morletGeometry(500, { fs: 100, freqs: [60] })).toThrow(/freqs\[0\]/);
    expect(() => morletGeometry(500, { fs: 100, freqs: [10], w0: 5 })).toThrow(/w0/);
    expect(() => morletGeometry(500, { fs: 100, freqs: [10], nCycles: 0 })).toThrow(/nCycles/);
  });

  it('reference CWT of a tone peaks at its frequency with |y| ~ amplitude·sigma·sqrt(2π)·c / 2', () => {
    const fs = 200;
    const n = 1000;
    const x = Float64Array.from({ length: n }, (_, t) => Math.cos((2 * Math.PI * 20 * t) / fs));
    const g = morletGeometry(n, { fs, freqs: [10, 20, 40], nCycles: 7 });
    const y = cwtReference(x, g);
    const mid = n / 2;
    const mag = (j: number): number => Math.hypot(y[2 * (j * n + mid)]!, y[2 * (j * n + mid) + 1]!);
    expect(mag(1)).toBeGreaterThan(10 * mag(0));
    expect(mag(1)).toBeGreaterThan(10 * mag(2));
    const s = g.params[5]!;
    const c = g.params[6]!;
    expect(mag(1) / ((s * Math.sqrt(2 * Math.PI) * c) / 2)).toBeCloseTo(1, 3);
  });

  it('bandMembers is CSR over inclusive bands', () => {
    const { offsets, members } = bandMembers(Float64Array.from([1, 2, 3, 4]), [
      [1, 2],
      [2.5, 10],
      [5, 6],
    ]);
    expect([...offsets]).toEqual([0, 2, 4, 4]);
    expect([...members]).toEqual([0, 1, 2, 3]);
  });
});
