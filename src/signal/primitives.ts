/**
 * The signal layer's building blocks on device buffers, for the job engine and for users:
 * device buffers in, device buffers out, enqueue only (no host synchronisation, no device
 * allocation once warm). Series are row-major: `batch` series of `length` samples.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { bandRanges } from './cycles.js';
import { positiveInteger } from '../runtime/value-checks.js';
import { bandBins, checkDetrend, checkFs, detrendCode, type DetrendType } from './geometry.js';
import type { WindowSpec } from './window.js';
import { isSampleDType, sampleScale, type SampleDType, type SignalInput } from './samples.js';
import { COMPLEX_OF, signalWorkspace as ws, type Precision } from './workspace.js';
import { elementwise, expectBuffer, perRow, precisionOf } from './launch.js';

export type { RealBuffer, ComplexBuffer };

/** The shape of a batch of series and the stream to enqueue on. */
export interface SeriesOptions {
  /** B, the number of series. */
  batch: number;
  /** N, samples per series. */
  length: number;
  /** The stream to enqueue on; default the buffers' context's default stream (resolveStream). */
  stream?: Stream | undefined;
}

/** Bins of the one-sided spectrum of an N-point real transform: N/2 + 1. */
export function halfBins(length: number): number {
  return Math.floor(length / 2) + 1;
}

function shape(o: SeriesOptions): { batch: number; length: number } {
  if (typeof o !== 'object' || o === null) throw new TypeError('options { batch, length } are required');
  const batch = positiveInteger(o.batch, 'batch');
  const length = positiveInteger(o.length, 'length');
  if (batch * length > 2 ** 31 - 1)
    throw new RangeError(`batch x length = ${batch * length} exceeds 2^31 - 1 samples per call`);
  return { batch, length };
}

function realPrecision(buffer: RealBuffer, what: string): Precision {
  const p = precisionOf(buffer, what);
  if (buffer.dtype !== p)
    throw new TypeError(`${what} "${buffer.label}" must be a real buffer (f32 or f64), not ${buffer.dtype}`);
  return p;
}

function complexPrecision(buffer: ComplexBuffer, what: string): Precision {
  const p = precisionOf(buffer, what);
  if (buffer.dtype !== COMPLEX_OF[p])
    throw new TypeError(`${what} "${buffer.label}" must be a complex buffer (c64 or c128), not ${buffer.dtype}`);
  return p;
}

/** Samples per block of the detrend_window kernel (its `tile`). */
const DETREND_TILE = 2048;
/** Bins per block of the dominant search's first phase. */
const DOMINANT_CHUNK = 2048;

export interface DetrendWindowOptions extends SeriesOptions {
  /** 16-bit input only: each sample is multiplied by this as it is read (default 1/32768 for i16, 1 for f16/bf16). */
  scale?: number | undefined;
  /** Remove the mean ('constant') or the least-squares line ('linear') of each whole series; false: neither. */
  detrend: DetrendType;
  /** Multiply by this window of `length` points (periodic, scipy's get_window); null: no window. */
  window: WindowSpec | null;
}

/**
 * Whole-series detrend and window in one elementwise pass (plus one reduction pass for the
 * detrend statistics): output[b, t] = (x[b, t] - trend_b(t)) * w[t]. `output` may be `input`.
 * 16-bit input (i16, f16, bf16) is converted (times `scale`) as these kernels read it, into an
 * f32 or f64 `output`.
 */
