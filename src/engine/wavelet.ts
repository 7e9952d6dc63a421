/**
 * The engine's `wavelet` flag over the signal layer's CWT (Morlet, by FFT): power of the raw input
 * per frequency, or summed over the frequencies of each band on the GPU before the copy back.
 */
import type { Stream } from '../runtime/stream.js';
import { cwt, cwtGeometry, type CwtOptions } from '../signal/cwt.js';
import type { RealBuffer } from '../signal/primitives.js';
import type { NormalizedJob } from './validate.js';
import type { Precision } from '../runtime/fft/precision.js';

function options(job: NormalizedJob): CwtOptions {
  return {
    fs: job.fs,
    freqs: job.freqs,
    nCycles: job.nCycles,
    output: 'power',
    ...(job.waveletBands ? { bands: job.bands } : {}),
  };
}

/** The CWT geometry of a job (padded length, frequencies), as the signal layer computes it. */
export function waveletGeometry(job: NormalizedJob): ReturnType<typeof cwtGeometry> {
  return cwtGeometry(job.length, options(job));
}

const perRowCache = new Map<string, number>();

/**
 * Device bytes per series of the CWT: its output plus the signal workspace's scratch (padded
 * series, its spectrum, F padded products). Cached: resolving the wavelets costs a few ms for many
 * low frequencies, and lanes ask for every job.
 */
export function waveletScratchPerRow(job: NormalizedJob, precision: Precision): number {
  const key = `${precision}|${job.length}|${job.fs}|${job.nCycles}|${job.freqs.join(',')}|${job.waveletBands ? JSON.stringify(job.bands) : ''}`;
  let bytes = perRowCache.get(key);
  if (bytes === undefined) {
    const el = precision === 'f32' ? 4 : 8;
    const g = cwtGeometry(job.length, options(job));
    const L = g.paddedLength;
    bytes = el * (g.rows * job.length + L + 2 * (Math.floor(L / 2) + 1) + 2 * g.freqs.length * L);
    if (perRowCache.size > 256) perRowCache.clear();
    perRowCache.set(key, bytes);
  }
  return bytes;
}

/** Enqueues the CWT power of `input` (rows x N) into `output` (rows x (freqs or bands) x N) on `stream`. */
export function runWavelet(
  input: RealBuffer,
  output: RealBuffer,
  job: NormalizedJob,
  rows: number,
  stream: Stream,
): void {
  cwt(input, { ...options(job), batch: rows, stream, into: output });
}
