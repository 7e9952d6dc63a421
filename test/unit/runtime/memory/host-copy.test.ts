import { describe, expect, it } from 'vitest';
import { copyHostArray } from '../../../../src/runtime/memory/host-copy.js';

function random32(n: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = Math.random() * 2 - 1;
  return a;
}

/** Index of the first element where a and b differ, or -1 (toEqual on millions of elements is slow). */
function firstDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}

describe('copyHostArray: host copies off the event loop', () => {
  it('copies a large array exactly (several pieces), at an offset, leaving the rest untouched', async () => {
    const n = (9 << 20) / 4 + 3; // 9 MiB + 12 bytes: three uneven pieces
    const source = random32(n);
    const target = new Float32Array(n + 10).fill(Number.NaN);
    await copyHostArray(target, source, 7);
    expect(firstDifference(target.subarray(7, 7 + n), source)).toBe(-1);
    expect(Array.from(target.subarray(0, 7)).every(Number.isNaN)).toBe(true);
    expect(Array.from(target.subarray(7 + n)).every(Number.isNaN)).toBe(true);
  });

  it('copies small arrays and subarray views in place', async () => {
    const base = Float64Array.from({ length: 100 }, (_, i) => i + 0.5);
    const target = new Float64Array(50).fill(-1);
    const done = copyHostArray(target, base.subarray(20, 60), 5);
    expect(target[5]).toBe(20.5); // in place: already copied before the promise settles
    await done;
    expect(Array.from(target.subarray(5, 45))).toEqual(Array.from(base.subarray(20, 60)));
    expect(target[4]).toBe(-1);
    expect(target[45]).toBe(-1);
  });

  it('converts between element types as TypedArray.set does (a float64 job into a float32 engine)', async () => {
    const source = Float64Array.from({ length: (2 << 20) / 8 }, (_, i) => i / 3);
    const target = new Float32Array(source.length);
    await copyHostArray(target, source);
    expect(target[12345]).toBe(Math.fround(12345 / 3));
    expect(target[source.length - 1]).toBe(Math.fround((source.length - 1) / 3));
  });

  it('rejects an overrun with a named error and writes nothing', async () => {
    const target = new Float32Array(4);
    await expect(copyHostArray(target, new Float32Array(4), 1)).rejects.toThrow(/overrun a target of 4/);
    await expect(copyHostArray(target, new Float32Array(1), -1)).rejects.toThrow(/overrun/);
    expect(Array.from(target)).toEqual([0, 0, 0, 0]);
  });

  it('leaves the event loop free while a large copy runs: the call returns before the copy is done', async () => {
    const source = new Float32Array(64 << 18).fill(1.25); // 64 MiB
    const target = new Float32Array(source.length);
    // A copy made in the call (on the event loop) would be done when it returns: its promise settles
    // within the microtasks that follow. One on libuv's threads settles only from a later turn of the
    // loop, after these microtasks whatever the timing (no time bound: a loaded host cannot break it).
    const copy = copyHostArray(target, source);
    let settled = false;
    void copy.then(() => (settled = true));
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(settled).toBe(false);
    await copy;
    expect(target[0]).toBe(1.25);
    expect(target[source.length - 1]).toBe(1.25);
  });
});
