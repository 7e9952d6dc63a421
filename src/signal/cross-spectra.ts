/**
 * Cross spectra on the GPU, batched over pairs of series: scipy.signal.csd (Welch's average of
 * conj(X)·Y over segments, by mean or bias-corrected median of the real and imaginary parts) and
 * coherence (|Pxy|² / (Pxx·Pyy)), with welch's options and segmenting. Both series of a pair are
 * framed and transformed by stft.ts's framing (one batched FFT each); the averages are one kernel.
 * x and y must have the same dtype, series count and length (scipy would zero-pad or broadcast).
 * Complex x and y (c64, c128, I/Q) give two-sided spectra in fftfreq order, as scipy's.
 */
import { resolveStream } from '../runtime/stream.js';
import { shownValue } from '../runtime/value-checks.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { psdScale, spectralFrequencies, spectralGeometry, WELCH_DEFAULTS, type SpectralGeometry } from './geometry.js';
import { inputSeries, type InputSeries, type SampleOptions, type SignalInput } from './samples.js';
import { allocOr, framesSpectra } from './stft.js';
import { medianBias, type WelchOptions } from './welch.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { elementwise } from './launch.js';

/** Options of csd: welch's (scaling, average, segmenting, 16-bit sample options), the output complex. */
export interface CsdOptions extends Omit<WelchOptions, 'output'> {
  /** Write Pxy here (c64 for f32, c128 for f64; batch × freqs); default a new buffer. */
  output?: ComplexBuffer | undefined;
}

/** What csd returns: the frequencies (host), the cross spectral density on the device (enqueued) and the geometry. */
export interface CsdResult {
  f: Float64Array;
  /** batch × freqs complex, row-major. */
  Pxy: ComplexBuffer;
  geometry: SpectralGeometry;
}

/** Options of coherence: welch's segmenting (scipy's coherence takes no scaling, average or onesided choice). */
export type CoherenceOptions = Omit<WelchOptions, 'scaling' | 'average' | 'returnOnesided'>;

/** What coherence returns: the frequencies (host), the magnitude-squared coherence on the device (enqueued) and the geometry. */
export interface CoherenceResult {
  f: Float64Array;
  /** batch × freqs, in [0, 1]. */
  Cxy: RealBuffer;
  geometry: SpectralGeometry;
}

/** The two inputs read alike: same precision, series count and length. */
function pairSeries(
  x: SignalInput,
  y: SignalInput,
  options: SampleOptions & { batch?: number | undefined },
  what: string,
): [InputSeries, InputSeries] {
  const a = inputSeries(x, options, `${what} x`, 'real or complex');
  const b = inputSeries(y, options, `${what} y`, 'real or complex');
  if (a.p !== b.p) throw new TypeError(`${what}: x runs in ${a.p} and y in ${b.p}; give both the same precision`);
  if (a.complex !== b.complex)
    throw new TypeError(
      `${what}: x holds ${a.kind} and y ${b.kind}; give both real or both complex (scipy would promote the real one)`,
    );
  if (a.length !== b.length)
    throw new RangeError(
      `${what}: x has ${a.length} samples per series and y ${b.length}; series of different lengths are not supported`,
    );
  if (x.context !== y.context) throw new TypeError(`${what}: x and y must live in the same context`);
  return [a, b];
}

/**
 * scipy.signal.csd(x, y, fs, window='hann', nperseg, noverlap, nfft, detrend='constant',
 * return_onesided=True, scaling='density', average='mean') for each pair of series: { f, Pxy, geometry }.
 */
