/**
 * TripleBuffer's arguments are checked before the driver is asked for anything, so a wrong call
 * names what is wrong on any machine (this suite runs without a GPU: a check that came after the
 * driver would surface as "no CUDA driver" instead).
 */
import { describe, expect, it } from 'vitest';
import { TripleBuffer } from '../../../../src/pipeline/index.js';

describe('TripleBuffer refuses wrong arguments before touching the driver', () => {
  it('an unknown dtype', () => {
    expect(() => TripleBuffer.alloc('f33' as 'f32', 16)).toThrow(
      /TripleBuffer.alloc dtype: unknown dtype "f33"; expected one of/,
    );
  });

  it.each([0, -1, 1.5, Number.NaN])('a length of %p', (length) => {
    expect(() => TripleBuffer.alloc('f32', length)).toThrow(RangeError);
    expect(() => TripleBuffer.alloc('f32', length)).toThrow('TripleBuffer.alloc length must be a positive integer');
  });

  it.each([0, 2.5, -3])('slots of %p', (slots) => {
    expect(() => new TripleBuffer({ slots, create: () => 1, label: 'ring' })).toThrow(
      `TripleBuffer "ring": slots must be a positive integer, got ${slots}`,
    );
  });

  it('a create that is not a function', () => {
    expect(() => new TripleBuffer({ create: 5 as unknown as () => number, label: 'ring' })).toThrow(
      'TripleBuffer "ring": create must be a function (slot index -> its data), got 5',
    );
  });
});