export function detrendWindow(input: SignalInput, output: RealBuffer, options: DetrendWindowOptions): void {
  const { batch, length } = shape(options);
  const n = batch * length;
  let p: Precision;
  let sample: SampleDType | undefined;
  let scale = 1;
  if (input instanceof DeviceBuffer && isSampleDType(input.dtype)) {
    sample = input.dtype;
    p = realPrecision(output, 'detrendWindow output');
    scale = sampleScale(sample, options.scale, 'detrendWindow scale');
    expectBuffer(input, sample, n, 'detrendWindow input');
  } else {
    p = realPrecision(input as RealBuffer, 'detrendWindow input');
    if (options.scale !== undefined) throw new TypeError('detrendWindow scale applies to 16-bit input only');
    expectBuffer(input, p, n, 'detrendWindow input');
  }
  expectBuffer(output, p, n, 'detrendWindow output');
  // Checked above: without a 16-bit type the input is real of precision p.
  const real = input as RealBuffer;
  const detrend = checkDetrend(options.detrend, 'detrendWindow detrend');
  const ctx = input.context;
  const stream = resolveStream(ctx, options.stream);
  const window =
    options.window === null || options.window === undefined ? null : ws.window(ctx, options.window, length, p, stream);
  const code = detrendCode(detrend);
  let stats: DeviceBuffer<'f64'> | null = null;
  if (code !== 0) {
    stats = ws.scratch(ctx, stream, 'detrend-stats', 'f64', 2 * batch);
    stats.memset(0, { stream });
    // Chunks of 4096 samples: enough blocks to fill the GPU when a few long series are detrended.
    const chunk = 4096;
    const blocks = batch * Math.ceil(length / chunk);
    if (sample)
      ws.kernelNamed(ctx, `series_stats_${sample}`)(perRow(blocks, stream), input, stats, length, batch, chunk, scale);
    else ws.kernel(ctx, 'series_stats', p)(perRow(blocks, stream), real, stats, length, batch, chunk);
  }
  // Unused pointers still need a live buffer of the right context: pass the output for 16-bit input, else the input.
  const config = perRow(batch * Math.ceil(length / DETREND_TILE), stream);
  if (sample)
    ws.kernelNamed(ctx, `detrend_window_${sample}_${p}`)(
      config,
      input,
      output,
      stats ?? output,
      window ?? output,
      length,
      batch,
      code,
      window ? 1 : 0,
      DETREND_TILE,
      scale,
    );
  else
    ws.kernel(ctx, 'detrend_window', p)(
      config,
      real,
      output,
      // Without detrending or a window the kernel reads neither table: any device address fills the slot.
      stats ?? (real as DeviceBuffer<'f64'>),
      window ?? real,
      length,
      batch,
      code,
      window ? 1 : 0,
      DETREND_TILE,
    );
}

/** Forward real FFT of each series: output[b] = rfft(input[b]) (N/2+1 bins, unnormalised, e^-2πi). */
export function rfft(input: RealBuffer, output: ComplexBuffer, options: SeriesOptions): void {
  const { batch, length } = shape(options);
  const p = realPrecision(input, 'rfft input');
  expectBuffer(input, p, batch * length, 'rfft input');
  expectBuffer(output, COMPLEX_OF[p], batch * halfBins(length), 'rfft output');
  ws.realForward(input.context, p, length, batch, input, output, resolveStream(input.context, options.stream));
}

export interface IrfftOptions extends SeriesOptions {
  /** Divide by N so that irfft(rfft(x)) = x (default true); false leaves cuFFT's N·x. */
  normalize?: boolean | undefined;
}

/**
 * Inverse real FFT of each one-sided spectrum into N samples. cuFFT's complex-to-real transform
 * overwrites `spectrum` (also out of place): copy it first if you still need it.
 */
export function irfft(spectrum: ComplexBuffer, output: RealBuffer, options: IrfftOptions): void {
  const { batch, length } = shape(options);
  const p = complexPrecision(spectrum, 'irfft spectrum');
  expectBuffer(spectrum, COMPLEX_OF[p], batch * halfBins(length), 'irfft spectrum');
  expectBuffer(output, p, batch * length, 'irfft output');
  const stream = resolveStream(spectrum.context, options.stream);
  ws.realInverse(spectrum.context, p, length, batch, spectrum, output, stream);
  if (options.normalize ?? true)
    ws.kernel(spectrum.context, 'scale', p)(elementwise(batch * length, stream), output, batch, length, 1 / length);
}

export interface BandMaskOptions extends SeriesOptions {
  /** Sampling frequency in Hz (default 1). */
  fs?: number | undefined;
  /** Keep bins whose frequency k·fs/N lies in [lo, hi] (0 <= lo <= hi <= fs/2); zero the rest. */
  band: readonly [number, number];
  /** Write here instead of in place. */
  output?: ComplexBuffer | undefined;
  /** Multiply kept bins by this (default 1): pass 1/N to fold irfft's normalisation into the mask. */
  scale?: number | undefined;
}

