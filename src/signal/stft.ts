/**
 * scipy.signal.stft and spectrogram on the GPU. Framing, boundary extension, padding, per-frame
 * detrend and the window are one kernel writing the FFT input; one batched FFT transforms every
 * frame of every series (real-to-complex for real input, complex-to-complex for complex input);
 * one kernel scales and arranges the result in scipy's layout (frequency x time). The geometry
 * (defaults, frame count, axes, scale factors) is geometry.ts's, mirroring scipy's
 * _spectral_helper: `stft` resolves it from its options, `stftWithGeometry` runs one resolved
 * already (a chunk of a long STFT: framesGeometry). welch is welch.ts's, istft istft.ts's.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import {
  boundaryCode,
  detrendCode,
  psdScale,
  SPECTROGRAM_DEFAULTS,
  spectralFrequencies,
  spectralGeometry,
  spectralTimes,
  STFT_DEFAULTS,
  stftScale,
  type PsdScaling,
  type SpectralGeometry,
  type SpectralOptions,
  type StftScaling,
} from './geometry.js';
import { complexSeries } from './iq.js';
import { inputSeries, type InputSeries, type SampleOptions, type SignalInput } from './samples.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { elementwise, expectBuffer, perRow } from './launch.js';

/** Where and how many: every high-level call takes these. */
export interface CallOptions {
  /** Series in the input (default 1): N = input length / batch. */
  batch?: number | undefined;
  /** The stream to enqueue on; default the input's context's default stream (resolveStream). */
  stream?: Stream | undefined;
}

/** The output of an operation: `given` checked (dtype, `length` elements), or a new buffer for work on `stream` (DeviceBuffer.alloc: stream-ordered, cuMemAlloc on a default stream). */
export function allocOr<T extends DType>(
  given: DeviceBuffer<DType> | undefined,
  dtype: T,
  length: number,
  stream: Stream,
  what: string,
): DeviceBuffer<T> {
  if (given) {
    expectBuffer(given, dtype, length, `${what} output`);
    return given as DeviceBuffer<T>;
  }
  return DeviceBuffer.alloc(dtype, length, { stream, label: `${what} output` });
}

/**
 * Enqueues framing + FFT of every frame: returns the scratch holding B x frames spectra of
 * g.halfBins bins each, unscaled (nfft/2+1 of a real FFT for real input, all nfft of a complex FFT
 * for complex input), the workspace scratch named `purpose` (csd keeps two at once).
 */
export function framesSpectra(
  x: SignalInput,
  input: InputSeries,
  g: SpectralGeometry,
  stream: Stream,
  purpose = 'stft-half',
): ComplexBuffer {
  const { p, batch } = input;
  const ctx = x.context;
  const rows = batch * g.frames;
  if (rows * g.nfft > 2 ** 31 - 1)
    throw new RangeError(`${batch} series x ${g.frames} frames x nfft ${g.nfft} exceeds 2^31 - 1 samples per call`);
  if (input.complex !== g.complex)
    throw new TypeError(`framesSpectra: a ${g.complex ? 'complex' : 'real'} geometry for ${input.kind} input`);
  const half = ws.scratch(ctx, stream, purpose, COMPLEX_OF[p], rows * g.halfBins);
  const window = ws.window(ctx, g.windowSpec, g.nperseg, p, stream);
  const config = perRow(rows, stream);
  const code = [boundaryCode(g.boundary), detrendCode(g.detrend)] as const;
  if (input.complex) {
    // Complex frames are written where their spectra go: the complex FFT runs in place.
    const c = complexSeries(x, input, stream);
    ws.kernel(ctx, 'frame_complex', p)(
      config,
      c,
      half,
      window,
      g.length,
      batch,
      g.nperseg,
      g.nfft,
      g.hop,
      g.frames,
      g.extension,
      ...code,
    );
    ws.complexInPlace(ctx, p, g.nfft, rows, half, 'forward', stream);
    return half as ComplexBuffer;
  }
  const frames = ws.scratch(ctx, stream, 'stft-frames', p, rows * g.nfft);
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
      g.hop,
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
      g.hop,
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

/** The geometry stft would use for series of `length` samples, real or `complex` (pure). */
export function stftGeometry(length: number, options: StftOptions = {}, complex = false): SpectralGeometry {
  return spectralGeometry(length, options, STFT_DEFAULTS, complex);
}

/**
 * scipy.signal.stft over `batch` series. Enqueue only: await the stream before reading Zxx. 16-bit
 * input (i16, f16, bf16) is converted by the framing kernel (`scale`, `precision`); complex input
 * (c64, c128, I/Q with `iq: true`) gives a two-sided Zxx, frequencies in fftfreq order, as scipy's.
 */
export function stft(x: SignalInput, options: StftOptions = {}): StftResult {
  const input = inputSeries(x, options, 'stft', 'real or complex');
  return stftOf(x, input, stftGeometry(input.length, options, input.complex), options);
}

/** What stftWithGeometry takes besides the geometry: where, how many, how samples are read, the scaling and the output. */
export type StftRunOptions = Pick<StftOptions, 'scaling' | 'output' | keyof CallOptions | keyof SampleOptions>;

/**
 * stft over a geometry resolved already (stftGeometry, or framesGeometry for a run of its frames):
 * the framing is not checked again, only that the input's series are `g.length` samples of its
 * kind (real or complex). The engine's framed jobs and `tscuda stft` run their chunks through it.
 */
export function stftWithGeometry(x: SignalInput, g: SpectralGeometry, options: StftRunOptions = {}): StftResult {
  const input = inputSeries(x, options, 'stft', 'real or complex');
  if (input.length !== g.length || input.complex !== g.complex)
    throw new RangeError(
      `stft: the geometry frames ${g.complex ? 'complex' : 'real'} series of ${g.length} samples, the input holds ${input.kind} series of ${input.length}`,
    );
  return stftOf(x, input, g, options);
}

function stftOf(x: SignalInput, input: InputSeries, g: SpectralGeometry, options: StftRunOptions): StftResult {
  const { p, batch } = input;
  const scale = stftScale(g, options.scaling ?? 'spectrum');
  const stream = resolveStream(x.context, options.stream);
  const total = batch * g.freqs * g.frames;
  const Zxx = allocOr(options.output, COMPLEX_OF[p], total, stream, 'stft');
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

/**
 * scipy.signal.spectrogram over `batch` series, in any of its modes (see SpectrogramMode). Complex
 * input gives a two-sided Sxx in fftfreq order (nfft frequencies), as scipy's.
 */
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
  const input = inputSeries(x, options, 'spectrogram', 'real or complex');
  const { p, batch, length } = input;
  const g = spectralGeometry(length, options, SPECTROGRAM_DEFAULTS, input.complex);
  const scale = psdScale(g, options.scaling ?? 'density');
  const stream = resolveStream(x.context, options.stream);
  const total = batch * g.freqs * g.frames;
  const Sxx = allocOr(options.output, mode === 'complex' ? COMPLEX_OF[p] : p, total, stream, 'spectrogram');
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
