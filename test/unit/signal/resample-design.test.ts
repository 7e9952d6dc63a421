/**
 * The CPU side of resampling and FIR design, against values derived here independently of the
 * implementation: scipy's documented firwin2 example, firwin2's symmetry types, scipy's
 * choose_conv_method cost model worked by hand at points where the earlier size rule disagreed,
 * the Lambert W branch by its defining equation, resample_poly's plan by scipy's padding
 * arithmetic and by resampling a slow sine through the plan's taps (a float64 convolution here).
 */
import { describe, expect, it } from 'vitest';
import {
  convolutionMethod,
  decimateLength,
  FilterDesignError,
  firwin,
  firwin2,
  lambertWm1,
  nyquistFactor,
  overlapAddBlocks,
  resamplePolyLength,
  resamplePolyPlan,
  upfirdnLength,
} from '../../../src/signal/index.js';
import { upfirdnReference } from './emulation/references.js';

describe('firwin2', { timeout: 5_000 }, () => {
  it("scipy's documented example: firwin2(150, [0, 0.5, 1], [1, 1, 0]), taps 72..77", () => {
    const taps = firwin2(150, [0, 0.5, 1], [1, 1, 0]);
    expect(taps.length).toBe(150);
    const expected = [-0.02286961, -0.06362756, 0.57310236, 0.57310236, -0.06362756, -0.02286961];
    for (let i = 0; i < 6; i++) expect(taps[72 + i]!).toBeCloseTo(expected[i]!, 7);
  });

  it('types I and II are symmetric, III and IV antisymmetric with a zero centre for III', () => {
    const odd = firwin2(31, [0, 0.3, 0.3, 1], [1, 1, 0, 0]);
    const even = firwin2(30, [0, 0.4, 1], [1, 0.5, 0]);
    const type3 = firwin2(31, [0, 0.5, 1], [0, 1, 0], { antisymmetric: true });
    const type4 = firwin2(30, [0, 0.5, 1], [0, 1, 1], { antisymmetric: true });
    for (const [taps, sign] of [
      [odd, 1],
      [even, 1],
      [type3, -1],
      [type4, -1],
    ] as const)
      for (let i = 0; i < taps.length; i++) expect(taps[i]! - sign * taps[taps.length - 1 - i]!).toBeCloseTo(0, 12);
    expect(type3[15]).toBe(0);
  });

  it('a gain of 1 everywhere without a window is the unit impulse at the centre', () => {
    const taps = firwin2(21, [0, 1], [1, 1], { window: null });
    for (let i = 0; i < 21; i++) expect(taps[i]!).toBeCloseTo(i === 10 ? 1 : 0, 12);
  });

  it('fs scales the frequency axis: the same design at fs 2 and fs 1000 (edges scaled)', () => {
    const a = firwin2(41, [0, 0.2, 0.25, 1], [1, 1, 0, 0]);
    const b = firwin2(41, [0, 100, 125, 500], [1, 1, 0, 0], { fs: 1000 });
    for (let i = 0; i < 41; i++) expect(b[i]!).toBeCloseTo(a[i]!, 12);
  });

  it('refuses what scipy refuses, naming it', () => {
    expect(() => firwin2(30, [0, 0.5, 1], [1, 1, 1])).toThrow(/Type II filter must have zero gain at the Nyquist/);
    expect(() => firwin2(31, [0, 0.5, 1], [1, 1, 0], { antisymmetric: true })).toThrow(/Type III/);
    expect(() => firwin2(30, [0, 0.5, 1], [1, 1, 0], { antisymmetric: true })).toThrow(/Type IV/);
    expect(() => firwin2(11, [0.1, 1], [1, 0])).toThrow(/start with 0 and end with fs\/2/);
    expect(() => firwin2(11, [0, 0.6, 0.5, 1], [1, 1, 0, 0])).toThrow(/nondecreasing/);
    expect(() => firwin2(11, [0, 0.5, 0.5, 0.5, 1], [1, 1, 0, 0, 0])).toThrow(/more than twice/);
    expect(() => firwin2(11, [0, 0.5, 1], [1, 0])).toThrow(/same length/);
    expect(() => firwin2(11, [0, 0.5, 1], [1, Number.NaN, 0])).toThrow(FilterDesignError);
    expect(() => firwin2(64, [0, 1], [1, 0], { nfreqs: 64 })).toThrow(/less than nfreqs/);
    expect(() => firwin2(0, [0, 1], [1, 0])).toThrow(/numtaps/);
  });
});

