import { describe, expect, it } from 'vitest';
import { DTYPES, hostElements } from '../../../src/runtime/memory/dtype.js';
import {
  bf16Bits,
  bf16Value,
  f16Bits,
  f16Value,
  fromBf16,
  fromF16,
  toBf16,
  toF16,
  toF16Bits,
} from '../../../src/runtime/memory/half.js';

describe('f16 and bf16', () => {
  it('round-trips every finite f16 and bf16 bit pattern', () => {
    for (let b = 0; b < 65536; b++) {
      const h = f16Value(b);
      if (!Number.isNaN(h)) expect(f16Bits(h)).toBe(b);
      const w = bf16Value(b);
      if (!Number.isNaN(w)) expect(bf16Bits(w)).toBe(b);
    }
  });
  it('rounds to nearest even, overflows to infinity, keeps -0 and NaN', () => {
    expect(f16Bits(65504)).toBe(0x7bff);
    expect(f16Bits(65519.99)).toBe(0x7bff);
    expect(f16Bits(65520)).toBe(0x7c00);
    expect(f16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie, to even
    expect(f16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie, to even (up)
    expect(f16Bits(2 ** -25)).toBe(0); // half the smallest subnormal: to even (0)
    expect(f16Bits(1.5 * 2 ** -24)).toBe(2);
    expect(f16Bits(-0)).toBe(0x8000);
    expect(Number.isNaN(f16Value(f16Bits(Number.NaN)))).toBe(true);
    expect(f16Value(0xfc00)).toBe(-Infinity);
  });
  it('matches float32 truncation with round-to-nearest-even for bf16', () => {
    const f = new Float32Array(1);
    const u = new Uint32Array(f.buffer);
    for (let k = 0; k < 20_000; k++) {
      f[0] = (Math.random() - 0.5) * 2 ** (Math.random() * 250 - 125);
      const lsb = (u[0]! >>> 16) & 1;
      expect(bf16Bits(f[0]!)).toBe(((u[0]! + 0x7fff + lsb) >>> 16) & 0xffff);
    }
  });
  it('converts arrays, and the f16 dtype maps to Float16Array where the runtime has it, else raw bits', () => {
    const values = [0.5, -2, 1000, 3.140625];
    expect(Array.from(fromF16(toF16(values)))).toEqual(values);
    expect(Array.from(fromF16(toF16Bits(values)))).toEqual(values);
    expect(Array.from(fromBf16(toBf16([0.5, -2, 1024])))).toEqual([0.5, -2, 1024]);
    const hasFloat16 = typeof (globalThis as { Float16Array?: unknown }).Float16Array === 'function';
    expect(DTYPES.f16.array.name).toBe(hasFloat16 ? 'Float16Array' : 'Uint16Array');
    expect(hostElements('f16', toF16Bits(values), 'write')).toBe(4);
    expect(hostElements('bf16', toBf16(values), 'write')).toBe(4);
    expect(() => hostElements('bf16', new Float32Array(2), 'write')).toThrow(/Uint16Array/);
  });

  it('encodes what is not a number as a Float32Array would (NaN), and refuses a host array that holds no 16-bit bits', () => {
    const f16Nan = f16Bits(Number.NaN);
    expect(Array.from(toF16Bits([undefined, 'abc', {}] as unknown as number[]))).toEqual([f16Nan, f16Nan, f16Nan]);
    expect(Array.from(toF16Bits(['1.5'] as unknown as number[]))).toEqual([f16Bits(1.5)]);
    expect(Array.from(toBf16([undefined] as unknown as number[]))).toEqual([bf16Bits(Number.NaN)]);
    expect(() => fromF16([0x3c00] as never)).toThrow(
      /^fromF16: expects a Uint16Array of f16 bits or a Float16Array, got an Array$/,
    );
    expect(() => fromF16(new Float32Array([1.5]) as never)).toThrow(/got a Float32Array/);
    expect(() => fromBf16([1] as never)).toThrow(/^fromBf16: expects a Uint16Array of bfloat16 bits, got an Array$/);
  });
});