/** Zeroes the bins of one-sided spectra (B x (N/2+1)) outside a band. Returns the buffer written. */
export function bandMask(spectrum: ComplexBuffer, options: BandMaskOptions): ComplexBuffer {
  const { batch, length } = shape(options);
  const p = complexPrecision(spectrum, 'bandMask spectrum');
  const bins = halfBins(length);
  expectBuffer(spectrum, COMPLEX_OF[p], batch * bins, 'bandMask spectrum');
  const output = options.output ?? spectrum;
  expectBuffer(output, COMPLEX_OF[p], batch * bins, 'bandMask output');
  const [k0, k1] = bandBins(options.band, checkFs(options.fs ?? 1), length, 'band');
  const scale = options.scale ?? 1;
  if (!Number.isFinite(scale)) throw new RangeError(`bandMask scale must be finite, got ${scale}`);
  ws.kernel(spectrum.context, 'band_mask', p)(
    elementwise(batch * bins, resolveStream(spectrum.context, options.stream)),
    spectrum,
    output,
    batch,
    bins,
    k0,
    k1,
    scale,
  );
  return output;
}

export interface BandMaskManyOptions extends SeriesOptions {
  fs?: number | undefined;
  /** Bands [lo, hi] in Hz (0 <= lo <= hi <= fs/2): one masked copy of each spectrum per band. */
  bands: readonly (readonly [number, number])[];
  /** Multiply kept bins by this (default 1; 1/N folds irfft's normalisation in). */
  scale?: number | undefined;
}

/**
 * One masked copy of each one-sided spectrum per band, in one launch: output is B x bands x (N/2+1)
 * (row b*bands + q keeps band q of series b), ready for one batched irfft of B·bands rows.
 */
export function bandMaskMany(spectrum: ComplexBuffer, output: ComplexBuffer, options: BandMaskManyOptions): void {
  const { batch, length } = shape(options);
  const p = complexPrecision(spectrum, 'bandMaskMany spectrum');
  const bins = halfBins(length);
  expectBuffer(spectrum, COMPLEX_OF[p], batch * bins, 'bandMaskMany spectrum');
  const fs = checkFs(options.fs ?? 1);
  const nb = Array.isArray(options.bands) ? options.bands.length : 0;
  expectBuffer(output, COMPLEX_OF[p], batch * Math.max(1, nb) * bins, 'bandMaskMany output');
  const scale = options.scale ?? 1;
  if (!Number.isFinite(scale)) throw new RangeError(`bandMaskMany scale must be finite, got ${scale}`);
  const stream = resolveStream(spectrum.context, options.stream);
  const ranges = ws.table(
    spectrum.context,
    `bands:${fs}:${length}:${JSON.stringify(options.bands)}`,
    'i32',
    stream,
    () => bandRanges(options.bands, fs, length),
  );
  ws.kernel(spectrum.context, 'band_mask_many', p)(
    elementwise(batch * nb * bins, stream),
    spectrum,
    output,
    ranges,
    batch,
    bins,
    nb,
    scale,
  );
}

export interface MagnitudeOptions extends SeriesOptions {
  /** The first `bins` bins of each spectrum (<= N/2+1). */
  bins: number;
  /** Multiply by this (default 1; e.g. 2/N for amplitudes). */
  scale?: number | undefined;
}

/** |X| of the first `bins` bins of each one-sided spectrum: output is B x bins reals. */
export function spectrumMagnitude(spectrum: ComplexBuffer, output: RealBuffer, options: MagnitudeOptions): void {
  const { batch, length } = shape(options);
  const p = complexPrecision(spectrum, 'spectrumMagnitude spectrum');
  const rowBins = halfBins(length);
  const bins = positiveInteger(options.bins, 'bins');
  if (bins > rowBins)
    throw new RangeError(`bins = ${bins} exceeds the ${rowBins} bins of an ${length}-point real spectrum`);
  expectBuffer(spectrum, COMPLEX_OF[p], batch * rowBins, 'spectrumMagnitude spectrum');
  expectBuffer(output, p, batch * bins, 'spectrumMagnitude output');
  ws.kernel(spectrum.context, 'magnitude', p)(
    elementwise(batch * bins, resolveStream(spectrum.context, options.stream)),
    spectrum,
    output,
    batch,
    rowBins,
    bins,
    options.scale ?? 1,
  );
}