describe("convolve's method 'auto' (scipy's choose_conv_method for 1-D)", { timeout: 5_000 }, () => {
  it('follows the cost model where the size rule did not (worked by hand)', () => {
    // full, 100,000 x 100: fft 1.7649e-9 * 3 * 100099 * ln(100099) = 6.10e-3 > direct 2.1415e-10 * 1e7 - 1e-3 = 1.14e-3.
    expect(convolutionMethod('auto', 100_000, 100, 'full')).toBe('direct');
    // full, 100,000 x 1,000: fft 6.16e-3 < direct 2.1415e-10 * 1e8 - 1e-3 = 2.04e-2.
    expect(convolutionMethod('auto', 100_000, 1000, 'full')).toBe('fft');
    // same, taps (1,000) longer than the series (100): the second set of weights, 7.4e-5 < 1.1773e-8 * 1e5 - 1e-5.
    expect(convolutionMethod('auto', 100, 1000, 'same')).toBe('fft');
    // same, 100 x 1,000 the other way round: 3.26e-9 * 23,086 = 7.5e-5 > 2.85e-10 * (1e5 - 500 * 500) - 1e-3 (negative).
    expect(convolutionMethod('auto', 1000, 100, 'same')).toBe('direct');
    // valid, 100,000 x 2,000: direct ops (98,001 x 2,000) weigh 4.19e-2 - 1e-3 against fft 6.2e-3.
    expect(convolutionMethod('auto', 100_000, 2000, 'valid')).toBe('fft');
    expect(convolutionMethod('auto', 2000, 100_000, 'valid')).toBe('fft');
    expect(convolutionMethod('auto', 5, 3, 'full')).toBe('direct');
  });
});

describe('overlap-add blocking', { timeout: 5_000 }, () => {
  it('W₋₁ satisfies w·e^w = z on the lower branch', () => {
    expect(lambertWm1(-1 / Math.E)).toBeCloseTo(-1, 6);
    expect(lambertWm1(-0.1)).toBeCloseTo(-3.577152063957297, 12);
    for (const z of [-0.3, -0.05, -1e-3, -1e-8]) {
      const w = lambertWm1(z);
      expect(w).toBeLessThanOrEqual(-1);
      expect(Math.abs(w * Math.exp(w) - z) / -z).toBeLessThan(1e-12);
    }
    expect(() => lambertWm1(0.1)).toThrow(RangeError);
  });

  it("blocks as scipy's _calc_oa_lens: fallbacks, and an FFT longer than the optimum block", () => {
    expect(overlapAddBlocks(100, 100)).toBeUndefined();
    expect(overlapAddBlocks(100, 1)).toBeUndefined();
    expect(overlapAddBlocks(100, 60)).toBeUndefined();
    expect(overlapAddBlocks(50, 100)).toBeUndefined();
    const blocks = overlapAddBlocks(1_000_000, 101)!;
    const optimum = -100 * lambertWm1(-1 / (200 * Math.E));
    expect(blocks.nfft).toBeGreaterThanOrEqual(Math.ceil(optimum));
    expect(blocks.nfft).toBeLessThan(Math.ceil(optimum) * 1.2);
    expect(blocks.step).toBe(blocks.nfft - 100);
  });
});

describe('resample_poly, decimate and resample sizes', { timeout: 5_000 }, () => {
  it("lengths as scipy's: upfirdn ceil(((n - 1) up + taps) / down), resample_poly ceil(n up / down), decimate ceil(n / q)", () => {
    expect(upfirdnLength(3, 5, 1, 1)).toBe(7);
    expect(upfirdnLength(1, 5, 3, 1)).toBe(13);
    expect(upfirdnLength(1, 10, 1, 3)).toBe(4);
    expect(upfirdnLength(3, 10, 2, 3)).toBe(7);
    expect(resamplePolyLength(1000, 3, 7)).toBe(429);
    expect(resamplePolyLength(10, 4, 2)).toBe(20);
    expect(decimateLength(100, 3)).toBe(34);
    expect(nyquistFactor(8, 4)).toBe(2);
    expect(nyquistFactor(4, 8)).toBe(0.5);
  });

  it('the plan pads the taps as scipy does: up 3, down 2 -> 61 Kaiser taps times 3 after 2 zeros, 16 samples dropped', () => {
    const plan = resamplePolyPlan(100, 6, 4);
    expect([plan.up, plan.down, plan.start, plan.outLength]).toEqual([3, 2, 16, 150]);
    const h = firwin(61, 1 / 3, { window: ['kaiser', 5] });
    expect(Array.from(plan.taps.subarray(0, 2))).toEqual([0, 0]);
    for (let i = 0; i < 61; i++) expect(plan.taps[2 + i]).toBeCloseTo(3 * h[i]!, 14);
    expect(upfirdnLength(plan.taps.length, 100, 3, 2)).toBeGreaterThanOrEqual(150 + 16);
    expect(resamplePolyPlan(50, 5, 5).taps).toEqual(Float64Array.of(1));
  });

  it('a slow sine resampled through the plan lands on the sine at the new rate (the output is aligned, not shifted)', () => {
    for (const [up, down] of [
      [3, 2],
      [2, 5],
      [3, 7],
    ] as const) {
      const n = 400;
      const f = 0.02;
      const x = Float64Array.from({ length: n }, (_, t) => Math.sin(2 * Math.PI * f * t));
      const plan = resamplePolyPlan(n, up, down);
      const y = upfirdnReference(plan.taps, x, plan.up, plan.down).subarray(plan.start, plan.start + plan.outLength);
      expect(y.length).toBe(Math.ceil((n * up) / down));
      // Away from the ends (where zeros come in), y[i] = sin(2π f i down / up).
      const edge = Math.ceil((40 * Math.max(up, down)) / down);
      for (let i = edge; i < y.length - edge; i++)
        expect(Math.abs(y[i]! - Math.sin((2 * Math.PI * f * i * down) / up))).toBeLessThan(5e-3);
    }
  });
});
