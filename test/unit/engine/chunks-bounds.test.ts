/**
 * The chunk planners refuse plans no machine could run (planRowChunks(2^53 - 1, 1) built chunks
 * until the heap ran out) and framings that are not counts (a hop of 0 gave Infinity or NaN).
 */
import { describe, expect, it } from 'vitest';
import { MAX_PLANNED_CHUNKS, minChunkFrames, planFrameChunks, planRowChunks } from '../../../src/engine/chunks.js';

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
    expect(() => planFrameChunks({ nperseg: 1, hop: 1, frames: 2e7 }, 1)).toThrow(
      `planFrameChunks: 20000000 frames in chunks of 1 make 20000000 chunks, more than the ${MAX_PLANNED_CHUNKS} a plan may hold; give more frames per chunk`,
    );
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it('the count it bounds is the count it plans', TIMEOUT, () => {
    // Overlapping frames: each chunk after the first adds maxFrames - (ceil(nperseg / hop) - 1) new ones.
    const f = { nperseg: 16, hop: 4, frames: 2497 };
    expect(minChunkFrames(f)).toBe(4);
    for (const maxFrames of [4, 5, 7, 100, 5000]) {
      const overlap = Math.ceil(f.nperseg / f.hop) - 1;
      const expected = f.frames <= maxFrames ? 1 : 1 + Math.ceil((f.frames - maxFrames) / (maxFrames - overlap));
      expect(planFrameChunks(f, maxFrames), `maxFrames ${maxFrames}`).toHaveLength(expected);
    }
  });

  it('a null framing is a TypeError naming the call', TIMEOUT, () => {
    expect(() => planFrameChunks(null as never, 4)).toThrow(
      new TypeError('planFrameChunks: the framing must be an object { nperseg, hop, frames } (a geometry), got null'),
    );
  });
});

describe('planFrameChunks checks the framing it is given', () => {
  it.each([0, -1, Number.NaN, 0.5, 17])('a hop of %p', TIMEOUT, (hop) => {
    expect(() => planFrameChunks({ nperseg: 16, hop, frames: 10 }, 16)).toThrow(
      new RangeError(`planFrameChunks: hop must be an integer in [1, nperseg = 16], got ${hop}`),
    );
  });

  it('frames or an nperseg that is not a count', TIMEOUT, () => {
    for (const frames of [0, -1, Number.NaN, 2.5, Infinity])
      expect(() => planFrameChunks({ nperseg: 4, hop: 2, frames }, 8)).toThrow(
        new RangeError(`planFrameChunks: frames must be a positive integer, got ${frames}`),
      );
    expect(() => planFrameChunks({ nperseg: 0, hop: 1, frames: 4 }, 8)).toThrow(
      new RangeError('planFrameChunks: nperseg must be a positive integer, got 0'),
    );
  });

  it('a hop equal to nperseg is taken (frames side by side)', TIMEOUT, () => {
    expect(planFrameChunks({ nperseg: 16, hop: 16, frames: 3 }, 1)).toEqual([
      { frameStart: 0, frames: 1, inputStart: 0, inputLength: 16, outputStart: 0, outputLength: 16 },
      { frameStart: 1, frames: 1, inputStart: 16, inputLength: 16, outputStart: 16, outputLength: 16 },
      { frameStart: 2, frames: 1, inputStart: 32, inputLength: 16, outputStart: 32, outputLength: 16 },
    ]);
  });
});
