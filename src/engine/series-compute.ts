/**
 * The compute of a whole-series chunk on its lane's stream, apart from its buffers and copies:
 * `seriesBuffers` takes every device buffer the chunk uses from the lane's cache (allocating
 * there, before anything is enqueued), `enqueueSeriesCompute` enqueues the kernels and FFTs and
 * nothing else (no allocation, no host copy), so the lane can capture it into a CUDA graph and
 * replay it (compute-graphs.ts). `seriesComputeKey` names everything that changes what it enqueues.
 */
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import {
  bandMask,
  bandPowers,
  detrendWindow,
  dominantCycleDevice,
  halfBins,
  irfft,
  rfft,
  spectrumMagnitude,
  type ComplexBuffer,
  type RealBuffer,
} from '../signal/primitives.js';
import { findNonFinite } from '../signal/non-finite.js';
import { narrow, type SignalInput } from '../signal/samples.js';
import { windowKey } from '../signal/window.js';
import { sixteenBit, windowSpec, type LaneResources } from './lane-resources.js';
import type { JobProgress } from './lane-runner.js';
import { nonFiniteCell } from './non-finite-check.js';
import type { NormalizedJob } from './validate.js';

/** The device buffers of one whole-series chunk: the slot's (input, what is copied back) and the lane's intermediates. */
export interface SeriesBuffers {
  readonly x: DeviceBuffer<DType>;
  readonly windowed: RealBuffer;
  readonly spectrum: ComplexBuffer;
  readonly masked?: ComplexBuffer | undefined;
  readonly filtered?: RealBuffer | undefined;
  /** The filtered wave rounded to the job's outputDtype (what is copied back then). */
  readonly filtered16?: DeviceBuffer<DType> | undefined;
  readonly preview?: RealBuffer | undefined;
  readonly powers?: DeviceBuffer<'f64'> | undefined;
  readonly dominant?: DeviceBuffer<'f64'> | undefined;
  readonly bandSpectra?: DeviceBuffer<DType> | undefined;
  readonly bandWaves?: RealBuffer | undefined;
  readonly bandWaves16?: DeviceBuffer<DType> | undefined;
  /** The slot's index cell of the input's first non-finite sample (none for i16 input). */
  readonly nonFinite?: DeviceBuffer<'u64'> | undefined;
}

/** Where the compute calls back for registered stages (none when the chunk is captured). */
export interface SeriesStageHooks {
  afterFft(): void;
  afterInverse(filtered: RealBuffer): void;
}

/** Takes every device buffer a chunk of `rows` series of `job` uses in `slot` (allocating now, when the cache has none big enough). */
export function seriesBuffers(
  lane: LaneResources,
  job: NormalizedJob,
  rows: number,
  slot: number,
  inverse: boolean,
): SeriesBuffers {
  const buf = lane.buffers;
  const { real, complex } = lane;
  const n = job.length;
  const k = halfBins(n);
  const nb = job.bands.length;
  const total = rows * n;
  const own = { slot };
  const half = job.outputDtype;
  const x = buf.device('input', sixteenBit(job) ? job.dtype : real, total, own);
  const windowed = buf.device('windowed', real, total) as RealBuffer;
  const spectrum = buf.device('spectrum', complex, rows * k) as ComplexBuffer;
  let masked: ComplexBuffer | undefined;
  let filtered: RealBuffer | undefined;
  let filtered16: DeviceBuffer<DType> | undefined;
  let preview: RealBuffer | undefined;
  if (inverse) {
    masked = buf.device('masked', complex, rows * k) as ComplexBuffer;
    // Fetched as it is (a slot's), or rounded to 16 bits first (then only the rounded copy is the slot's).
    filtered = (half ? buf.device('filtered', real, total) : buf.device('filtered', real, total, own)) as RealBuffer;
    if (job.stft) {
      preview = buf.device('preview', real, rows * job.previewBins, own) as RealBuffer;
      if (half) filtered16 = buf.device('filtered 16-bit', half, total, own);
    }
  }
  let powers: DeviceBuffer<'f64'> | undefined;
  let dominant: DeviceBuffer<'f64'> | undefined;
  let bandSpectra: DeviceBuffer<DType> | undefined;
  let bandWaves: RealBuffer | undefined;
  let bandWaves16: DeviceBuffer<DType> | undefined;
  if (job.cycles) {
    powers = buf.device('powers', 'f64', rows * nb, own);
    dominant = buf.device('dominant', 'f64', rows * 4, own);
    if (job.bandWaves) {
      bandSpectra = buf.device('band spectra', complex, nb * rows * k);
      bandWaves = (
        half ? buf.device('band waves', real, nb * total) : buf.device('band waves', real, nb * total, own)
      ) as RealBuffer;
      if (half) bandWaves16 = buf.device('band waves 16-bit', half, nb * total, own);
    }
  }
  return {
    x,
    windowed,
    spectrum,
    masked,
    filtered,
    filtered16,
    preview,
    powers,
    dominant,
    bandSpectra,
    bandWaves,
    bandWaves16,
    nonFinite: nonFiniteCell(lane, job, slot),
  };
}

