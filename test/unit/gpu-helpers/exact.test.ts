import { describe, expect, it } from 'vitest';
import { expectSameValues, within } from '../../gpu/exact.js';

describe('test/gpu/exact.ts (the GPU tests exact-copy check and wait bound)', () => {
  it('passes equal arrays of 8 Mi floats in well under a second (toEqual takes ~50 s), NaN poison included', () => {
    const a = new Float32Array(8 << 20).map(() => Math.random());
    a[7] = Number.NaN;
    const t0 = performance.now();
    expectSameValues(a.slice(), a);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('fails naming the first differing element, the count and both values; on another type or length', () => {
    const a = Float32Array.from([1, 2, 3, 4]);
    const b = Float32Array.from([1, 2, 9, 8]);
    expect(() => expectSameValues(b, a, 'copy')).toThrow(
      /copy: 2 of 4 elements differ; the first at \[2\]: got 9, expected 3/,
    );
    expect(() => expectSameValues(new Float64Array(4), new Float32Array(4))).toThrow(/element type/);
    expect(() => expectSameValues(new Float32Array(3), new Float32Array(4))).toThrow(/byte length/);
    expect(() => expectSameValues(Float32Array.from([Number.NaN]), Float32Array.from([0]))).toThrow(
      /got NaN, expected 0/,
    );
  });

  it('within() settles as the promise does, or rejects naming what did not settle', async () => {
    await expect(within(Promise.resolve(3), 50, 'x')).resolves.toBe(3);
    await expect(within(new Promise(() => {}), 20, 'device 1 work')).rejects.toThrow(
      'device 1 work did not settle within 20 ms',
    );
  });
});
