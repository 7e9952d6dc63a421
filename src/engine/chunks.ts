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

/**
 * Most chunks a plan may hold. Each chunk is one run on a lane, sized to fill the lane: a job
 * needing more than a million of them holds more data than any machine, so a bigger plan is a
 * mistake in its arguments (planRowChunks(2^53 - 1, 1) built chunks until the heap ran out).
 */
export const MAX_PLANNED_CHUNKS = 1 << 20;

/** Splits `batch` rows into chunks of at most `maxRows` rows (the last may be smaller); at most MAX_PLANNED_CHUNKS of them. */
export function planRowChunks(batch: number, maxRows: number): RowChunk[] {
  positiveInteger(batch, 'planRowChunks: batch');
  positiveInteger(maxRows, 'planRowChunks: maxRows');
  const count = Math.ceil(batch / maxRows);
  if (count > MAX_PLANNED_CHUNKS)
    throw new RangeError(
      `planRowChunks: ${batch} rows in chunks of ${maxRows} make ${count} chunks, more than the ${MAX_PLANNED_CHUNKS} a plan may hold; give more rows per chunk`,
    );
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

/**
 * The framing's fields checked (what: the caller, for the message): a hop of 0 made frameCount
 * Infinity or NaN, a negative one a negative count, and null was read as an object.
 */
function checkFraming(f: Framing, what: string): void {
  if (typeof f !== 'object' || f === null)
    throw new TypeError(
      `${what}: the framing must be an object { length, frameLength, hop }, got ${f === null ? 'null' : typeof f}`,
    );
  if (!Number.isSafeInteger(f.length) || f.length < 0)
    throw new RangeError(`${what}: length must be a non-negative integer, got ${f.length}`);
  positiveInteger(f.frameLength, `${what}: frameLength`);
  positiveInteger(f.hop, `${what}: hop`);
}

/** Frames that fit in the series: 1 + floor((length - frameLength) / hop). Throws a RangeError for a length, frameLength or hop that is not a count. */
export function frameCount(f: Framing): number {
  checkFraming(f, 'frameCount');
  if (f.length < f.frameLength) return 0;
  return 1 + Math.floor((f.length - f.frameLength) / f.hop);
}

/** Output samples the frames cover: (frames - 1) * hop + frameLength (a tail shorter than a hop is not covered). Checks `f` as frameCount() does. */
export function coveredLength(f: Framing): number {
  checkFraming(f, 'coveredLength');
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
  if (typeof f !== 'object' || f === null)
    throw new TypeError(
      `planFrameChunks: the framing must be an object { length, frameLength, hop }, got ${f === null ? 'null' : typeof f}`,
    );
  const { frameLength, hop } = f;
  if (!Number.isSafeInteger(f.length) || f.length < 0)
    throw new RangeError(`planFrameChunks: length must be a non-negative integer, got ${f.length}`);
  positiveInteger(frameLength, 'planFrameChunks: frameLength');
  if (!Number.isSafeInteger(hop) || hop < 1 || hop > frameLength)
    throw new RangeError(`planFrameChunks: hop must be an integer in [1, frameLength], got ${hop}`);
  const total = frameCount(f);
  if (total === 0)
    throw new RangeError(
      `planFrameChunks: the series (${f.length} samples) is shorter than one frame (${frameLength})`,
    );
  const overlapFrames = Math.ceil(frameLength / hop) - 1;
  if (!Number.isSafeInteger(maxFrames) || maxFrames < overlapFrames + 1)
    throw new RangeError(
      `planFrameChunks: maxFrames must be at least ${overlapFrames + 1} (frames overlapping one sample), got ${maxFrames}`,
    );
  // Each chunk after the first starts maxFrames - overlapFrames frames after the one before it.
  // Bounded like planRowChunks: 2e7 frames at one new frame per chunk took 16 s and gigabytes.
  const count = total <= maxFrames ? 1 : 1 + Math.ceil((total - maxFrames) / (maxFrames - overlapFrames));
  if (count > MAX_PLANNED_CHUNKS)
    throw new RangeError(
      `planFrameChunks: ${total} frames in chunks of ${maxFrames} make ${count} chunks, more than the ${MAX_PLANNED_CHUNKS} a plan may hold; give more frames per chunk`,
    );
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
