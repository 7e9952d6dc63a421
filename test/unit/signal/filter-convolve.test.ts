/**
 * Convolution's mode windows and method choice against numpy's documented example (the kernels
 * themselves are emulated in filter-kernels.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { convolutionMethod, convolutionWindow } from '../../../src/signal/index.js';

describe('convolution windows and method', { timeout: 5_000 }, () => {
  it('places full, same and valid as numpy’s documented example: convolve([1, 2, 3], [0, 1, 0.5])', () => {
    const full = [0, 1, 2.5, 4, 1.5];
    const cut = (mode: 'full' | 'same' | 'valid') => {
      const w = convolutionWindow(3, 3, mode);
      return full.slice(w.start, w.start + w.outLength);
    };
    expect(cut('full')).toEqual([0, 1, 2.5, 4, 1.5]);
    expect(cut('same')).toEqual([1, 2.5, 4]);
    expect(cut('valid')).toEqual([2.5]);
  });

  it('valid keeps |N − M| + 1 samples whichever is longer; same keeps the series length', () => {
    expect(convolutionWindow(10, 4, 'valid')).toEqual({ start: 3, outLength: 7, fullLength: 13 });
    expect(convolutionWindow(4, 10, 'valid')).toEqual({ start: 3, outLength: 7, fullLength: 13 });
    expect(convolutionWindow(4, 10, 'same')).toEqual({ start: 4, outLength: 4, fullLength: 13 });
    expect(() => convolutionWindow(4, 10, 'circular' as never)).toThrow(/mode must be/);
  });

  it("'auto' takes the FFT only when both sides are longer than the direct limit", () => {
    expect(convolutionMethod('auto', 1_000_000, 31)).toBe('direct');
    expect(convolutionMethod('auto', 1_000_000, 4097)).toBe('fft');
    expect(convolutionMethod('auto', 64, 4097)).toBe('direct');
    expect(convolutionMethod('direct', 1_000_000, 4097)).toBe('direct');
    expect(() => convolutionMethod('overlap-add' as never, 10, 10)).toThrow(/method must be/);
  });
});
