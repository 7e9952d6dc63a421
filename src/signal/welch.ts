/**
 * scipy.signal.welch on the GPU: every segment framed and transformed as stft's (one batched FFT),
 * the segments' periodograms averaged by mean (one kernel) or by bias-corrected median (every
 * periodogram, then each bin's median). Complex input gives a two-sided Pxx in fftfreq order.
 */
import { resolveStream } from '../runtime/stream.js';
import type { RealBuffer } from './buffers.js';
import {
  psdScale,
  spectralFrequencies,
  spectralGeometry,
  WELCH_DEFAULTS,
  type PsdScaling,
  type SpectralGeometry,
  type SpectralOptions,
} from './geometry.js';
import { inputSeries, type SampleOptions, type SignalInput } from './samples.js';
import { allocOr, framesSpectra, type CallOptions } from './stft.js';
import { signalWorkspace as ws } from './workspace.js';
import { elementwise } from './launch.js';

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

/** scipy.signal.welch over `batch` series (real or complex), averaging the segments' periodograms by mean (default) or median. */
export function welch(x: SignalInput, options: WelchOptions = {}): WelchResult {
  const average = options.average ?? 'mean';
  if (average !== 'mean' && average !== 'median')
    throw new TypeError(`welch average must be 'mean' or 'median', got ${JSON.stringify(options.average)}`);
  const input = inputSeries(x, options, 'welch', 'real or complex');
  const { p, batch, length } = input;
  const g = spectralGeometry(length, options, WELCH_DEFAULTS, input.complex);
  const scale = psdScale(g, options.scaling ?? 'density');
  const stream = resolveStream(x.context, options.stream);
  const total = batch * g.freqs;
  const Pxx = allocOr(options.output, p, total, stream, 'welch');
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
