/**
 * convolve-blocks.ts: when the GPU's FFT convolution runs overlap-save blocks instead of one
 * whole-length transform, the block length it picks, and that the blocks it lays out cover the
 * mode's window exactly (each row's valid part is the linear convolution's).
 */
import { describe, expect, it } from 'vitest';
import {
  blockLengths,
  fftConvolutionPlan,
  fftPasses,
  SINGLE_PASS_POINTS,
  type FftConvolutionPlan,
} from '../../../src/signal/convolve-blocks.js';
import { convolutionWindow, type ConvolveMode } from '../../../src/signal/convolve-geometry.js';
import { fastLength } from '../../../src/signal/morlet.js';

const MODES: ConvolveMode[] = ['full', 'same', 'valid'];

function planFor(
  length: number,
  ntaps: number,
  mode: ConvolveMode,
  p: 'f32' | 'f64' = 'f32',
  batch = 16,
  single?: number,
) {
  const w = convolutionWindow(length, ntaps, mode);
  return { w, plan: fftConvolutionPlan(length, ntaps, w, p, batch, fastLength(w.fullLength), single) };
}

describe('fftConvolutionPlan', () => {
  it('runs the bench row (16 × 1M float32, 4,097 taps) as blocks of the longest single-pass length', () => {
    const { plan } = planFor(2 ** 20, 4097, 'full');
    expect(plan).toEqual({ kind: 'blocks', nfft: 16384, step: 12288, blocks: 86, first: -4096, skip: 4096 });
  });

  it('keeps the whole length where it runs in one pass, or where the taps are as long as the series', () => {
    expect(planFor(1000, 31, 'full').plan).toEqual({ kind: 'whole', n: fastLength(1030) });
    expect(planFor(SINGLE_PASS_POINTS.f32 - 100, 101, 'full').plan.kind).toBe('whole');
    expect(planFor(100_000, 90_000, 'full').plan.kind).toBe('whole');
    // 12,000 taps: a 16384-point block yields 4,385 outputs, too few for its 3.7 times the elements.
    expect(planFor(1_000_000, 12_000, 'full').plan.kind).toBe('whole');
    expect(planFor(50, 100_000, 'same').plan.kind).toBe('whole');
    expect(planFor(1, 5, 'full').plan.kind).toBe('whole');
  });

  it('uses a shorter single-pass length for float64', () => {
    const { plan } = planFor(2 ** 20, 1025, 'full', 'f64');
    expect(plan.kind).toBe('blocks');
    if (plan.kind === 'blocks') expect(plan.nfft).toBeLessThanOrEqual(SINGLE_PASS_POINTS.f64);
  });

  it('falls back to the whole length when the blocks would pass 2^31 − 1 elements in one call', () => {
    // 2048 series of 1M: blocks of 16384 would be 2048 × 65 × 16384 > 2^31; every shorter one more.
    expect(planFor(2 ** 20, 257, 'full', 'f32', 2048).plan.kind).toBe('whole');
  });

  for (const [length, ntaps] of [
    [100_000, 31],
    [300_001, 4097],
    [65_537, 2],
    [40_000, 1],
    [1_000_000, 3000],
  ] as const)
    for (const mode of MODES)
      it(`blocks cover the ${mode} window exactly: ${length} samples, ${ntaps} taps`, () => {
        const { w, plan } = planFor(length, ntaps, mode);
        expect(plan.kind).toBe('blocks');
        if (plan.kind !== 'blocks') return;
        expect(plan.step).toBe(plan.nfft - ntaps + 1);
        expect(plan.skip).toBe(ntaps - 1);
        expect(plan.first).toBe(w.start - (ntaps - 1));
        // The last block holds the window's last output; one block fewer would not.
        expect(plan.blocks * plan.step).toBeGreaterThanOrEqual(w.outLength);
        expect((plan.blocks - 1) * plan.step).toBeLessThan(w.outLength);
        expect(plan.nfft).toBeLessThanOrEqual(SINGLE_PASS_POINTS.f32);
        expect(plan.nfft).toBeGreaterThanOrEqual(SINGLE_PASS_POINTS.f32 / 16);
      });

  it('reaches blocks with short series when given a short single-pass length (the CPU tests)', () => {
    const { plan } = planFor(300, 9, 'same', 'f32', 2, 64);
    expect(plan).toMatchObject({ kind: 'blocks', nfft: 48, step: 40, blocks: 8 });
  });

  it('picks blocks only when they move fewer elements', () => {
    // Whole 1M points at 3 effective passes: 15 per point; blocks of 16384 with 4,097 taps: 7 × 4/3.
    const cost = (q: FftConvolutionPlan, outLength: number): number =>
      q.kind === 'whole'
        ? q.n * (3 + 4 * fftPasses(q.n, 16384))
        : Math.ceil(outLength / q.step) * q.nfft * (3 + 4 * fftPasses(q.nfft, 16384));
    for (const [length, ntaps] of [
      [2 ** 20, 4097],
      [20_000, 4097],
      [200_000, 2000],
    ] as const) {
      const { w, plan } = planFor(length, ntaps, 'full');
      const whole: FftConvolutionPlan = { kind: 'whole', n: fastLength(w.fullLength) };
      expect(cost(plan, w.outLength)).toBeLessThanOrEqual(cost(whole, w.outLength));
    }
  });
});

describe('fftPasses and blockLengths', () => {
  it('counts one pass up to the single-pass length and weighted passes past it', () => {
    expect(fftPasses(16384, 16384)).toBe(1);
    expect(fftPasses(16385, 16384)).toBe(3);
    expect(fftPasses(2 ** 28, 16384)).toBe(3);
    expect(fftPasses(2 ** 29, 16384)).toBe(4.5);
  });

  it('lists 2^k times 1, 3, 5, 7 between the bounds, ascending', () => {
    expect(blockLengths(100, 256)).toEqual([112, 128, 160, 192, 224, 256]);
    expect(blockLengths(1, 20)).toEqual([16, 20]);
  });
});
