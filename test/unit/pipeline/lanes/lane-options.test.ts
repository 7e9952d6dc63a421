/**
 * A Lane's descriptor is checked before the driver is asked for anything, so a wrong call names
 * what is wrong on any machine (this suite runs without a GPU: a check that came after the driver
 * would surface as "no CUDA driver" instead).
 */
import { describe, expect, it } from 'vitest';
import { Lane, type LaneDescriptor } from '../../../../src/pipeline/index.js';

const make = (descriptor: unknown): Lane => new Lane(descriptor as LaneDescriptor);

describe('Lane refuses a wrong descriptor before touching the driver', () => {
  it('something other than an object', () => {
    expect(() => make(null)).toThrow('new Lane() takes a descriptor object, got null');
    expect(() => make(3)).toThrow(TypeError);
  });

  it('a misspelt option', () => {
    expect(() => make({ slot: 2, label: 'l' })).toThrow(
      /Lane descriptor\.slot: unknown option \(known: device, context, slots,/,
    );
  });

  it.each([0, 65, 1.5, -1, Number.NaN, '2'])('slots of %p', (slots) => {
    expect(() => make({ slots, label: 'l' })).toThrow(/Lane "l": slots must be an integer in \[1, 64\], got/);
  });

  it.each([-1, 0.5])('an index of %p', (index) => {
    expect(() => make({ index, label: 'l' })).toThrow(/Lane "l": index must be an integer in \[0, /);
  });

  it('streams that are not Streams', () => {
    expect(() => make({ stream: { handle: 1n }, label: 'l' })).toThrow(
      'Lane "l": stream must be a Stream, got a plain Object',
    );
    expect(() => make({ copies: 'both', label: 'l' })).toThrow(
      'Lane "l": copies must be an object { copyIn, copyOut }, got string',
    );
    expect(() => make({ copies: { copyIn: {} }, label: 'l' })).toThrow('Lane "l": copies.copyIn must be a Stream');
  });

  it('pinned arrays that are not a Map, and computeGraphs that is not a boolean', () => {
    expect(() => make({ pinned: [], label: 'l' })).toThrow(
      'Lane "l": pinned must be a Map of ArrayBuffer -> HostBuffer, got a plain Array',
    );
    expect(() => make({ computeGraphs: 1, label: 'l' })).toThrow(
      'Lane "l": computeGraphs must be true or false, got 1',
    );
  });
});
