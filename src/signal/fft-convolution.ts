/**
 * The FFT convolution of many series with one set of real taps on the GPU, behind fftconvolve,
 * convolve's FFT method and oaconvolve: either each series padded to a fast whole length, or
 * overlap-save over short blocks (every block of every series in one batched cuFFT call), as
 * fftConvolutionPlan (convolve-blocks.ts) chooses by the bytes each moves. The taps' spectrum is
 * an immutable table per context (taps, length and precision), so a repeated call transforms
 * only the series. Enqueue only: the callers check every argument first.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { Context } from '../runtime/context.js';
import type { LaunchConfig } from '../runtime/kernel.js';
import type { Stream } from '../runtime/stream.js';
import type { RealBuffer } from './buffers.js';
import { fftConvolutionPlan, type BlockFftConvolution } from './convolve-blocks.js';
import { coefficientDigest, coefficientTable } from './filter-tables.js';
import { fastLength } from './morlet.js';
import { COMPLEX_OF, signalWorkspace as ws, type ComplexOf, type Precision } from './workspace.js';
import { BLOCK, elementwise } from './launch.js';

/** Samples one CUDA block of the overlap-save kernels handles (OS_TILE of filter.cu). */
const TILE = 2048;

/** What an FFT convolution reads and writes: `batch` series of `length` samples in x, the window of the full convolution into y. */
export interface FftConvolutionCall {
  readonly x: RealBuffer;
  readonly y: RealBuffer;
  /** The taps, checked (float64). */
  readonly h: Float64Array;
  readonly p: Precision;
  readonly batch: number;
  readonly length: number;
  /** The mode's window of the full convolution (convolutionWindow). */
  readonly window: { readonly start: number; readonly outLength: number; readonly fullLength: number };
  readonly stream: Stream;
}

/** Enqueues y = the window of x convolved with h, through the FFT, on the call's stream. */
export function enqueueFftConvolution(call: FftConvolutionCall): void {
  const { x, h, p, batch, length, window, stream } = call;
  const ctx = x.context;
  const digest = coefficientDigest(h);
  const table = coefficientTable(ctx, 'taps', h, stream, digest);
  const plan = fftConvolutionPlan(length, h.length, window, p, batch, fastLength(window.fullLength));
  const n = plan.kind === 'whole' ? plan.n : plan.nfft;
  const spectrum = tapsSpectrum(ctx, p, table, h.length, digest, n, stream);
  if (plan.kind === 'blocks') overlapSave(call, plan, spectrum);
  else wholeLength(call, n, spectrum);
}

/** Each series zero-padded to n points, one batched transform, the product, one inverse, the window sliced out. */
function wholeLength(call: FftConvolutionCall, n: number, spectrum: DeviceBuffer<ComplexOf<Precision>>): void {
  const { x, y, p, batch, length, window, stream } = call;
  const ctx = x.context;
  const bins = Math.floor(n / 2) + 1;
  const rows = ws.scratch(ctx, stream, 'convolve-rows', p, batch * n);
  const spectra = ws.scratch(ctx, stream, 'convolve-spectra', COMPLEX_OF[p], batch * bins);
  ws.filterKernel(ctx, `fit_rows_${p}`)(elementwise(batch * n, stream), x, rows, batch, length, n);
  ws.realForward(ctx, p, n, batch, rows, spectra, stream);
  product(ctx, p, spectra, spectrum, batch, bins, n, stream);
  ws.realInverse(ctx, p, n, batch, spectra, rows, stream);
  ws.filterKernel(ctx, `slice_rows_${p}`)(
    elementwise(batch * window.outLength, stream),
    rows,
    y,
    batch,
    n,
    window.outLength,
    window.start,
  );
}

/** Overlapping rows of nfft samples gathered from every series, one batched transform of them all, the product, one inverse, each row's valid part scattered into y. */
function overlapSave(
  call: FftConvolutionCall,
  plan: BlockFftConvolution,
  spectrum: DeviceBuffer<ComplexOf<Precision>>,
): void {
  const { x, y, p, batch, length, window, stream } = call;
  const { nfft, step, blocks, first, skip } = plan;
  const ctx = x.context;
  const count = batch * blocks;
  const bins = Math.floor(nfft / 2) + 1;
  const rows = ws.scratch(ctx, stream, 'convolve-rows', p, count * nfft);
  const spectra = ws.scratch(ctx, stream, 'convolve-spectra', COMPLEX_OF[p], count * bins);
  ws.filterKernel(ctx, `os_gather_${p}`)(tiles(count, nfft, stream), x, rows, batch, length, blocks, step, nfft, first);
  ws.realForward(ctx, p, nfft, count, rows, spectra, stream);
  product(ctx, p, spectra, spectrum, count, bins, nfft, stream);
  ws.realInverse(ctx, p, nfft, count, spectra, rows, stream);
  ws.filterKernel(ctx, `os_scatter_${p}`)(
    tiles(count, step, stream),
    rows,
    y,
    batch,
    blocks,
    step,
    nfft,
    skip,
    window.outLength,
  );
}

/** Every row's spectrum times the taps', scaled by 1 / n (cuFFT's inverse is unnormalised), in place. */
function product(
  ctx: Context,
  p: Precision,
  spectra: DeviceBuffer<ComplexOf<Precision>>,
  spectrum: DeviceBuffer<ComplexOf<Precision>>,
  rows: number,
  bins: number,
  n: number,
  stream: Stream,
): void {
  ws.filterKernel(ctx, `os_product_${p}`)(tiles(rows, bins, stream), spectra, spectrum, rows, bins, 1 / n);
}

/** The launch of an overlap-save kernel: one CUDA block per tile of TILE samples of a row (grid-stride past the cap). */
function tiles(rows: number, perRow: number, stream: Stream): LaunchConfig {
  return elementwise(rows * Math.ceil(perRow / TILE) * BLOCK, stream);
}

/**
 * The one-sided spectrum of the taps zero-padded to n points, in precision p: a table of the
 * context, built on first use (the taps' float64 table padded and transformed on `stream`).
 */
function tapsSpectrum(
  ctx: Context,
  p: Precision,
  taps: DeviceBuffer<'f64'>,
  ntaps: number,
  digest: string,
  n: number,
  stream: Stream,
): DeviceBuffer<ComplexOf<Precision>> {
  const bins = Math.floor(n / 2) + 1;
  const dtype = COMPLEX_OF[p];
  return ws.built<ComplexOf<Precision>>(
    ctx,
    `convolve-taps-spectrum:${p}:${n}:${ntaps}:${digest}`,
    stream,
    () => DeviceBuffer.alloc(dtype, bins, { context: ctx, label: `convolve taps spectrum (${n} points)` }),
    (out) => {
      const row = ws.scratch(ctx, stream, 'convolve-kernel-row', p, n);
      ws.filterKernel(ctx, `pad_taps_${p}`)(elementwise(n, stream), taps, row, ntaps, n);
      ws.realForward(ctx, p, n, 1, row, out, stream);
    },
  );
}
