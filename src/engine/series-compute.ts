/**
 * The compute of a whole-series chunk on its lane's stream, apart from its buffers (the list of
 * series-buffers.ts, allocated before anything is enqueued) and copies: `enqueueSeriesCompute`
 * enqueues the kernels and FFTs and nothing else (no allocation of the lane's, no host copy), so
 * the lane can capture it into a CUDA graph and replay it (pipeline/lanes/compute-graphs.ts) where
 * every flag of the job allows it. `seriesComputeKey` names everything that changes what it enqueues.
 */
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { decimate } from '../signal/decimate.js';
import { filtfilt, lfilter } from '../signal/fir.js';
import { envelope } from '../signal/hilbert.js';
import { sosfilt, sosfiltfilt } from '../signal/iir.js';
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
import type { Stream } from '../runtime/stream.js';
import { sixteenBit, windowSpec, type LaneResources } from './lane-resources.js';
import type { JobProgress } from './lane-runner.js';
import type { NormalizedFilter, NormalizedJob } from './normalized-job.js';
import type { SeriesBuffers } from './series-buffers.js';
import { JOB_FLAGS } from './job-schema.js';
import { runWavelet } from './wavelet.js';

/** Where the compute calls back for registered stages (none when the chunk is captured). */
export interface SeriesStageHooks {
  afterFft(): void;
  afterInverse(filtered: RealBuffer): void;
}

/**
 * Enqueues the chunk's compute on the lane's stream, in order: the search for a non-finite sample
 * of the input (non-finite-check.ts), the filter (when the job has one; everything after reads its
 * output), detrend + window (16-bit samples converted there), forward
 * FFT, [stages after the FFT], pass-band mask + inverse FFT, [stages after the inverse],
 * magnitude preview, 16-bit rounding, band powers, dominant cycle, band waves, wavelet power,
 * envelope, decimation. Only enqueues: every buffer of the lane's comes from `b`.
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
  // The input's own samples are searched, before a filter would spread a NaN over the series.
  if (b.nonFinite) findNonFinite(b.x as SignalInput, b.nonFinite, series);
  let input = b.x as SignalInput;
  if (job.filter && b.prefiltered) {
    progress.stage = 'filter';
    // Filters take f32/f64 samples only (validation refuses them for 16-bit data): x is of the lane's precision.
    input = applyFilter(
      job.filter,
      (b.x as RealBuffer).view(0, total) as RealBuffer,
      b.prefiltered.view(0, total) as RealBuffer,
      rows,
      s,
    );
  }
  progress.stage = 'detrend';
  detrendWindow(
    input,
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
      irfft(b.bandSpectra, b.bandWaves, { batch: nb * rows, length: n, stream: s, normalize: false });
      if (b.bandWaves16) narrow(b.bandWaves, b.bandWaves16 as DeviceBuffer<'f16'>, { length: nb * total, stream: s });
    }
  }
  // The flags below read the series as given (or filtered), of the lane's precision (their rows
  // take f32/f64 data only), exactly rows x N of it (a cached buffer may be longer).
  const filteredSeries = (): RealBuffer => (input as RealBuffer).view(0, total) as RealBuffer;
  if (b.waveletPower) {
    progress.stage = 'wavelet';
    runWavelet(filteredSeries(), b.waveletPower, job, rows, s);
  }
  if (b.envelope) {
    progress.stage = 'envelope';
    envelope(filteredSeries(), { batch: rows, stream: s, output: b.envelope.view(0, total) as RealBuffer });
  }
  if (b.decimated) {
    progress.stage = 'decimate';
    const q = job.q!;
    decimate(filteredSeries(), q, {
      ftype: 'fir',
      zeroPhase: true,
      batch: rows,
      stream: s,
      output: b.decimated.view(0, rows * Math.ceil(n / q)) as RealBuffer,
    });
  }
}

/** Enqueues the job's filter of `x` (rows series) into `y` on `stream`: sosfilt / lfilter from a zero state, or sosfiltfilt / filtfilt. */
function applyFilter(filter: NormalizedFilter, x: RealBuffer, y: RealBuffer, rows: number, stream: Stream): RealBuffer {
  const call = { batch: rows, stream, output: y };
  if (filter.kind === 'sos') return filter.zeroPhase ? sosfiltfilt(filter.sos, x, call) : sosfilt(filter.sos, x, call);
  return filter.zeroPhase ? filtfilt(filter.taps, 1, x, call) : lfilter(filter.taps, 1, x, call);
}

/**
 * Everything that changes what enqueueSeriesCompute enqueues for a chunk in `slot` (the buffers
 * are the slot's and the lane's, named by the caller's generation): two chunks with equal keys
 * enqueue the same calls with the same arguments. Only for jobs the lane captures (capturable):
 * no registered stage, no filter, and only flags whose row is capturable.
 */
export function seriesComputeKey(job: NormalizedJob, rows: number, slot: number): string {
  const bands = job.cycles ? job.bands.map((band) => `${band[0]}-${band[1]}`).join(',') : '';
  return (
    `${slot}|${rows}|${job.length}|${job.dtype}|${job.scale}|${job.detrend}|${windowKey(windowSpec(job))}|${job.fs}|` +
    `${job.stft}|${job.passBand[0]}-${job.passBand[1]}|${job.previewBins}|${job.outputDtype}|${job.cycles}|${job.bandWaves}|${bands}`
  );
}

/** Whether a lane may capture `job`'s compute into a CUDA graph: no registered stage (user code), no filter, and every flag's row capturable. */
export function capturable(job: NormalizedJob): boolean {
  return job.stages.length === 0 && job.filter === undefined && JOB_FLAGS.every((f) => f.capturable || !job[f.name]);
}
