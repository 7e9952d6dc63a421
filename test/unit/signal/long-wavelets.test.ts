import { describe, expect, it } from 'vitest';
import { cwtGeometry, morletGeometry, morletShape } from '../../../src/signal/index.js';
import { planFrameChunks } from '../../../src/engine/index.js';

describe('wavelets far longer than the signal are planned at once (their energy sum once looped for minutes)', () => {
  it('the closed-form energy of a long wavelet equals the sum over its support', () => {
    const sigma = 2.5e5; // half support 1.25e6 samples: past the summed range
    const shape = morletShape(6 / (2 * Math.PI * sigma), 6);
    expect(shape.half).toBeGreaterThan(1 << 20);
    let energy = 0;
    for (let d = -shape.half; d <= shape.half; d++) energy += Math.exp(-(d * d) / (sigma * sigma));
    const summedNorm = 1 / (Math.sqrt(0.5) * Math.sqrt(energy));
    expect(Math.abs(shape.norm - summedNorm) / summedNorm).toBeLessThan(1e-10);
  });

  it('a 1 nHz wavelet at 1 kHz, or 1e11 cycles, plans in milliseconds', () => {
    const t = performance.now();
    expect(cwtGeometry(1000, { fs: 1000, freqs: [1e-9] }).paddedLength).toBeGreaterThanOrEqual(1999);
    expect(cwtGeometry(1000, { fs: 1000, scales: [1e10] }).paddedLength).toBeGreaterThanOrEqual(1999);
    expect(morletGeometry(1000, { freqs: [0.1], nCycles: 1e11 }).paddedLength).toBeGreaterThanOrEqual(1999);
    expect(performance.now() - t).toBeLessThan(1000);
  });
});

describe('planFrameChunks refuses a frame count that is not a count (NaN looped forever)', () => {
  it('NaN, Infinity, negative and fractional counts', () => {
    for (const frames of [Number.NaN, Number.POSITIVE_INFINITY, -1, 10.5])
      expect(() => planFrameChunks({ nperseg: 4, hop: 2, frames }, 8)).toThrow(
        /planFrameChunks: frames must be a positive integer/,
      );
  });
});

describe('frequency helpers refuse a sampling rate or length that is not one', () => {
  it('bandBins, rfftFrequencies, fftFrequencies', async () => {
    const { bandBins, fftFrequencies, rfftFrequencies } = await import('../../../src/signal/geometry.js');
    expect(() => bandBins([1, 2], Number.NaN, 64)).toThrow(/^fs must be a positive finite number, got NaN/);
    expect(() => bandBins([1, 2], 100, -5)).toThrow(/band: transform length must be a positive integer, got -5/);
    expect(() => rfftFrequencies(0, 1)).toThrow(/rfftFrequencies: n must be a positive integer, got 0/);
    expect(() => fftFrequencies(2.5, 1)).toThrow(/fftFrequencies: n must be a positive integer, got 2.5/);
    expect(() => rfftFrequencies(8, 0)).toThrow(/fs must be a positive finite number, got 0/);
    expect(Array.from(rfftFrequencies(4, 8))).toEqual([0, 2, 4]);
  });
});

describe('boolean options are booleans (a string "no" read as true)', () => {
  it('getWindow sym, istftGeometry inputOnesided and boundary', async () => {
    const { getWindow } = await import('../../../src/signal/window.js');
    const { istftGeometry } = await import('../../../src/signal/inverse-geometry.js');
    expect(() => getWindow('hann', 8, { sym: 'yes' as never })).toThrow(/^getWindow: sym must be a boolean, got "yes"/);
    expect(() => getWindow('hann', 1, { sym: 1 as never })).toThrow(/sym must be a boolean/);
    expect(() => istftGeometry(33, 4, { inputOnesided: 'no' as never })).toThrow(
      /^inputOnesided must be a boolean, got "no"/,
    );
    expect(() => istftGeometry(33, 4, { boundary: 'no' as never })).toThrow(
      /^boundary must be a boolean \(istft\), got "no"/,
    );
    expect(istftGeometry(33, 4, { boundary: false }).outputLength).toBeGreaterThan(0);
  });
});
