import { describe, expect, it } from 'vitest';
import { bf16Bits, bf16Value, f16Bits, f16Value } from '../../../src/runtime/memory/half.js';
import { dtypeInfo } from '../../../src/runtime/memory/dtype.js';
import { DEFAULT_I16_SCALE, isSampleDType, sampleScale } from '../../../src/signal/samples.js';

describe('16-bit sample helpers', () => {
  it('i16 reads at 1/32768 by default (full scale to +-1), f16/bf16 at 1', () => {
    expect(DEFAULT_I16_SCALE).toBe(2 ** -15);
    expect(sampleScale('i16', undefined)).toBe(2 ** -15);
    expect(sampleScale('f16', undefined)).toBe(1);
    expect(sampleScale('bf16', undefined)).toBe(1);
    expect(sampleScale('i16', 0.001)).toBe(0.001);
    expect(sampleScale('bf16', -2)).toBe(-2);
    expect(-32768 * DEFAULT_I16_SCALE).toBe(-1);
  });

  it('refuses scales that are 0, not finite or not numbers, naming the field', () => {
    expect(() => sampleScale('i16', 0, 'stft scale')).toThrow(/stft scale must be a finite non-zero number, got 0/);
    expect(() => sampleScale('f16', Number.NaN)).toThrow(/scale must be a finite non-zero number, got NaN/);
    expect(() => sampleScale('i16', '0.5')).toThrow(/got 0.5/);
  });

  it('knows the 16-bit sample types, each 2 bytes (what the H2D copy moves per sample)', () => {
    for (const d of ['i16', 'f16', 'bf16'] as const) {
      expect(isSampleDType(d)).toBe(true);
      expect(dtypeInfo(d).bytes).toBe(2);
    }
    for (const d of ['f32', 'f64', 'u16', 'i32', undefined, 16]) expect(isSampleDType(d)).toBe(false);
  });

  it('reference values of the two float formats (what narrow and the tests compare against)', () => {
    // 1, -2, the largest finite, the smallest subnormal; a value f16 keeps and bf16 rounds.
    expect([f16Bits(1), f16Bits(-2), f16Bits(65504), f16Bits(2 ** -24)]).toEqual([0x3c00, 0xc000, 0x7bff, 0x0001]);
    expect([bf16Bits(1), bf16Bits(-2), bf16Bits(3.140625), bf16Bits(1 + 2 ** -9)]).toEqual([
      0x3f80, 0xc000, 0x4049, 0x3f80,
    ]);
    expect(f16Value(0x3555)).toBeCloseTo(0.333251953125, 12);
    expect(bf16Value(0x3eab)).toBe(0.333984375);
    // An i16 sample times the default scale is exact in float32: the 16-bit path and the f32 path read the same value.
    for (const q of [-32768, -12345, -1, 0, 1, 777, 32767])
      expect(Math.fround(q * DEFAULT_I16_SCALE)).toBe(q * DEFAULT_I16_SCALE);
  });
});