export function csd(x: SignalInput, y: SignalInput, options: CsdOptions = {}): CsdResult {
  const average = options.average ?? 'mean';
  if (average !== 'mean' && average !== 'median')
    throw new TypeError(`csd: average must be 'mean' or 'median', got ${shownValue(options.average)}`);
  const [inX, inY] = pairSeries(x, y, options, 'csd');
  const { p, batch } = inX;
  const g = spectralGeometry(inX.length, options, WELCH_DEFAULTS, inX.complex);
  const scale = psdScale(g, options.scaling ?? 'density');
  const ctx = x.context;
  const stream = resolveStream(ctx, options.stream);
  const total = batch * g.freqs;
  const complex = COMPLEX_OF[p];
  const Pxy = allocOr(options.output, complex, total, stream, 'csd') as ComplexBuffer;
  const X = framesSpectra(x, inX, g, stream);
  const Y = framesSpectra(y, inY, g, stream, 'csd-y-half');
  const shape = [batch, g.frames, g.halfBins, g.freqs, g.nfft, g.onesided ? 1 : 0, scale] as const;
  if (average === 'mean') {
    ws.filterKernel(ctx, `csd_mean_${p}`)(elementwise(total, stream), X, Y, Pxy, ...shape);
  } else {
    // Every segment's cross spectrum as real and imaginary rows, each row's median, joined.
    const parts = ws.scratch(ctx, stream, 'csd-parts', p, 2 * total * g.frames);
    const medians = ws.scratch(ctx, stream, 'csd-medians', p, 2 * total);
    ws.filterKernel(ctx, `csd_parts_${p}`)(elementwise(total * g.frames, stream), X, Y, parts, ...shape);
    ws.kernel(ctx, 'median_rows', p)(
      elementwise(2 * total, stream),
      parts,
      medians,
      2 * total,
      g.frames,
      1 / medianBias(g.frames),
    );
    ws.filterKernel(ctx, `join_parts_${p}`)(elementwise(total, stream), medians, Pxy, total);
  }
  return { f: spectralFrequencies(g), Pxy, geometry: g };
}

/**
 * scipy.signal.coherence(x, y, fs, window='hann', nperseg, noverlap, nfft, detrend='constant'):
 * |Pxy|² / (Pxx·Pyy) for each pair of series, the three spectra averaged by mean (density scaling,
 * one-sided). { f, Cxy (batch × freqs), geometry }.
 */
export function coherence(x: SignalInput, y: SignalInput, options: CoherenceOptions = {}): CoherenceResult {
  const [inX, inY] = pairSeries(x, y, options, 'coherence');
  const { p, batch } = inX;
  // scipy's coherence is one-sided for real input, two-sided for complex.
  const g = spectralGeometry(inX.length, { ...options, returnOnesided: !inX.complex }, WELCH_DEFAULTS, inX.complex);
  const scale = psdScale(g, 'density');
  const ctx = x.context;
  const stream = resolveStream(ctx, options.stream);
  const total = batch * g.freqs;
  const Cxy = allocOr(options.output, p, total, stream, 'coherence') as RealBuffer;
  const X = framesSpectra(x, inX, g, stream);
  const Y = framesSpectra(y, inY, g, stream, 'csd-y-half');
  const Pxx = ws.scratch(ctx, stream, 'coherence-pxx', p, total);
  const Pyy = ws.scratch(ctx, stream, 'coherence-pyy', p, total);
  const Pxy = ws.scratch(ctx, stream, 'coherence-pxy', COMPLEX_OF[p], total);
  const shape = [batch, g.frames, g.halfBins, g.freqs, g.nfft, g.onesided ? 1 : 0, scale] as const;
  ws.kernel(ctx, 'welch_mean', p)(elementwise(total, stream), X, Pxx, ...shape);
  ws.kernel(ctx, 'welch_mean', p)(elementwise(total, stream), Y, Pyy, ...shape);
  ws.filterKernel(ctx, `csd_mean_${p}`)(elementwise(total, stream), X, Y, Pxy, ...shape);
  ws.filterKernel(ctx, `coherence_${p}`)(elementwise(total, stream), Pxy, Pxx, Pyy, Cxy, total);
  return { f: spectralFrequencies(g), Cxy, geometry: g };
}
