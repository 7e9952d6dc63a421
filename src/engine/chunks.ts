/**
 * Chunk planning: a job bigger than a lane's capacity runs as several pieces on its lane, one
 * after the other, each written straight into its place in the job's result. CUDA-free.
 *
 * Every built-in flag works per series (a whole-series FFT), so a job splits exactly along its
 * rows: a chunk is a run of whole series, and the stitched result equals the one-shot result.
 * For framed processing of one very long series (overlap-add of windowed frames), planFrameChunks
 * gives chunks of whole frames that overlap so that every output sample is computed from all the
 * frames covering it: the stitched output again equals the one-shot output.
 */
import { positiveInteger } from '../runtime/value-checks.js';

/** A run of whole series: rows [start, start + rows). */
export interface RowChunk {
  start: number;
  rows: number;
}

/** Splits `batch` rows into chunks of at most `maxRows` rows (the last may be smaller). */
export function planRowChunks(batch: number, maxRows: number): RowChunk[] {
  positiveInteger(batch, 'planRowChunks: batch');
  positiveInteger(maxRows, 'planRowChunks: maxRows');
  const chunks: RowChunk[] = [];
  for (let start = 0; start < batch; start += maxRows) chunks.push({ start, rows: Math.min(maxRows, batch - start) });
  return chunks;
}

/** One chunk of framed processing over a long series. */
export interface FrameChunk {
  /** Frames [frameStart, frameStart + frames) of the whole series run in this chunk. */
  frameStart: number;
  frames: number;
  /** Input samples the chunk reads: [inputStart, inputStart + inputLength). */
  inputStart: number;
  inputLength: number;
  /** Output samples this chunk owns (every frame covering them is in the chunk): [outputStart, outputStart + outputLength). */
  outputStart: number;
  outputLength: number;
}

/** The framing of a series: frames of `frameLength` samples every `hop` samples. */
export interface Framing {
  /** Samples in the series. */
  length: number;
  frameLength: number;
  hop: number;
}

/** Frames that fit in the series: 1 + floor((length - frameLength) / hop). */
export function frameCount(f: Framing): number {
  if (f.length < f.frameLength) return 0;
  return 1 + Math.floor((f.length - f.frameLength) / f.hop);
}

/** Output samples the frames cover: (frames - 1) * hop + frameLength (a tail shorter than a hop is not covered). */
export function coveredLength(f: Framing): number {
  const frames = frameCount(f);
  return frames === 0 ? 0 : (frames - 1) * f.hop + f.frameLength;
}

/**
 * Plans overlap-add processing of one series in chunks of at most `maxFrames` frames. Consecutive
 * chunks share the frames that straddle their boundary (ceil(frameLength / hop) - 1 of them), and
 * each output sample is owned by exactly one chunk: one in which every frame covering it ran.
 * Concatenating the chunks' owned outputs gives samples [0, coveredLength).
 */
export function planFrameChunks(f: Framing, maxFrames: number): FrameChunk[] {
  const { frameLength, hop } = f;
  if (!Number.isSafeInteger(f.length) || f.length < 0) throw new RangeError(`planFrameChunks: length must be a non-negative integer, got ${f.length}`);
  positiveInteger(frameLength, 'planFrameChunks: frameLength');
  if (!Number.isSafeInteger(hop) || hop < 1 || hop > frameLength) throw new RangeError(`planFrameChunks: hop must be an integer in [1, frameLength], got ${hop}`);
  const total = frameCount(f);
  if (total === 0) throw new RangeError(`planFrameChunks: the series (${f.length} samples) is shorter than one frame (${frameLength})`);
  const overlapFrames = Math.ceil(frameLength / hop) - 1;
  if (!Number.isSafeInteger(maxFrames) || maxFrames < overlapFrames + 1)
    throw new RangeError(`planFrameChunks: maxFrames must be at least ${overlapFrames + 1} (frames overlapping one sample), got ${maxFrames}`);
  const covered = coveredLength(f);
  const chunks: FrameChunk[] = [];
  let frameStart = 0;
  let owned = 0; // first output sample not yet owned
  for (;;) {
    const frames = Math.min(maxFrames, total - frameStart);
    const last = frameStart + frames === total;
    // Sample t is covered by frames ceil((t - frameLength + 1) / hop) .. floor(t / hop); the chunk owns
    // the samples whose covering frames all lie within it: t < (frameStart + frames) * hop, unless last.
    const end = last ? covered : (frameStart + frames) * hop;
    chunks.push({
      frameStart,
      frames,
      inputStart: frameStart * hop,
      inputLength: (frames - 1) * hop + frameLength,
      outputStart: owned,
      outputLength: end - owned,
    });
    if (last) break;
    owned = end;
    // The next chunk starts at the first frame covering `owned`.
    frameStart = Math.max(0, Math.ceil((owned - frameLength + 1) / hop));
  }
  return chunks;
}
