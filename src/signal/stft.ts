/**
 * scipy.signal.stft, istft, spectrogram and welch on the GPU. Framing, boundary extension, padding,
 * per-frame detrend and the window are one kernel writing the FFT input; one batched real FFT
 * transforms every frame of every series; one kernel scales and arranges the result in scipy's
 * layout (frequency x time). The geometry (defaults, frame count, axes, scale factors) is
 * geometry.ts's, mirroring scipy's _spectral_helper.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import type { Stream } from '../runtime/stream.js';
import { positiveInteger } from '../runtime/value-checks.js';
import {
  boundaryCode,
  detrendCode,
  istftGeometry,
  psdScale,
  SPECTROGRAM_DEFAULTS,
  spectralFrequencies,
  spectralGeometry,
  spectralTimes,
  STFT_DEFAULTS,
  stftScale,
  WELCH_DEFAULTS,
  type InverseGeometry,
  type InverseOptions,
  type PsdScaling,
  type SpectralGeometry,
  type SpectralOptions,
  type StftScaling,
} from './geometry.js';
import type { ComplexBuffer, RealBuffer } from './primitives.js';
import {
  COMPLEX_OF,
  elementwise,
  expectBuffer,
  outputPlacement,
  perRow,
  precisionOf,
  signalWorkspace as ws,
} from './workspace.js';
import { inputSeries, type InputSeries, type SampleOptions, type SignalInput } from './samples.js';

/** Where and how many: every high-level call takes these. */
export interface CallOptions {
  /** Series in the input (default 1): N = input length / batch. */
  batch?: number | undefined;
  stream?: Stream | undefined;
}

function allocOr<T extends DType>(
  given: DeviceBuffer<DType> | undefined,
  dtype: T,
  length: number,
  x: DeviceBuffer<DType>,
  stream: Stream | undefined,
  what: string,
): DeviceBuffer<T> {
  if (given) {
    expectBuffer(given, dtype, length, `${what} output`);
    return given as DeviceBuffer<T>;
  }
  return DeviceBuffer.alloc(dtype, length, outputPlacement(x.context, stream, `${what} output`));
}

/**
 * Enqueues framing + FFT of every frame: returns the scratch holding B x frames half spectra
 * (nfft/2+1 bins each, unscaled), the workspace scratch named `purpose` (csd keeps two at once).
 */
export function framesSpectra(
  x: SignalInput,
  input: InputSeries,
  g: SpectralGeometry,
  stream: Stream | undefined,
  purpose = 'stft-half',
): ComplexBuffer {
  const { p, batch } = input;
  const ctx = x.context;
  const rows = batch * g.frames;
  if (rows * g.nfft > 2 ** 31 - 1)
    throw new RangeError(`${batch} series x ${g.frames} frames x nfft ${g.nfft} exceeds 2^31 - 1 samples per call`);
  const frames = ws.scratch(ctx, stream, 'stft-frames', p, rows * g.nfft);
  const half = ws.scratch(ctx, stream, purpose, COMPLEX_OF[p], rows * g.halfBins);
  const window = ws.window(ctx, g.windowSpec, g.nperseg, p, stream);
  const config = perRow(rows, stream);
  const code = [boundaryCode(g.boundary), detrendCode(g.detrend)] as const;
  // 16-bit samples are converted (times their scale) as the framing kernel reads them.
  if (input.sample)
    ws.kernelNamed(ctx, `frame_${input.sample}_${p}`)(
      config,
      x,
      frames,
      window,
      g.length,
      batch,
      g.nperseg,
      g.nfft,
      g.step,
      g.frames,
      g.extension,
      ...code,
      input.scale,
    );
  else
    ws.kernel(ctx, 'frame', p)(
      config,
      x as RealBuffer,
      frames,
      window,
      g.length,
      batch,
      g.nperseg,
      g.nfft,
      g.step,
      g.frames,
      g.extension,
      ...code,
    );
  ws.realForward(ctx, p, g.nfft, rows, frames, half, stream);
  return half as ComplexBuffer;
}

export interface StftOptions extends SpectralOptions, CallOptions, SampleOptions {
  /** 'spectrum' (default) or 'psd'. */
  scaling?: StftScaling | undefined;
  /** Write Zxx here (c64 for f32 input, c128 for f64; B x freqs x frames). */
  output?: ComplexBuffer | undefined;
}

