import { describe, expect, it } from 'vitest';

describe('typed-array equality tester (test/setup/typed-array-equality.ts)', () => {
  it('is fast on millions of elements and keeps toEqual semantics', () => {
    const n = 1 << 22;
    const a = new Float32Array(n).map(() => Math.random());
    const t0 = performance.now();
    expect(a.slice()).toEqual(a);
    expect(performance.now() - t0).toBeLessThan(2000);
    const b = a.slice();
    b[n - 1] = b[n - 1]! + 1;
    expect(b).not.toEqual(a);
    expect(new Float32Array([NaN])).toEqual(new Float32Array([NaN]));
    expect(new Float32Array([0])).not.toEqual(new Float32Array([-0]));
    expect(new Float32Array([1, 2])).not.toEqual(new Float64Array([1, 2]));
    expect(new Int16Array([1, 2])).not.toEqual(new Int16Array([1, 2, 3]));
    expect(new BigInt64Array([1n])).toEqual(new BigInt64Array([1n]));
  });
});
