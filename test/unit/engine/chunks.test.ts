import { describe, expect, it } from 'vitest';
import { coveredLength, frameCount, planFrameChunks, planRowChunks, type Framing } from '../../../src/engine/chunks.js';

/** Overlap-add of windowed, "processed" frames normalized by the window envelope: a stand-in for STFT -> mask -> ISTFT. */
function olaFrames(
  x: Float64Array,
  f: Framing,
  frameStart: number,
  frames: number,
  inputStart: number,
): { num: Float64Array; den: Float64Array } {
  const span = (frames - 1) * f.hop + f.frameLength;
  const num = new Float64Array(span);
  const den = new Float64Array(span);
  const w = Float64Array.from(
    { length: f.frameLength },
    (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / f.frameLength),
  );
  for (let k = 0; k < frames; k++) {
    const off = (frameStart + k) * f.hop - inputStart;
    for (let i = 0; i < f.frameLength; i++) {
      // a non-trivial per-frame operation: depends on the frame index and the frame's mean
      const j = k * f.hop + i;
      num[j] = num[j]! + w[i]! * w[i]! * (x[off + i]! * 1.5 + (frameStart + k) * 0.01);
      den[j] = den[j]! + w[i]! * w[i]!;
    }
  }
  return { num, den };
}

function oneShot(x: Float64Array, f: Framing): Float64Array {
  const total = frameCount(f);
  const { num, den } = olaFrames(x, f, 0, total, 0);
  return num.map((v, i) => v / den[i]!);
}

function chunked(x: Float64Array, f: Framing, maxFrames: number): Float64Array {
  const out = new Float64Array(coveredLength(f)).fill(Number.NaN);
  for (const c of planFrameChunks(f, maxFrames)) {
    const input = x.subarray(c.inputStart, c.inputStart + c.inputLength);
    expect(input.length).toBe(c.inputLength);
    const { num, den } = olaFrames(input, f, c.frameStart, c.frames, c.inputStart);
    for (let t = c.outputStart; t < c.outputStart + c.outputLength; t++) {
      if (!Number.isNaN(out[t]!)) throw new Error(`sample ${t} owned twice`);
      out[t] = num[t - c.inputStart]! / den[t - c.inputStart]!;
    }
  }
  return out;
}

describe('planRowChunks', () => {
  it('splits rows into runs of at most maxRows, in order, covering all', () => {
    expect(planRowChunks(5, 2)).toEqual([
      { start: 0, rows: 2 },
      { start: 2, rows: 2 },
      { start: 4, rows: 1 },
    ]);
    expect(planRowChunks(3, 10)).toEqual([{ start: 0, rows: 3 }]);
    expect(() => planRowChunks(3, 0)).toThrow(RangeError);
    expect(() => planRowChunks(0, 1)).toThrow(RangeError);
  });
});

describe('planFrameChunks', () => {
  it('counts frames and the covered length', () => {
    expect(frameCount({ length: 100, frameLength: 16, hop: 8 })).toBe(11);
    expect(coveredLength({ length: 100, frameLength: 16, hop: 8 })).toBe(96);
    expect(frameCount({ length: 10, frameLength: 16, hop: 8 })).toBe(0);
  });

  it('chunked overlap-add equals the one-shot result for many framings (continuity at every boundary)', () => {
    const x = Float64Array.from({ length: 1000 }, () => Math.random() * 2 - 1);
    for (const [frameLength, hop] of [
      [16, 8],
      [16, 4],
      [15, 5],
      [17, 6],
      [32, 32],
      [8, 1],
      [64, 48],
    ] as const) {
      const f = { length: x.length, frameLength, hop };
      const ref = oneShot(x, f);
      const overlap = Math.ceil(frameLength / hop) - 1;
      for (const maxFrames of [overlap + 1, overlap + 2, overlap + 7, 50, 10_000]) {
        const got = chunked(x, f, maxFrames);
        expect(got.length).toBe(ref.length);
        let worst = 0;
        for (let i = 0; i < ref.length; i++) worst = Math.max(worst, Math.abs(got[i]! - ref[i]!)); // NaN (unowned) fails below
        expect(worst, `frame ${frameLength}, hop ${hop}, maxFrames ${maxFrames}`).toBeLessThan(1e-12);
      }
    }
  });

  it('owned outputs tile [0, covered) and inputs stay inside the series', () => {
    const f = { length: 12345, frameLength: 256, hop: 100 };
    const chunks = planFrameChunks(f, 20);
    let next = 0;
    for (const c of chunks) {
      expect(c.outputStart).toBe(next);
      expect(c.outputLength).toBeGreaterThan(0);
      expect(c.inputStart + c.inputLength).toBeLessThanOrEqual(f.length);
      expect(c.outputStart).toBeGreaterThanOrEqual(c.inputStart);
      expect(c.outputStart + c.outputLength).toBeLessThanOrEqual(c.inputStart + c.inputLength);
      next += c.outputLength;
    }
    expect(next).toBe(coveredLength(f));
  });

  it('refuses chunks too small to hold the frames covering one sample', () => {
    expect(() => planFrameChunks({ length: 100, frameLength: 16, hop: 4 }, 3)).toThrow(/at least 4/);
    expect(() => planFrameChunks({ length: 10, frameLength: 16, hop: 4 }, 10)).toThrow(/shorter than one frame/);
    expect(() => planFrameChunks({ length: 100, frameLength: 16, hop: 17 }, 10)).toThrow(/hop/);
  });
});