/** What `stft()` returns: the frequency and frame-time axes (host arrays, ready at once), the complex STFT on the device (`options.output`, or a new buffer the caller disposes; await the stream before reading it) and the geometry used. */
export interface StftResult {
  /** Frequencies in Hz (scipy's f). */
  f: Float64Array;
  /** Frame times in s (scipy's t). */
  t: Float64Array;
  /** B x freqs x frames complex, row-major (scipy's Zxx layout with the batch first). */
  Zxx: ComplexBuffer;
  geometry: SpectralGeometry;
}

/** The geometry stft would use for series of `length` samples (pure). */
export function stftGeometry(length: number, options: StftOptions = {}): SpectralGeometry {
  return spectralGeometry(length, options, STFT_DEFAULTS);
}

/**
 * scipy.signal.stft over `batch` series. Enqueue only: await the stream before reading Zxx. 16-bit
 * input (i16, f16, bf16) is converted by the framing kernel (`scale`, `precision`).
 */
export function stft(x: SignalInput, options: StftOptions = {}): StftResult {
  const input = inputSeries(x, options, 'stft');
  const { p, batch, length } = input;
  const g = stftGeometry(length, options);
  const scale = stftScale(g, options.scaling ?? 'spectrum');
  const stream = options.stream;
  const total = batch * g.freqs * g.frames;
  const Zxx = allocOr(options.output, COMPLEX_OF[p], total, x, stream, 'stft');
  const half = framesSpectra(x, input, g, stream);
  ws.kernel(x.context, 'arrange_stft', p)(
    elementwise(total, stream),
    half,
    Zxx,
    batch,
    g.frames,
    g.halfBins,
    g.freqs,
    g.nfft,
    scale,
  );
  return { f: spectralFrequencies(g), t: spectralTimes(g), Zxx: Zxx as ComplexBuffer, geometry: g };
}

/** scipy.signal.spectrogram's modes: power ('psd'), the scaled STFT ('complex'), its magnitude, its angle, or the angle unwrapped along frequency ('phase', as scipy: `np.unwrap(np.angle(Sxx), axis=-2)`). */
export type SpectrogramMode = 'psd' | 'complex' | 'magnitude' | 'angle' | 'phase';

export interface SpectrogramOptions extends SpectralOptions, CallOptions, SampleOptions {
  /** 'density' (default) or 'spectrum'. */
  scaling?: PsdScaling | undefined;
  /** scipy's modes, default 'psd'. 'complex' returns c64/c128; the others real values of the input's precision. */
  mode?: SpectrogramMode | undefined;
  /** Write Sxx here (B x freqs x frames; complex for mode 'complex', else f32/f64). */
  output?: RealBuffer | ComplexBuffer | undefined;
}

/** What `spectrogram()` returns: frequencies (Hz) and frame times (s) as host arrays, Sxx on the device (`options.output`, or a new buffer the caller disposes; enqueued, not yet computed) and the geometry used. */
export interface SpectrogramResult<S extends RealBuffer | ComplexBuffer = RealBuffer> {
  f: Float64Array;
  t: Float64Array;
  /** B x freqs x frames, row-major: power (psd), complex STFT values, magnitude, angle or unwrapped phase. */
  Sxx: S;
  geometry: SpectralGeometry;
}

const SPECTROGRAM_MODE_CODES = { magnitude: 1, angle: 2, phase: 3 } as const;

