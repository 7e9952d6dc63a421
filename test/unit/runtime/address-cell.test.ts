import { describe, expect, it } from 'vitest';
import { addressCell, cellAddress } from '../../../src/runtime/cuda.js';

// The allocations' out-parameter is read as two 32-bit words: it must agree with the 64-bit value.
describe('cellAddress', () => {
  it('reads the 64-bit address the driver wrote, as a number', () => {
    const values = [0n, 1n, 0xffff_ffffn, 0x1_0000_0000n, 0x7f12_3456_7000n, 2n ** 53n - 1n];
    for (let i = 0; i < 100; i++) values.push(BigInt(Math.floor(Math.random() * 2 ** 53)));
    for (const v of values) {
      addressCell[0] = v;
      expect(cellAddress(), String(v)).toBe(Number(v));
    }
  });

  it('refuses an address a double cannot hold, naming it', () => {
    addressCell[0] = 2n ** 53n + 1n;
    expect(() => cellAddress()).toThrow(/9007199254740993 does not fit in a safe integer/);
    addressCell[0] = 0n;
  });
});
