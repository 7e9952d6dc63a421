/**
 * The whole-series job flow of a lane: a chunk of whole series, in stream order H2D (on the
 * device's copy-in stream), the compute on the lane's stream (series-compute.ts: the job's
 * filter, detrend + window, forward FFT, stages placed after the FFT, pass-band mask + inverse
 * FFT, stages placed after the inverse, band powers / band waves / dominant cycle, CWT power,
 * envelope, decimation), D2H of every output of the buffer list (series-buffers.ts, on the
 * copy-out stream), the finished event. The job is done when that event completes (Event.done(): the
 * context's completion poller; the event loop never blocks).
 */
import { dtypeInfo, type DType } from '../runtime/memory/dtype.js';
import { copyHostArray } from '../runtime/memory/host-copy.js';
import { complexToRealType, complexType, realToComplexType } from '../runtime/fft/precision.js';
import { finishDominantCycles } from '../signal/cycles.js';
import { halfBins, type RealBuffer } from '../signal/primitives.js';
import { getWindow } from '../signal/window.js';
import { signalWorkspace } from '../signal/workspace.js';
import { CopyBack, pinnedView, rawArray } from '../pipeline/lanes/copy-back.js';
import type { LaneSlot } from '../pipeline/lanes/lane-slots.js';
import { sixteenBit, windowSpec, type LaneResources } from './lane-resources.js';
import type { LaneChunk, LaneChunkOutcome } from './lane-runner.js';
import { fetchNonFinite, nonFiniteIndex } from './non-finite-check.js';
import type { StageContext } from './stages.js';
import { capturable, enqueueSeriesCompute, seriesComputeKey } from './series-compute.js';
import { fetchedBuffers, seriesBuffers, seriesBytesPerRow as bytesPerRow, type BufferNeeds } from './series-buffers.js';
import type { NormalizedJob } from './validate.js';
import { waveletGeometry } from './wavelet.js';
import type { Precision } from '../runtime/fft/precision.js';

/**
 * Device bytes one series of `job` needs on a lane of precision `real`: the buffer list's
 * (series-buffers.ts), the inverse counted whenever the job has stages (a stage placed after it
 * needs it; the lane's registry is not consulted for an estimate).
 */
export function seriesBytesPerRow(job: NormalizedJob, real: Precision): number {
  return bytesPerRow(job, { inverse: job.stft || job.stages.length > 0, precision: real });
}

const sumCache = new Map<string, number>();
/** sum(w) of a window (the dominant cycle's gain correction), cached per window and length. */
function windowSum(job: NormalizedJob): number {
  const spec = windowSpec(job);
  const key = `${JSON.stringify(spec)}:${job.length}`;
  let s = sumCache.get(key);
  if (s === undefined) {
    s = getWindow(spec, job.length).reduce((a, b) => a + b, 0);
    if (sumCache.size > 256) sumCache.clear();
    sumCache.set(key, s);
  }
  return s;
}

/** Whether a job needs the inverse FFT: its filtered wave, or a stage placed after the inverse. */
function needsInverse(lane: LaneResources, job: NormalizedJob): boolean {
  return job.stft || job.stages.some((name) => lane.shared.stages.get(name)?.after === 'inverse');
}

/** Makes (or finds) every cuFFT plan a whole-series job of `rows` series uses. */
function warmPlans(lane: LaneResources, job: NormalizedJob, rows: number): void {
  const ctx = lane.context;
  const n = job.length;
  // The precision's FFT types decided in one place (runtime/fft/precision.ts).
  const forward = realToComplexType(lane.real);
  const inverse = complexToRealType(lane.real);
  const complex = complexType(lane.real);
  signalWorkspace.plan(ctx, forward, n, rows);
  if (needsInverse(lane, job)) signalWorkspace.plan(ctx, inverse, n, rows);
  if (job.cycles && job.bandWaves) signalWorkspace.plan(ctx, inverse, n, job.bands.length * rows);
  if (job.envelope) {
    // hilbert's transforms: the forward one is the stft's, the inverse a complex one of N points.
    signalWorkspace.plan(ctx, complex, n, rows);
  }
  if (job.wavelet) {
    const g = waveletGeometry(job);
    signalWorkspace.plan(ctx, forward, g.paddedLength, rows);
    signalWorkspace.plan(ctx, complex, g.paddedLength, rows * g.freqs.length);
    signalWorkspace.plan(ctx, complex, g.paddedLength, g.freqs.length);
  }
}