/** scipy.signal.spectrogram over `batch` series, in any of its modes (see SpectrogramMode). */
export function spectrogram(
  x: SignalInput,
  options: SpectrogramOptions & { mode: 'complex' },
): SpectrogramResult<ComplexBuffer>;
export function spectrogram(x: SignalInput, options?: SpectrogramOptions): SpectrogramResult<RealBuffer>;
export function spectrogram(
  x: SignalInput,
  options: SpectrogramOptions = {},
): SpectrogramResult<RealBuffer | ComplexBuffer> {
  const mode = options.mode ?? 'psd';
  if (mode !== 'psd' && mode !== 'complex' && !Object.hasOwn(SPECTROGRAM_MODE_CODES, mode))
    throw new TypeError(
      `spectrogram mode must be 'psd', 'complex', 'magnitude', 'angle' or 'phase', got ${JSON.stringify(options.mode)}`,
    );
  const input = inputSeries(x, options, 'spectrogram');
  const { p, batch, length } = input;
  const g = spectralGeometry(length, options, SPECTROGRAM_DEFAULTS);
  const scale = psdScale(g, options.scaling ?? 'density');
  const stream = options.stream;
  const total = batch * g.freqs * g.frames;
  const Sxx = allocOr(options.output, mode === 'complex' ? COMPLEX_OF[p] : p, total, x, stream, 'spectrogram');
  const half = framesSpectra(x, input, g, stream);
  const launch = elementwise(total, stream);
  if (mode === 'psd')
    ws.kernel(x.context, 'arrange_psd', p)(
      launch,
      half,
      Sxx as RealBuffer,
      batch,
      g.frames,
      g.halfBins,
      g.freqs,
      g.nfft,
      g.onesided ? 1 : 0,
      scale,
    );
  // The other modes are scipy's STFT of the frames: the square root of the psd scale, nothing doubled.
  else if (mode === 'complex')
    ws.kernel(x.context, 'arrange_stft', p)(
      launch,
      half,
      Sxx as ComplexBuffer,
      batch,
      g.frames,
      g.halfBins,
      g.freqs,
      g.nfft,
      Math.sqrt(scale),
    );
  else
    ws.kernel(x.context, 'spectrogram_mode', p)(
      // 'phase' unwraps along frequency: one thread per (series, frame) column; the others one per element.
      elementwise(mode === 'phase' ? batch * g.frames : total, stream),
      half,
      Sxx as RealBuffer,
      batch,
      g.frames,
      g.halfBins,
      g.freqs,
      g.nfft,
      Math.sqrt(scale),
      SPECTROGRAM_MODE_CODES[mode],
    );
  return { f: spectralFrequencies(g), t: spectralTimes(g), Sxx: Sxx as RealBuffer | ComplexBuffer, geometry: g };
}

export interface WelchOptions extends SpectralOptions, CallOptions, SampleOptions {
  scaling?: PsdScaling | undefined;
  /** How the segments' periodograms are combined: 'mean' (default) or 'median' (bias-corrected, as scipy). */
  average?: 'mean' | 'median' | undefined;
  /** Write Pxx here (f32/f64, B x freqs). */
  output?: RealBuffer | undefined;
}

/** What `welch()` returns: the frequencies in Hz as a host array, the averaged power on the device (`options.output`, or a new buffer the caller disposes; enqueued, not yet computed) and the geometry used. */
export interface WelchResult {
  f: Float64Array;
  /** B x freqs power spectral density (or spectrum), row-major. */
  Pxx: RealBuffer;
  geometry: SpectralGeometry;
}

/** scipy's `_median_bias(n)`: the median of n chi-square(2) periodogram values over their mean, 1 + sum over i = 1..(n-1)/2 of 1/(2i+1) - 1/(2i). */
export function medianBias(n: number): number {
  let bias = 1;
  for (let i = 1; i <= Math.floor((n - 1) / 2); i++) bias += 1 / (2 * i + 1) - 1 / (2 * i);
  return bias;
}

/** scipy.signal.welch over `batch` series, averaging the segments' periodograms by mean (default) or median. */
export function welch(x: SignalInput, options: WelchOptions = {}): WelchResult {
  const average = options.average ?? 'mean';
  if (average !== 'mean' && average !== 'median')
    throw new TypeError(`welch average must be 'mean' or 'median', got ${JSON.stringify(options.average)}`);
  const input = inputSeries(x, options, 'welch');
  const { p, batch, length } = input;
  const g = spectralGeometry(length, options, WELCH_DEFAULTS);
  const scale = psdScale(g, options.scaling ?? 'density');
  const stream = options.stream;
  const total = batch * g.freqs;
  const Pxx = allocOr(options.output, p, total, x, stream, 'welch');
  const half = framesSpectra(x, input, g, stream);
  if (average === 'mean') {
    ws.kernel(x.context, 'welch_mean', p)(
      elementwise(total, stream),
      half,
      Pxx,
      batch,
      g.frames,
      g.halfBins,
      g.freqs,
      g.nfft,
      g.onesided ? 1 : 0,
      scale,
    );
  } else {
    // Every segment's periodogram (freq-major: each bin's frames contiguous), then the median of each bin's row.
    const periodograms = ws.scratch(x.context, stream, 'welch-periodograms', p, total * g.frames);
    ws.kernel(x.context, 'arrange_psd', p)(
      elementwise(total * g.frames, stream),
      half,
      periodograms,
      batch,
      g.frames,
      g.halfBins,
      g.freqs,
      g.nfft,
      g.onesided ? 1 : 0,
      scale,
    );
    ws.kernel(x.context, 'median_rows', p)(
      elementwise(total, stream),
      periodograms,
      Pxx,
      total,
      g.frames,
      1 / medianBias(g.frames),
    );
  }
  return { f: spectralFrequencies(g), Pxx: Pxx as RealBuffer, geometry: g };
}

