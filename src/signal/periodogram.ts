/**
 * scipy.signal.periodogram on the GPU, batched over series: welch with one segment the length of
 * the series (or nfft), a boxcar window by default, no overlap. An nfft shorter than the series
 * truncates each series to nfft samples first, as scipy does (f32/f64 input; 16-bit input only
 * without truncation).
 */
import { positiveInteger } from '../runtime/value-checks.js';
import { resolveStream } from '../runtime/stream.js';
import type { RealBuffer } from './buffers.js';
import { welch, type WelchOptions, type WelchResult } from './welch.js';
import { inputSeries, type SignalInput } from './samples.js';
import { signalWorkspace as ws } from './workspace.js';
import { elementwise } from './launch.js';

/** Options of periodogram: welch's, less the segmenting (one segment, no overlap) and the averaging. */
export type PeriodogramOptions = Omit<WelchOptions, 'nperseg' | 'noverlap' | 'boundary' | 'padded' | 'average'>;

/**
 * scipy.signal.periodogram(x, fs=1, window='boxcar', nfft=None, detrend='constant',
 * return_onesided=True, scaling='density') for each series of x: { f, Pxx (batch × freqs), geometry }.
 */
export function periodogram(x: SignalInput, options: PeriodogramOptions = {}): WelchResult {
  const input = inputSeries(x, options, 'periodogram', 'real or complex');
  const { length, batch } = input;
  const nfft = options.nfft === undefined ? undefined : positiveInteger(options.nfft, 'periodogram: nfft');
  const common = {
    ...options,
    window: options.window ?? 'boxcar',
    detrend: options.detrend ?? 'constant',
    noverlap: 0,
  } as const;
  if (nfft === undefined || nfft >= length) return welch(x, { ...common, nperseg: length, nfft });
  // nfft < length: scipy keeps the first nfft samples of each series, then one segment of nfft.
  if (input.sample || input.complex)
    throw new TypeError(
      `periodogram: an nfft (${nfft}) shorter than the series (${length}) truncates them, which needs f32/f64 input, not ${input.kind}`,
    );
  const real = x as RealBuffer;
  const stream = resolveStream(real.context, options.stream);
  const truncated = ws.scratch(real.context, stream, 'periodogram-truncated', input.p, batch * nfft) as RealBuffer;
  ws.filterKernel(real.context, `fit_rows_${input.p}`)(
    elementwise(batch * nfft, stream),
    real,
    truncated,
    batch,
    length,
    nfft,
  );
  return welch(truncated, { ...common, stream, nperseg: nfft, nfft: undefined });
}