/** Runs a chunk of whole series on `lane` in `slot`; resolves once its results are in `chunk.outputs`. */
export async function runSeriesChunk(lane: LaneResources, chunk: LaneChunk, slot: LaneSlot): Promise<LaneChunkOutcome> {
  const { job, rows, rowStart, outputs, progress } = chunk;
  const s = lane.stream;
  const n = job.length;
  const k = halfBins(n);
  const real = lane.real;
  const total = rows * n;
  const buf = lane.buffers;
  let bytesMoved = 0;

  // Plans first, before anything is enqueued: planning may wait for the device to go idle
  // (cuFFT allocates and frees while planning), which must not happen behind this job's own work.
  warmPlans(lane, job, rows);

  // The input and every buffer copied back belong to the slot (the next job's input may arrive,
  // and its compute run, while this job's results are still being copied back); intermediates are
  // the lane's, used only on its stream, in order.
  const { copyIn, copyOut } = lane.copies;
  progress.stage = 'h2d';
  // A plain array is copied into the slot's pinned staging first, on the thread pool (the event
  // loop stays free); everything after is enqueued in one synchronous run, so the jobs of a lane
  // never interleave their work on its stream.
  // 16-bit samples cross in 2 bytes and are converted by detrendWindow's kernels (scale applied there).
  const sixteen = sixteenBit(job);
  const inType: DType = sixteen ? job.dtype : real;
  const lent = pinnedView(lane.pinned, chunk.data, inType);
  const pin = lent ? undefined : buf.host('input', inType, total, slot.index);
  if (pin) await copyHostArray(rawArray(pin), chunk.data);
  const stickyNow = lane.context.stickyError;
  if (stickyNow) throw stickyNow;
  // Every device buffer first (allocating here when the cache has none big enough), so the
  // compute below only enqueues and can be captured into a graph.
  const needs: BufferNeeds = { inverse: needsInverse(lane, job), precision: real };
  const b = seriesBuffers(lane, job, rows, slot.index, needs);
  slot.start.record(copyIn);
  if (lent) b.x.write(lent.host, { stream: copyIn, otherOffset: lent.offset, length: total });
  else b.x.write(pin!, { stream: copyIn, length: total });
  lane.uploaded(slot);
  bytesMoved += total * dtypeInfo(inType).bytes;

  const pending: { name: string; value: unknown }[] = [];
  const graphs = lane.graphs;
  if (graphs && capturable(job)) {
    // No stages (user code may enqueue anything), no filter and no flag that allocates on the way
    // (the wavelet, the envelope, the decimation): the compute replays from a graph once this slot
    // has met the job's shape twice (pipeline/lanes/compute-graphs.ts).
    // Both counters only grow: their sum changes whenever either does.
    const generation = buf.generation + signalWorkspace.generation(s);
    progress.stage = 'compute';
    graphs.run(seriesComputeKey(job, rows, slot.index), generation, () =>
      buf.withoutAllocation(
        () => enqueueSeriesCompute(lane, job, rows, b, progress),
        'the compute is captured into a graph',
      ),
    );
  } else {
    const stageCtx = (name: string, output: RealBuffer | undefined): StageContext => ({
      name,
      jobId: chunk.jobId,
      lane: lane.index,
      device: lane.device,
      stream: s,
      precision: real,
      batch: rows,
      length: n,
      fs: job.fs,
      bins: k,
      // Registered stages and the wavelet take f32/f64 data only (validation refuses them for 16-bit samples).
      input: (b.prefiltered ?? b.x) as RealBuffer,
      windowed: b.windowed,
      spectrum: b.spectrum,
      output,
      params: job.stageParams[name],
    });
    const runStages = (after: 'fft' | 'inverse', output: RealBuffer | undefined): void => {
      for (const name of job.stages) {
        const stage = lane.shared.stages.get(name);
        if (!stage || stage.after !== after) continue;
        progress.stage = name;
        const value = stage.run(stageCtx(name, output));
        // Awaited after the job's event; until then a rejection must not count as unhandled.
        if (value instanceof Promise) value.catch(() => {});
        pending.push({ name, value });
      }
    };
    enqueueSeriesCompute(lane, job, rows, b, progress, {
      afterFft: () => runStages('fft', undefined),
      afterInverse: (filtered) => runStages('inverse', filtered),
    });
  }

  // Copies back, enqueued on the copy-out stream once the compute is all enqueued: every buffer
  // the list marks as an output of this job, then the dominant cycles (finished on the host).
  const back = new CopyBack(lane, slot.index);
  const nonFiniteCell = b.nonFinite ? fetchNonFinite(lane, back, slot.index, b.nonFinite) : undefined;
  progress.stage = 'd2h';
  for (const { row, buffer, perSeries } of fetchedBuffers(job, b, needs)) {
    const target = outputs[row.output];
    if (target === undefined) continue;
    // [row of the result][series][t] on the device (a band's waves together) -> [series][row][t] in the result.
    if (row.rowMajor) back.fetchBandMajor(buffer, target, perSeries / n, rows, n, rowStart, row.purpose);
    else back.fetch(buffer, target, rowStart * perSeries, rows * perSeries, row.purpose);
  }
  if (b.dominant) {
    const dominant = b.dominant;
    const dominantHost = buf.host('dominant', 'f64', rows * 4, slot.index);
    const windowGain = windowSum(job);
    back.custom(
      () => dominant.read(dominantHost, { stream: copyOut, length: rows * 4 }),
      rows * 4 * 8,
      () => {
        const cycles = finishDominantCycles(dominantHost.array.subarray(0, rows * 4), {
          batch: rows,
          length: n,
          fs: job.fs,
          windowSum: windowGain,
        });
        for (let r = 0; r < rows; r++) outputs.dominant![rowStart + r] = cycles[r]!;
      },
    );
  }

  progress.stage = 'd2h';
  lane.computed(slot);
  back.enqueue();
  progress.stage = 'gpu';
  await lane.finished(slot);
  const gpuMs = slot.finished.elapsedSince(slot.start);

  progress.stage = 'readback';
  await back.finish();

  const stages: Record<string, unknown> = {};
  for (const { name, value } of pending) {
    progress.stage = name;
    stages[name] = await value;
  }
  return {
    gpuMs,
    bytesMoved: bytesMoved + back.bytes,
    stages,
    nonFinite: nonFiniteCell && nonFiniteIndex(nonFiniteCell),
  };
}
