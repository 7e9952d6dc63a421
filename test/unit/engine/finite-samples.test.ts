/**
 * The doors' CPU scan for non-finite samples (src/engine/finite-samples.ts) against a plain
 * element-by-element reference: every position of the eight float accumulators' segments and of
 * the four 16-bit word accumulators', their tails, unaligned 16-bit views, several bad samples
 * (the first is named), and finite values that look like trouble (-0, the largest, subnormals).
 */
import { describe, expect, it } from 'vitest';
import {
  allFinite,
  checkFiniteSamples,
  firstNonFinite,
  nonFiniteSampleError,
} from '../../../src/engine/finite-samples.js';
import { JobValidationError } from '../../../src/engine/errors.js';
import type { JobData, JobDataType } from '../../../src/engine/types.js';
import { bf16Bits, f16Bits } from '../../../src/runtime/memory/half.js';

const EXPONENT: Record<string, number> = { f16: 0x7c00, bf16: 0x7f80 };

/** The rule read element by element: what the fast scan must agree with. */
function reference(data: JobData, dtype: JobDataType): number {
  for (let i = 0; i < data.length; i++) {
    if (dtype === 'i16') return -1;
    const bad =
      dtype === 'f32' || dtype === 'f64'
        ? !Number.isFinite(data[i]!)
        : (data[i]! & EXPONENT[dtype]!) === EXPONENT[dtype]!;
    if (bad) return i;
  }
  return -1;
}

/** Fresh random finite samples of `dtype` (never zeros), of `n` samples. */
function finiteData(dtype: JobDataType, n: number): JobData {
  const v = (): number => (Math.random() * 2 - 1) * 10 ** Math.floor(Math.random() * 6 - 3);
  switch (dtype) {
    case 'f32':
      return Float32Array.from({ length: n }, v);
    case 'f64':
      return Float64Array.from({ length: n }, v);
    case 'i16':
      return Int16Array.from({ length: n }, () => Math.round(v() * 30));
    case 'f16':
      return Uint16Array.from({ length: n }, () => f16Bits(v()));
    default:
      return Uint16Array.from({ length: n }, () => bf16Bits(v()));
  }
}

/** A NaN, +Infinity or -Infinity of `dtype` (random payloads and signs for 16-bit NaNs). */
function poison(dtype: JobDataType, kind: number): number {
  if (dtype === 'f32' || dtype === 'f64')
    return [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY][kind]!;
  const e = EXPONENT[dtype]!;
  const mantissa = dtype === 'f16' ? 0x3ff : 0x7f;
  const sign = Math.random() < 0.5 ? 0x8000 : 0;
  return kind === 0 ? sign | e | (1 + Math.floor(Math.random() * mantissa)) : (kind === 1 ? 0 : 0x8000) | e;
}

const FLOATS: JobDataType[] = ['f32', 'f64', 'f16', 'bf16'];