export interface BandPowersOptions extends SeriesOptions {
  fs?: number | undefined;
  /** Bands [lo, hi] in Hz, 0 <= lo <= hi <= fs/2. */
  bands: readonly (readonly [number, number])[];
}

/**
 * Band powers of one-sided spectra into `output` (f64, B x bands): for each band the sum over its
 * bins k (k·fs/N in [lo, hi]) of c_k |X_k|^2 / N^2, c_k = 2 except at DC and an even N's Nyquist.
 * Over all bins this is mean(x^2) of the transformed series (one-sided Parseval); a cosine of
 * amplitude A centred on a bin contributes A^2/2.
 */
export function bandPowers(spectrum: ComplexBuffer, output: DeviceBuffer<'f64'>, options: BandPowersOptions): void {
  const { batch, length } = shape(options);
  const p = complexPrecision(spectrum, 'bandPowers spectrum');
  const bins = halfBins(length);
  expectBuffer(spectrum, COMPLEX_OF[p], batch * bins, 'bandPowers spectrum');
  const fs = checkFs(options.fs ?? 1);
  const nb = Array.isArray(options.bands) ? options.bands.length : 0;
  expectBuffer(output, 'f64', batch * Math.max(1, nb), 'bandPowers output');
  const key = `bands:${fs}:${length}:${JSON.stringify(options.bands)}`;
  const stream = resolveStream(spectrum.context, options.stream);
  const ranges = ws.table(spectrum.context, key, 'i32', stream, () => bandRanges(options.bands, fs, length));
  ws.kernel(spectrum.context, 'band_powers', p)(
    perRow(batch * nb, stream),
    spectrum,
    output,
    ranges,
    batch,
    bins,
    length,
    nb,
  );
}

export interface DominantOptions extends SeriesOptions {
  fs?: number | undefined;
  /** Search bins with frequency in [lo, hi] (default [fs/N, fs/2]: DC excluded). */
  range?: readonly [number, number] | undefined;
}

/** The inclusive bin range a dominant-cycle search covers (DC excluded by default). */
export function dominantBins(length: number, fs: number, range?: readonly [number, number]): [number, number] {
  if (range) return bandBins(range, fs, length, 'range');
  return [Math.min(1, Math.floor(length / 2)), Math.floor(length / 2)];
}

/**
 * The strongest bin of each one-sided spectrum into `output` (f64, B x 4: bin, re, im, |X|^2; bin
 * -1 when the range holds none). Ties go to the lowest bin. Finish on the host with
 * finishDominantCycles.
 */
export function dominantCycleDevice(
  spectrum: ComplexBuffer,
  output: DeviceBuffer<'f64'>,
  options: DominantOptions,
): void {
  const { batch, length } = shape(options);
  const p = complexPrecision(spectrum, 'dominantCycleDevice spectrum');
  const bins = halfBins(length);
  expectBuffer(spectrum, COMPLEX_OF[p], batch * bins, 'dominantCycleDevice spectrum');
  expectBuffer(output, 'f64', 4 * batch, 'dominantCycleDevice output');
  const [k0, k1] = dominantBins(length, checkFs(options.fs ?? 1), options.range);
  // Two phases: the strongest bin of each chunk of each row (many blocks per row), then of each row's chunks.
  const chunks = k1 >= k0 ? Math.ceil((k1 - k0 + 1) / DOMINANT_CHUNK) : 0;
  const stream = resolveStream(spectrum.context, options.stream);
  const partial = ws.scratch(spectrum.context, stream, 'dominant-partials', 'f64', 2 * batch * Math.max(1, chunks));
  if (chunks > 0)
    ws.kernel(spectrum.context, 'dominant_chunks', p)(
      perRow(batch * chunks, stream),
      spectrum,
      partial,
      batch,
      bins,
      k0,
      k1,
      DOMINANT_CHUNK,
      chunks,
    );
  ws.kernel(spectrum.context, 'dominant', p)(
    perRow(batch, stream),
    spectrum,
    partial,
    output,
    batch,
    bins,
    k0,
    k1,
    chunks,
  );
}
