/**
 * scipy.signal.oaconvolve on the GPU, batched over series: convolution by overlap-add. Each series
 * is cut into blocks of `step` samples; every block of every series goes through one batched real
 * FFT of `nfft` points, one product with the taps' spectrum and one inverse; the filtered blocks
 * are summed where they overlap and the mode's window kept. The block length is scipy's
 * (_calc_oa_lens: the optimum −overlap·W₋₁(−1/(2e·overlap)), rounded up to a fast FFT length);
 * where scipy falls back to one FFT of the whole series (equal lengths, one sample, taps more than
 * half the series) and where the taps are longer than the series, this is fftconvolve.
 */
import { resolveStream, type Stream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { complexConvolution, isComplexTaps, type Taps } from './complex-convolution.js';
import { complexCall, type ComplexCallOptions } from './iq.js';
import type { ComplexInput } from './samples.js';
import { convolutionWindow, type ConvolveMode } from './convolve-geometry.js';
import { convolve } from './convolve.js';
import { filterSeries } from './filter-call.js';
import { coefficientTable } from './filter-tables.js';
import { checkTaps } from './firwin.js';
import { fastLength } from './morlet.js';
import { resampledOutput } from './upfirdn.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { elementwise } from './launch.js';

/** Options of oaconvolve. */
export interface OaconvolveOptions {
  /** 'full' (default), 'same' or 'valid', as convolve's. */
  mode?: ConvolveMode | undefined;
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (x's dtype, batch × the mode's length); default a new buffer. Must not be x. */
  output?: RealBuffer | undefined;
}

/** The lower real branch W₋₁(z) of the Lambert W function for z in [−1/e, 0): Halley's iteration from its logarithmic asymptote. */
export function lambertWm1(z: number): number {
  if (!(z >= -1 / Math.E && z < 0)) throw new RangeError(`lambertWm1 needs z in [-1/e, 0), got ${z}`);
  const l = Math.log(-z);
  let w = z > -0.25 ? l - Math.log(-l) : -1 - Math.sqrt(2 * (1 + Math.E * z));
  for (let i = 0; i < 50; i++) {
    const e = Math.exp(w);
    const f = w * e - z;
    const next = w - f / (e * (w + 1) - ((w + 2) * f) / (2 * w + 2));
    if (!Number.isFinite(next)) break;
    const done = Math.abs(next - w) <= 1e-15 * Math.abs(next);
    w = next;
    if (done) break;
  }
  return w;
}

/**
 * The overlap-add blocking of series of `length` samples with `ntaps` taps (scipy's _calc_oa_lens
 * for 1-D, the series the longer): the FFT length and the series samples per block, or undefined
 * where one FFT of the whole series is used instead.
 */
export function overlapAddBlocks(length: number, ntaps: number): { nfft: number; step: number } | undefined {
  if (length === ntaps || length === 1 || ntaps === 1 || ntaps > length || ntaps >= length / 2) return undefined;
  const overlap = ntaps - 1;
  const optimum = -overlap * lambertWm1(-1 / (2 * Math.E * overlap));
  const nfft = fastLength(Math.ceil(optimum));
  if (nfft >= length) return undefined;
  return { nfft, step: nfft - ntaps + 1 };
}

/**
 * scipy.signal.oaconvolve(x, taps, mode) for each series of x: batch × the mode's length. Complex x
 * (c64, c128, I/Q) or complex taps ({ re, im }) give a complex result (complex-convolution.ts).
 */
export function oaconvolve(x: RealBuffer, taps: ArrayLike<number>, options?: OaconvolveOptions): RealBuffer;
export function oaconvolve(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options?: ComplexCallOptions & { mode?: ConvolveMode | undefined },
): ComplexBuffer;
export function oaconvolve(
  x: RealBuffer | ComplexInput,
  taps: Taps,
  options: OaconvolveOptions | (ComplexCallOptions & { mode?: ConvolveMode | undefined }) = {},
): RealBuffer | ComplexBuffer {
  if (isComplexTaps(taps) || complexCall(x, options, 'oaconvolve'))
    return complexConvolution(x, taps, options as ComplexCallOptions, 'oaconvolve', (planes, h, o) => {
      oaconvolve(planes, h, o);
    });
  return oaconvolveReal(x as RealBuffer, taps, options as OaconvolveOptions);
}

function oaconvolveReal(x: RealBuffer, taps: ArrayLike<number>, options: OaconvolveOptions): RealBuffer {
  const h = checkTaps(taps, 'oaconvolve');
  const { p, batch, length } = filterSeries(x, options.batch, 'oaconvolve');
  const window = convolutionWindow(length, h.length, options.mode ?? 'full');
  const blocking = overlapAddBlocks(length, h.length);
  if (!blocking) return convolve(x, h, { ...options, method: 'fft' });
  const { nfft, step } = blocking;
  const blocks = Math.ceil(length / step);
  const bins = Math.floor(nfft / 2) + 1;
  const ctx = x.context;
  const stream = resolveStream(ctx, options.stream);
  if (batch * blocks * nfft > 2 ** 31 - 1)
    throw new RangeError(`oaconvolve: ${batch} series × ${blocks} blocks × ${nfft} points exceeds 2^31 − 1 per call`);
  const y = resampledOutput(x, batch * window.outLength, options.output, stream, 'oaconvolve');
  const complex = COMPLEX_OF[p];
  const rows = ws.scratch(ctx, stream, 'oaconvolve-rows', p, batch * blocks * nfft);
  const spectra = ws.scratch(ctx, stream, 'oaconvolve-spectra', complex, batch * blocks * bins);
  const kernelRow = ws.scratch(ctx, stream, 'oaconvolve-kernel-row', p, nfft);
  const kernelSpectrum = ws.scratch(ctx, stream, 'oaconvolve-kernel-spectrum', complex, bins);
  const table = coefficientTable(ctx, 'taps', h, stream);
  ws.filterKernel(ctx, `oa_blocks_${p}`)(
    elementwise(batch * blocks * nfft, stream),
    x,
    rows,
    batch,
    length,
    blocks,
    step,
    nfft,
  );
  ws.filterKernel(ctx, `pad_taps_${p}`)(elementwise(nfft, stream), table, kernelRow, h.length, nfft);
  ws.realForward(ctx, p, nfft, batch * blocks, rows, spectra, stream);
  ws.realForward(ctx, p, nfft, 1, kernelRow, kernelSpectrum, stream);
  ws.filterKernel(ctx, `spectrum_product_${p}`)(
    elementwise(batch * blocks * bins, stream),
    spectra,
    kernelSpectrum,
    batch * blocks,
    bins,
    1 / nfft,
  );
  ws.realInverse(ctx, p, nfft, batch * blocks, spectra, rows, stream);
  ws.filterKernel(ctx, `oa_sum_${p}`)(
    elementwise(batch * window.outLength, stream),
    rows,
    y,
    batch,
    blocks,
    step,
    nfft,
    window.outLength,
    window.start,
  );
  return y;
}
