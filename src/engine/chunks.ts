/**
 * Chunk planning: a job bigger than a lane's capacity runs as several pieces on its lane, one
 * after the other, each written straight into its place in the job's result. CUDA-free.
 *
 * Every built-in flag works per series (a whole-series FFT), so a job splits exactly along its
 * rows: a chunk is a run of whole series, and the stitched result equals the one-shot result.
 * For framed processing of one very long series (overlap-add of windowed frames), planFrameChunks
 * gives chunks of whole frames of the framing the signal layer resolved (its frames and hop, never
 * counted again here) that overlap so that every output sample is computed from all the frames
 * covering it: the stitched output again equals the one-shot output.
 */
import { positiveInteger } from '../runtime/value-checks.js';
import { frameSpan, type FrameLayout } from '../signal/geometry.js';

export type { FrameLayout };

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
  /** Samples the chunk reads (of the extended, padded series): [inputStart, inputStart + inputLength), geometry.ts's frameSpan. */
  inputStart: number;
  inputLength: number;
  /** Output samples this chunk owns (every frame covering them is in the chunk): [outputStart, outputStart + outputLength). */
  outputStart: number;
  outputLength: number;
}

/**
 * Frames a chunk must hold at least: those that cover one sample, ceil(nperseg / hop) (a chunk of
 * fewer could own no output sample).
 */
export function minChunkFrames(layout: FrameLayout): number {
  return Math.ceil(layout.nperseg / layout.hop);
}

/**
 * Plans overlap-add processing of a framing's frames (a geometry of geometry.ts: `layout.frames`
 * frames of nperseg samples every hop samples) in chunks of at most `maxFrames` frames. Consecutive
 * chunks share the frames that straddle their boundary (minChunkFrames - 1 of them), and each output
 * sample is owned by exactly one chunk: one in which every frame covering it ran. Concatenating the
 * chunks' owned outputs gives the samples the frames cover, [0, (frames - 1) * hop + nperseg).
 */
export function planFrameChunks(layout: FrameLayout, maxFrames: number): FrameChunk[] {
  if (typeof layout !== 'object' || layout === null)
    throw new TypeError(
      `planFrameChunks: the framing must be an object { nperseg, hop, frames } (a geometry), got ${layout === null ? 'null' : typeof layout}`,
    );
  const { nperseg, hop, frames: total } = layout;
  positiveInteger(nperseg, 'planFrameChunks: nperseg');
  if (!Number.isSafeInteger(hop) || hop < 1 || hop > nperseg)
    throw new RangeError(`planFrameChunks: hop must be an integer in [1, nperseg = ${nperseg}], got ${hop}`);
  positiveInteger(total, 'planFrameChunks: frames');
  const overlapFrames = minChunkFrames(layout) - 1;
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
  const covered = frameSpan(layout, 0, total).length;
  const chunks: FrameChunk[] = [];
  let frameStart = 0;
  let owned = 0; // first output sample not yet owned
  for (;;) {
    const frames = Math.min(maxFrames, total - frameStart);
    const last = frameStart + frames === total;
    // Sample t is covered by frames ceil((t - nperseg + 1) / hop) .. floor(t / hop); the chunk owns
    // the samples whose covering frames all lie within it: t < (frameStart + frames) * hop, unless last.
    const end = last ? covered : (frameStart + frames) * hop;
    const input = frameSpan(layout, frameStart, frames);
    chunks.push({
      frameStart,
      frames,
      inputStart: input.start,
      inputLength: input.length,
      outputStart: owned,
      outputLength: end - owned,
    });
    if (last) break;
    owned = end;
    // The next chunk starts at the first frame covering `owned`.
    frameStart = Math.max(0, Math.ceil((owned - nperseg + 1) / hop));
  }
  return chunks;
}
