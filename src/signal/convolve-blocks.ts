/**
 * How the GPU runs an FFT convolution (fftconvolve, convolve's FFT method, oaconvolve): one
 * transform of the whole padded length per series, or overlap-save over blocks, every block of
 * every series in one batched transform of a short length. Pure: no CUDA.
 *
 * The choice is by the elements each way moves through device memory, since every step is
 * memory-bound: a cuFFT transform short enough to run from shared memory reads and writes its data
 * once, a long one (a 1M-point series) once per pass, and each pass over a long transform is
 * strided, so it moves its bytes more slowly than a short one. Blocks pay for their overlap
 * instead: each row of nfft samples yields only step = nfft − ntaps + 1 outputs.
 */
import type { Precision } from '../runtime/fft/precision.js';

/** The whole-length FFT convolution: each series and the taps padded to `n` points. */
export interface WholeFftConvolution {
  readonly kind: 'whole';
  /** The transform length: a 7-smooth length at least the full convolution's. */
  readonly n: number;
}

/**
 * Overlap-save: row q of series b holds samples first + q·step .. first + q·step + nfft − 1 (zero
 * outside the series); after the circular convolution with the taps, its samples skip .. nfft − 1
 * are outputs q·step .. q·step + step − 1 of the mode's window.
 */
export interface BlockFftConvolution {
  readonly kind: 'blocks';
  /** The transform length of every row. */
  readonly nfft: number;
  /** Outputs per row: nfft − ntaps + 1. */
  readonly step: number;
  /** Rows per series: ceil(outLength / step). */
  readonly blocks: number;
  /** The series sample of row 0's first point: the window's start − (ntaps − 1), negative at the head. */
  readonly first: number;
  /** Leading samples of each row that the circular convolution wraps around: ntaps − 1. */
  readonly skip: number;
}

/** How an FFT convolution runs on the GPU. */
export type FftConvolutionPlan = WholeFftConvolution | BlockFftConvolution;

/**
 * The longest real transform (points) cuFFT runs in one kernel from shared memory, by precision:
 * measured on an H100 (see fftPasses); a double element takes twice the shared memory.
 */
export const SINGLE_PASS_POINTS: Readonly<Record<Precision, number>> = { f32: 16384, f64: 8192 };

/** The most elements one batched call handles: cuFFT's and the kernels' int sizes. */
const MAX_ELEMENTS = 2 ** 31 - 1;

/** A pass of a multi-pass transform against one from shared memory (strided reads and writes, twiddles per pass). */
const WHOLE_PASS_COST = 1.5;

/**
 * The relative cost per point of an `n`-point real transform whose single-pass limit is `single`:
 * 1 while it runs from shared memory; past that, one pass per factor of the single-pass length,
 * each at the strided access's lower speed (WHOLE_PASS_COST).
 */
export function fftPasses(n: number, single: number): number {
  if (n <= single) return 1;
  return Math.ceil(Math.log(n) / Math.log(single)) * WHOLE_PASS_COST;
}

/**
 * Elements moved through device memory per series by the steps around `rows` points of
 * transforms of length `n` (per series): the rows written by the padding kernel, each transform's
 * passes (read and write), the spectrum product (read and write) and the inverse's passes.
 */
function transformCost(rows: number, n: number, single: number): number {
  return rows * (3 + 4 * fftPasses(n, single));
}

/** The candidate block lengths: 2^k times 1, 3, 5 or 7, from `min` (and 16) to `max`, ascending. */
export function blockLengths(min: number, max: number): number[] {
  const out: number[] = [];
  for (const odd of [1, 3, 5, 7]) for (let n = odd; n <= max; n *= 2) if (n >= min && n >= 16) out.push(n);
  return out.sort((a, b) => a - b);
}

/**
 * The plan for `batch` series of `length` samples convolved with `ntaps` taps, keeping the window
 * [start, start + outLength) of the full convolution (convolutionWindow), at precision `p`: blocks
 * where they move fewer elements than the whole-length transform of `wholeLength` points
 * (fastLength of the full length) and fit one call, the whole length otherwise. `single` is the
 * single-pass length (SINGLE_PASS_POINTS of p; the CPU tests pass a short one to reach blocks
 * with short series).
 */
export function fftConvolutionPlan(
  length: number,
  ntaps: number,
  window: { readonly start: number; readonly outLength: number },
  p: Precision,
  batch: number,
  wholeLength: number,
  single: number = SINGLE_PASS_POINTS[p],
): FftConvolutionPlan {
  const whole: WholeFftConvolution = { kind: 'whole', n: wholeLength };
  // Each block transform also repeats the taps' spectrum product and launch; below a few blocks the whole length wins anyway.
  if (wholeLength <= single) return whole;
  let best: BlockFftConvolution | undefined;
  let bestCost = transformCost(wholeLength, wholeLength, single);
  // Blocks of at least a sixteenth of the single-pass length: shorter rows only add per-row work
  // (a tile of the kernels, a twiddle set of cuFFT) for no fewer elements moved.
  for (const nfft of blockLengths(Math.max(ntaps + 1, single / 16), single)) {
    const step = nfft - ntaps + 1;
    const blocks = Math.ceil(window.outLength / step);
    if (batch * blocks * nfft > MAX_ELEMENTS) continue;
    const cost = transformCost(blocks * nfft, nfft, single);
    if (cost < bestCost) {
      bestCost = cost;
      best = { kind: 'blocks', nfft, step, blocks, first: window.start - (ntaps - 1), skip: ntaps - 1 };
    }
  }
  return best ?? whole;
}
