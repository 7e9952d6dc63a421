/**
 * scipy.signal.resample on the GPU, batched over series: the Fourier method for real input. Each
 * series' spectrum (one batched real FFT) is cut or zero-extended to num points, an even
 * length's Nyquist bin split or joined as scipy does, and transformed back (one batched inverse
 * real FFT), scaled by num / length. The series are taken as periodic, as scipy's are. scipy's
 * `window` (a spectral weighting) and `t` (sample times) are not supported and are refused.
 */
import { resolveStream, type Stream } from '../runtime/stream.js';
import { positiveInteger, shownValue } from '../runtime/value-checks.js';
import type { RealBuffer } from './buffers.js';
import { filterSeries } from './filter-call.js';
import { resampledOutput } from './upfirdn.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { elementwise } from './launch.js';

/** Options of resample. */
export interface ResampleOptions {
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (x's dtype, batch × num); default a new buffer. Must not be x. */
  output?: RealBuffer | undefined;
}

/**
 * The factor on an even N's Nyquist bin (N = min(num, length)): doubled when downsampling (the
 * two halves of the input's ±N/2 bins join), halved when upsampling (the bin is split between ±N/2).
 */
export function nyquistFactor(length: number, num: number): number {
  return num < length ? 2 : num > length ? 0.5 : 1;
}

/**
 * scipy.signal.resample(x, num) along each series of x (real input): batch × num samples. Refuses
 * scipy's `window` and `t` arguments (not supported here) with a TypeError naming them.
 */
export function resample(x: RealBuffer, num: number, options: ResampleOptions = {}): RealBuffer {
  positiveInteger(num, 'resample: num');
  for (const [name, value] of Object.entries(options as Record<string, unknown>))
    if ((name === 'window' || name === 't' || name === 'domain') && value !== undefined)
      throw new TypeError(
        `resample: scipy's ${name} argument is not supported (got ${shownValue(value)}); leave it out`,
      );
  const { p, batch, length } = filterSeries(x, options.batch, 'resample');
  const stream = resolveStream(x.context, options.stream);
  const y = resampledOutput(x, batch * num, options.output, stream, 'resample');
  const ctx = x.context;
  const complex = COMPLEX_OF[p];
  const inBins = Math.floor(length / 2) + 1;
  const outBins = Math.floor(num / 2) + 1;
  const spectrum = ws.scratch(ctx, stream, 'resample-in', complex, batch * inBins);
  const resized = ws.scratch(ctx, stream, 'resample-out', complex, batch * outBins);
  ws.realForward(ctx, p, length, batch, x, spectrum, stream);
  ws.filterKernel(ctx, `resample_spectrum_${p}`)(
    elementwise(batch * outBins, stream),
    spectrum,
    resized,
    batch,
    inBins,
    outBins,
    Math.min(num, length),
    num,
    nyquistFactor(length, num),
    1 / length,
  );
  ws.realInverse(ctx, p, num, batch, resized, y, stream);
  return y;
}