export interface IstftOptions extends InverseOptions, CallOptions {
  /** Frames (time slices) per series in Zxx; the frequency bins are Zxx.length / (batch x frames). */
  frames: number;
  /** Write the signal here (f32/f64, B x outputLength). */
  output?: RealBuffer | undefined;
}

/** What `istft()` returns: the sample times in s as a host array, the reconstructed signals on the device (`options.output`, or a new buffer the caller disposes; enqueued, not yet computed) and the inverse geometry used. */
export interface IstftResult {
  /** Sample times in s. */
  t: Float64Array;
  /** B x outputLength real signal. */
  x: RealBuffer;
  geometry: InverseGeometry;
}

/** The geometry istft would use (pure). Throws NolaError where the STFT cannot be inverted. */
export { istftGeometry };

/**
 * scipy.signal.istft (time_axis -1, freq_axis -2) of Zxx laid out B x freqs x frames: inverse FFT
 * of every frame, then a gathering overlap-add divided by the summed squared window (exact where
 * NOLA holds; NOLA violations throw NolaError before anything is enqueued).
 */
export function istft(Zxx: ComplexBuffer, options: IstftOptions): IstftResult {
  if (!(Zxx instanceof DeviceBuffer)) throw new TypeError('istft Zxx must be a DeviceBuffer');
  const p = precisionOf(Zxx, 'istft Zxx');
  if (Zxx.dtype !== COMPLEX_OF[p])
    throw new TypeError(`istft Zxx "${Zxx.label}" must be complex (c64 or c128), not ${Zxx.dtype}`);
  const batch = positiveInteger(options.batch ?? 1, 'batch');
  const frames = positiveInteger(options.frames, 'frames');
  if (Zxx.length % (batch * frames) !== 0)
    throw new RangeError(`istft Zxx of ${Zxx.length} values does not split into ${batch} series x ${frames} frames`);
  const freqs = Zxx.length / (batch * frames);
  const g = istftGeometry(freqs, frames, options);
  const stream = options.stream;
  const ctx = Zxx.context;
  const rowBins = g.onesided ? Math.floor(g.nfft / 2) + 1 : g.nfft;
  const rows = batch * frames;
  if (rows * g.nfft > 2 ** 31 - 1)
    throw new RangeError(`${batch} series x ${frames} frames x nfft ${g.nfft} exceeds 2^31 - 1 samples per call`);
  const out = allocOr(options.output, p, batch * g.outputLength, Zxx, stream, 'istft');
  const spectra = ws.scratch(ctx, stream, 'istft-rows', COMPLEX_OF[p], rows * rowBins);
  ws.kernel(ctx, 'arrange_istft', p)(
    elementwise(rows * rowBins, stream),
    Zxx,
    spectra,
    batch,
    frames,
    freqs,
    rowBins,
    g.nfft,
    g.onesided ? 1 : 0,
  );
  const window = ws.window(ctx, options.window ?? 'hann', g.nperseg, p, stream);
  let framesBuffer: DeviceBuffer<DType>;
  let frameStride: number;
  let elemStride: number;
  if (g.onesided) {
    const real = ws.scratch(ctx, stream, 'istft-frames', p, rows * g.nfft);
    ws.realInverse(ctx, p, g.nfft, rows, spectra, real, stream);
    framesBuffer = real;
    frameStride = g.nfft;
    elemStride = 1;
  } else {
    ws.complexInPlace(ctx, p, g.nfft, rows, spectra, 'inverse', stream);
    // The kernel reads the real parts: the complex rows seen as reals, every other one.
    framesBuffer = spectra;
    frameStride = 2 * g.nfft;
    elemStride = 2;
  }
  ws.kernel(ctx, 'overlap_add', p)(
    elementwise(batch * g.outputLength, stream),
    framesBuffer as RealBuffer, // real frames, or complex rows read as reals (the strides below)
    out,
    window,
    batch,
    frames,
    g.nperseg,
    g.step,
    frameStride,
    elemStride,
    g.trim,
    g.outputLength,
    g.frameGain,
  );
  const t = new Float64Array(g.outputLength);
  for (let i = 0; i < t.length; i++) t[i] = i / g.fs;
  return { t, x: out as RealBuffer, geometry: g };
}