/**
 * Enqueues the chunk's compute on the lane's stream, in order: the search for a non-finite sample
 * of the input (non-finite-check.ts), detrend + window (16-bit samples
 * converted there), forward FFT, [stages after the FFT], pass-band mask + inverse FFT, [stages
 * after the inverse], magnitude preview, 16-bit rounding, band powers, dominant cycle, band
 * waves. Only enqueues: every buffer comes from `b`.
 */
export function enqueueSeriesCompute(
  lane: LaneResources,
  job: NormalizedJob,
  rows: number,
  b: SeriesBuffers,
  progress: JobProgress,
  hooks?: SeriesStageHooks,
): void {
  const s = lane.stream;
  const n = job.length;
  const k = halfBins(n);
  const nb = job.bands.length;
  const total = rows * n;
  const series = { batch: rows, length: n, stream: s };
  const window = windowSpec(job);
  progress.stage = 'non-finite check';
  if (b.nonFinite) findNonFinite(b.x as SignalInput, b.nonFinite, series);
  progress.stage = 'detrend';
  detrendWindow(
    b.x as SignalInput,
    b.windowed,
    sixteenBit(job)
      ? { ...series, detrend: job.detrend, window, scale: job.scale }
      : { ...series, detrend: job.detrend, window },
  );
  progress.stage = 'fft';
  rfft(b.windowed, b.spectrum, series);
  hooks?.afterFft();
  if (b.masked && b.filtered) {
    progress.stage = 'mask';
    bandMask(b.spectrum, { ...series, fs: job.fs, band: job.passBand, output: b.masked, scale: 1 / n });
    progress.stage = 'inverse';
    irfft(b.masked, b.filtered, { ...series, normalize: false });
    // Stages after the inverse run before the copy back: what they write into `output` is returned.
    hooks?.afterInverse(b.filtered);
    if (b.preview) spectrumMagnitude(b.spectrum, b.preview, { ...series, bins: job.previewBins, scale: 1 / n });
    if (b.filtered16) narrow(b.filtered, b.filtered16 as DeviceBuffer<'f16'>, { length: total, stream: s });
  }
  if (b.powers && b.dominant) {
    progress.stage = 'cycles';
    bandPowers(b.spectrum, b.powers, { ...series, fs: job.fs, bands: job.bands });
    dominantCycleDevice(b.spectrum, b.dominant, { ...series, fs: job.fs });
    if (b.bandSpectra && b.bandWaves) {
      // One masked copy of the spectrum per band ([band][row][bin]), then one batched inverse of them all.
      for (let q = 0; q < nb; q++)
        bandMask(b.spectrum, {
          ...series,
          fs: job.fs,
          band: job.bands[q]!,
          output: b.bandSpectra.view(q * rows * k, rows * k) as ComplexBuffer,
          scale: 1 / n,
        });
      irfft(b.bandSpectra as ComplexBuffer, b.bandWaves, { batch: nb * rows, length: n, stream: s, normalize: false });
      if (b.bandWaves16) narrow(b.bandWaves, b.bandWaves16 as DeviceBuffer<'f16'>, { length: nb * total, stream: s });
    }
  }
}

/**
 * Everything that changes what enqueueSeriesCompute enqueues for a chunk in `slot` (the buffers
 * are the slot's and the lane's, named by the caller's generation): two chunks with equal keys
 * enqueue the same calls with the same arguments.
 */
export function seriesComputeKey(job: NormalizedJob, rows: number, slot: number): string {
  const bands = job.cycles ? job.bands.map((band) => `${band[0]}-${band[1]}`).join(',') : '';
  return (
    `${slot}|${rows}|${job.length}|${job.dtype}|${job.scale}|${job.detrend}|${windowKey(windowSpec(job))}|${job.fs}|` +
    `${job.stft}|${job.passBand[0]}-${job.passBand[1]}|${job.previewBins}|${job.outputDtype}|${job.cycles}|${job.bandWaves}|${bands}`
  );
}
