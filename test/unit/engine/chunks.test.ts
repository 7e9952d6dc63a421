import { describe, expect, it } from 'vitest';
import { planFrameChunks, planRowChunks } from '../../../src/engine/chunks.js';
import { frameSpan, spectralGeometry, STFT_DEFAULTS, type SpectralGeometry } from '../../../src/signal/geometry.js';

/** The geometry of frames of `nperseg` samples every `hop` over `length` samples, no boundary or padding. */
function framing(length: number, nperseg: number, hop: number): SpectralGeometry {
  const options = { nperseg, noverlap: nperseg - hop, boundary: null, padded: false, window: 'boxcar' };
  return spectralGeometry(length, options, STFT_DEFAULTS);
}

/** Samples the frames of `f` cover. */
const covered = (f: SpectralGeometry): number => frameSpan(f, 0, f.frames).length;

/** Overlap-add of windowed, "processed" frames normalized by the window envelope: a stand-in for STFT -> mask -> ISTFT. */
function olaFrames(
  x: Float64Array,
  f: SpectralGeometry,
  frameStart: number,
  frames: number,
  inputStart: number,
): { num: Float64Array; den: Float64Array } {
  const span = (frames - 1) * f.hop + f.nperseg;
  const num = new Float64Array(span);
  const den = new Float64Array(span);
  const w = Float64Array.from(
    { length: f.nperseg },
    (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / f.nperseg),
  );
  for (let k = 0; k < frames; k++) {
    const off = (frameStart + k) * f.hop - inputStart;
    for (let i = 0; i < f.nperseg; i++) {
      // a non-trivial per-frame operation: depends on the frame index and the frame's mean
      const j = k * f.hop + i;
      num[j] = num[j]! + w[i]! * w[i]! * (x[off + i]! * 1.5 + (frameStart + k) * 0.01);
      den[j] = den[j]! + w[i]! * w[i]!;
    }
  }
  return { num, den };
}

function oneShot(x: Float64Array, f: SpectralGeometry): Float64Array {
  const { num, den } = olaFrames(x, f, 0, f.frames, 0);
  return num.map((v, i) => v / den[i]!);
}

function chunked(x: Float64Array, f: SpectralGeometry, maxFrames: number): Float64Array {
  const out = new Float64Array(covered(f)).fill(Number.NaN);
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
  it("plans the geometry's frames, not a count of its own: the last chunk ends where the frames end", () => {
    const f = framing(100, 16, 8);
    expect([f.frames, covered(f)]).toEqual([11, 96]);
    const last = planFrameChunks(f, 4).at(-1)!;
    expect(last.frameStart + last.frames).toBe(11);
    expect(last.outputStart + last.outputLength).toBe(96);
  });

  it('chunked overlap-add equals the one-shot result for many framings (continuity at every boundary)', () => {
    const x = Float64Array.from({ length: 1000 }, () => Math.random() * 2 - 1);
    for (const [nperseg, hop] of [
      [16, 8],
      [16, 4],
      [15, 5],
      [17, 6],
      [32, 32],
      [8, 1],
      [64, 48],
    ] as const) {
      const f = framing(x.length, nperseg, hop);
      const ref = oneShot(x, f);
      const overlap = Math.ceil(nperseg / hop) - 1;
      for (const maxFrames of [overlap + 1, overlap + 2, overlap + 7, 50, 10_000]) {
        const got = chunked(x, f, maxFrames);
        expect(got.length).toBe(ref.length);
        let worst = 0;
        for (let i = 0; i < ref.length; i++) worst = Math.max(worst, Math.abs(got[i]! - ref[i]!)); // NaN (unowned) fails below
        expect(worst, `nperseg ${nperseg}, hop ${hop}, maxFrames ${maxFrames}`).toBeLessThan(1e-12);
      }
    }
  });

  it('owned outputs tile [0, covered) and inputs stay inside the series', () => {
    const f = framing(12345, 256, 100);
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
    expect(next).toBe(covered(f));
  });

  it('refuses chunks too small to hold the frames covering one sample', () => {
    expect(() => planFrameChunks(framing(100, 16, 4), 3)).toThrow(/at least 4/);
    expect(() => planFrameChunks({ nperseg: 16, hop: 4, frames: 0 }, 10)).toThrow(/frames must be a positive integer/);
    expect(() => planFrameChunks({ nperseg: 16, hop: 17, frames: 10 }, 10)).toThrow(/hop/);
  });
});