describe('firstNonFinite: the doors scan', { timeout: 30_000 }, () => {
  it('finds the one bad sample at every position of lengths around the accumulators (segments and tails)', () => {
    for (const dtype of FLOATS)
      for (const n of [1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100]) {
        const clean = finiteData(dtype, n);
        expect(firstNonFinite(clean, dtype), `${dtype} n=${n} all finite`).toBe(-1);
        // The one-pass answer on its own (firstNonFinite's second pass would hide a wrong "not all finite").
        expect(allFinite(clean, dtype), `${dtype} n=${n} all finite`).toBe(true);
        for (let at = 0; at < n; at++) {
          const data = clean.slice() as JobData;
          data[at] = poison(dtype, at % 3);
          expect(firstNonFinite(data, dtype), `${dtype} n=${n} at=${at}`).toBe(at);
          expect(allFinite(data, dtype), `${dtype} n=${n} at=${at}`).toBe(false);
        }
      }
  });

  it('names the first of several bad samples, wherever they fall, as the plain reading does', () => {
    for (const dtype of FLOATS)
      for (let trial = 0; trial < 200; trial++) {
        const n = 1 + Math.floor(Math.random() * 3000);
        const data = finiteData(dtype, n);
        const bad = 1 + Math.floor(Math.random() * 4);
        for (let k = 0; k < bad; k++) data[Math.floor(Math.random() * n)] = poison(dtype, k % 3);
        // The first and the last sample now and then.
        if (trial % 7 === 0) data[0] = poison(dtype, 1);
        if (trial % 5 === 0) data[n - 1] = poison(dtype, 2);
        expect(firstNonFinite(data, dtype), `${dtype} n=${n}`).toBe(reference(data, dtype));
      }
  });

  it('reads 16-bit views that start at an odd sample (no 4-byte alignment) and end at one', () => {
    for (const dtype of ['f16', 'bf16'] as const) {
      const whole = finiteData(dtype, 203) as Uint16Array;
      for (const offset of [0, 1, 2, 3])
        for (const end of [200, 201, 202, 203]) {
          const view = whole.subarray(offset, end);
          expect(firstNonFinite(view, dtype)).toBe(-1);
          expect(allFinite(view, dtype)).toBe(true);
          for (const at of [0, 1, view.length - 2, view.length - 1, Math.floor(view.length / 2)]) {
            const saved = view[at]!;
            view[at] = poison(dtype, at % 3);
            expect(firstNonFinite(view, dtype), `${dtype} offset ${offset} end ${end} at ${at}`).toBe(at);
            expect(allFinite(view, dtype)).toBe(false);
            view[at] = saved;
          }
        }
    }
  });

  it('lets every finite value through: -0, the largest, the smallest subnormal, every finite 16-bit pattern', () => {
    const f32 = Float32Array.of(-0, 3.4028234663852886e38, -3.4028234663852886e38, 1e-45, 0);
    const f64 = Float64Array.of(-0, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE);
    expect([firstNonFinite(f32, 'f32'), allFinite(f32, 'f32')]).toEqual([-1, true]);
    expect([firstNonFinite(f64, 'f64'), allFinite(f64, 'f64')]).toEqual([-1, true]);
    for (const dtype of ['f16', 'bf16'] as const) {
      const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
      const finite = all.filter((b) => (b & EXPONENT[dtype]!) !== EXPONENT[dtype]!);
      expect([firstNonFinite(finite, dtype), allFinite(finite, dtype)], dtype).toEqual([-1, true]);
      expect(firstNonFinite(all, dtype), dtype).toBe(reference(all, dtype));
      expect(allFinite(all, dtype), dtype).toBe(false);
    }
    // i16 holds no float: every pattern passes, raw 16-bit float bits that would be a NaN included.
    const i16 = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    expect([firstNonFinite(i16, 'i16'), allFinite(i16, 'i16')]).toEqual([-1, true]);
    // Empty data is all finite, an empty view at an odd sample too.
    expect(allFinite(new Uint16Array(new ArrayBuffer(8), 2, 0), 'bf16')).toBe(true);
    expect([firstNonFinite(new Float32Array(0), 'f32'), allFinite(new Uint16Array(0), 'f16')]).toEqual([-1, true]);
  });

  it('computedIn f32: f64 samples beyond the f32 range are infinite there, up to the rounding edge', () => {
    const f64 = finiteData('f64', 64) as Float64Array;
    // 2^128 - 2^103 is the first value that rounds to Infinity in f32; just below it rounds to the largest f32.
    f64[20] = 3.4028235677973362e38;
    f64[40] = -3.4028235677973366e38;
    f64[50] = 1e300;
    expect(firstNonFinite(f64, 'f64')).toBe(-1);
    expect(firstNonFinite(f64, 'f64', 'f64')).toBe(-1);
    expect(firstNonFinite(f64, 'f64', 'f32')).toBe(40);
    f64[3] = Number.NaN;
    expect(firstNonFinite(f64, 'f64', 'f32')).toBe(3);
    // f32 and 16-bit samples are what they are in either precision.
    const f32 = finiteData('f32', 16) as Float32Array;
    f32[9] = Infinity;
    expect(firstNonFinite(f32, 'f32', 'f32')).toBe(9);
    expect(() => checkFiniteSamples(Float64Array.of(1, -1e39), 'f64', 'f32')).toThrow(
      expect.objectContaining({ field: 'data[1]', detail: expect.stringMatching(/^is -1e\+39, infinite in f32/) }),
    );
  });

  it('checkFiniteSamples throws the one JobValidationError naming the sample and its value', () => {
    const f32 = finiteData('f32', 50) as Float32Array;
    f32[17] = Number.NEGATIVE_INFINITY;
    f32[30] = Number.NaN;
    expect(() => checkFiniteSamples(f32, 'f32')).toThrow(
      new JobValidationError(
        'data[17]',
        'is -Infinity: samples must be finite (NaN and infinities are refused however the job comes in)',
      ),
    );
    const bf16 = finiteData('bf16', 8) as Uint16Array;
    bf16[2] = 0xffc1;
    const e = nonFiniteSampleError(bf16, 'bf16', 2);
    expect(e.field).toBe('data[2]');
    expect(e.detail).toMatch(/^is a non-finite bf16 \(bits 0xffc1\): samples must be finite/);
    expect(() => checkFiniteSamples(finiteData('f64', 1000), 'f64')).not.toThrow();
    // The first sample is named like any other.
    expect(() => checkFiniteSamples(Float64Array.of(Number.NaN, 1), 'f64')).toThrow(
      expect.objectContaining({ field: 'data[0]' }),
    );
    // An f64 sample an f32 engine found infinite once converted (finite here) says so.
    expect(nonFiniteSampleError(Float64Array.of(1, 1e300), 'f64', 1).detail).toMatch(
      /^is 1e\+300, infinite in f32 \(this engine's precision\): samples must be finite/,
    );
  });
});
