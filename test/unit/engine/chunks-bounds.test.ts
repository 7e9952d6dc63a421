/**
 * The chunk planners refuse plans no machine could run (planRowChunks(2^53 - 1, 1) built chunks
 * until the heap ran out) and framings that are not counts (a hop of 0 gave Infinity or NaN).
 */
import { describe, expect, it } from 'vitest';
import {
  coveredLength,
  frameCount,
  MAX_PLANNED_CHUNKS,
  planFrameChunks,
  planRowChunks,
} from '../../../src/engine/chunks.js';

const TIMEOUT = { timeout: 5_000 };

describe('planRowChunks is bounded', () => {
  it('refuses more than MAX_PLANNED_CHUNKS chunks at once, without building them', TIMEOUT, () => {
    const start = performance.now();
    expect(() => planRowChunks(Number.MAX_SAFE_INTEGER, 1)).toThrow(RangeError);
    expect(() => planRowChunks(MAX_PLANNED_CHUNKS + 1, 1)).toThrow(
      `planRowChunks: ${MAX_PLANNED_CHUNKS + 1} rows in chunks of 1 make ${MAX_PLANNED_CHUNKS + 1} chunks, more than the ${MAX_PLANNED_CHUNKS} a plan may hold; give more rows per chunk`,
    );
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it('still plans up to the bound, and any size in big chunks', TIMEOUT, () => {
    expect(planRowChunks(MAX_PLANNED_CHUNKS, 1)).toHaveLength(MAX_PLANNED_CHUNKS);
    expect(planRowChunks(Number.MAX_SAFE_INTEGER, 2 ** 40)).toHaveLength(Math.ceil(Number.MAX_SAFE_INTEGER / 2 ** 40));
  });

  it.each([0, -1, 1.5, Number.NaN, Infinity])('refuses a batch or maxRows of %p', TIMEOUT, (n) => {
    expect(() => planRowChunks(n, 1)).toThrow(`planRowChunks: batch must be a positive integer, got ${n}`);
    expect(() => planRowChunks(1, n)).toThrow(`planRowChunks: maxRows must be a positive integer, got ${n}`);
  });
});

describe('planFrameChunks is bounded', () => {
  it('refuses a plan of more than MAX_PLANNED_CHUNKS chunks before building it', TIMEOUT, () => {
    const start = performance.now();
    expect(() => planFrameChunks({ length: 2e7, frameLength: 1, hop: 1 }, 1)).toThrow(
      `planFrameChunks: 20000000 frames in chunks of 1 make 20000000 chunks, more than the ${MAX_PLANNED_CHUNKS} a plan may hold; give more frames per chunk`,
    );
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it('the count it bounds is the count it plans', TIMEOUT, () => {
    // Overlapping frames: each chunk after the first adds maxFrames - (ceil(frameLength / hop) - 1) new ones.
    const f = { length: 10_000, frameLength: 16, hop: 4 };
    for (const maxFrames of [4, 5, 7, 100, 5000]) {
      const overlap = Math.ceil(f.frameLength / f.hop) - 1;
      const total = frameCount(f);
      const expected = total <= maxFrames ? 1 : 1 + Math.ceil((total - maxFrames) / (maxFrames - overlap));
      expect(planFrameChunks(f, maxFrames), `maxFrames ${maxFrames}`).toHaveLength(expected);
    }
  });

  it('a null framing is a TypeError naming the call', TIMEOUT, () => {
    expect(() => planFrameChunks(null as never, 4)).toThrow(
      new TypeError('planFrameChunks: the framing must be an object { length, frameLength, hop }, got null'),
    );
  });
});

describe('frameCount and coveredLength check the framing', () => {
  it.each([0, -1, Number.NaN, 0.5])('a hop of %p', TIMEOUT, (hop) => {
    expect(() => frameCount({ length: 10, frameLength: 2, hop })).toThrow(
      new RangeError(`frameCount: hop must be a positive integer, got ${hop}`),
    );
    expect(() => coveredLength({ length: 10, frameLength: 2, hop })).toThrow(
      new RangeError(`coveredLength: hop must be a positive integer, got ${hop}`),
    );
  });

  it('a length or frameLength that is not a count', TIMEOUT, () => {
    expect(() => frameCount({ length: Number.NaN, frameLength: 2, hop: 1 })).toThrow(
      new RangeError('frameCount: length must be a non-negative integer, got NaN'),
    );
    expect(() => frameCount({ length: 10, frameLength: 0, hop: 1 })).toThrow(
      new RangeError('frameCount: frameLength must be a positive integer, got 0'),
    );
    expect(() => frameCount(null as never)).toThrow(TypeError);
  });

  it('valid framings count as before', TIMEOUT, () => {
    expect(frameCount({ length: 100, frameLength: 16, hop: 8 })).toBe(11);
    expect(coveredLength({ length: 100, frameLength: 16, hop: 8 })).toBe(96);
    expect(frameCount({ length: 0, frameLength: 16, hop: 8 })).toBe(0);
    // A hop longer than a frame is a valid framing for counting (planFrameChunks alone needs hop <= frameLength).
    expect(frameCount({ length: 100, frameLength: 4, hop: 10 })).toBe(10);
  });
});
