/**
 * The framed-stft chunk flow of a lane: frames [f0, f0 + M) of every series of the zero-extended,
 * padded series (scipy's boundary 'zeros', padded), assembled on the host into the slot's pinned
 * input; stft of those frames (the job's geometry, framesGeometry: not framed or checked again),
 * mask (zeroing the frequency rows outside the pass band), istft without boundary (overlap-add
 * divided by the summed squared window of the chunk's frames; NOLA was checked at submit); the
 * chunk keeps only the samples it owns, whose covering frames it all ran, so chunks stitch
 * exactly. Everything runs on the lane's stream (such a chunk runs alone on its lane).
 */
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { dtypeInfo, type DType } from '../runtime/memory/dtype.js';
import { bandBins, framesGeometry } from '../signal/geometry.js';
import { istftGeometryOf } from '../signal/inverse-geometry.js';
import { spectrumMagnitude, type ComplexBuffer, type RealBuffer } from '../signal/primitives.js';
import { findNonFinite } from '../signal/non-finite.js';
import { narrow, type SignalInput } from '../signal/samples.js';
import { istftWithGeometry } from '../signal/istft.js';
import { stftWithGeometry } from '../signal/stft.js';
import type { FrameChunk } from './chunks.js';
import { rawArray } from '../pipeline/lanes/copy-back.js';
import { sixteenBit, type LaneResources } from './lane-resources.js';
import type { LaneChunk, LaneChunkOutcome } from './lane-runner.js';
import type { LaneSlot } from '../pipeline/lanes/lane-slots.js';
import { nonFiniteCell, nonFiniteHost, nonFiniteIndex } from './non-finite-check.js';
import type { NormalizedJob } from './validate.js';
import type { Precision } from '../runtime/fft/precision.js';

/** Device bytes one frame of one series of a framed-stft job needs (input, Zxx, the stft/istft scratch, output, preview) on a lane of precision `real`. */
export function framedBytesPerFrame(job: NormalizedJob, real: Precision): number {
  const f = job.framing!;
  return (
    (real === 'f32' ? 4 : 8) * (2 * f.hop + 2 * f.nfft + 6 * f.freqs + job.previewBins) +
    (job.outputDtype ? 2 * f.hop : 0)
  );
}

/** Runs the frames `fc` of a framed-stft job on `lane` in `slot`; resolves once its samples are in `chunk.outputs`. */
export async function runFramedChunk(
  lane: LaneResources,
  chunk: LaneChunk,
  fc: FrameChunk,
  slot: LaneSlot,
): Promise<LaneChunkOutcome> {
  const { job, outputs, progress } = chunk;
  const f = job.framing!;
  const s = lane.stream;
  const buf = lane.buffers;
  const real = lane.real;
  const el = lane.bytes;
  const batch = job.batch;
  const n = job.length;
  const len = fc.inputLength;
  const M = fc.frames;
  const F = f.freqs;
  const P = job.previewBins;
  // The job's geometry restricted to this chunk's frames: their samples are the chunk's input.
  const g = framesGeometry(f, M);

  progress.stage = 'h2d';
  slot.start.record(s);
  const sixteen = sixteenBit(job);
  const inType: DType = sixteen ? job.dtype : real;
  const pin = buf.host('input', inType, batch * len, slot.index);
  const host = rawArray(pin);
  // Padded-series sample p is series sample p - extension (zero outside the series).
  const lo = Math.max(0, f.extension - fc.inputStart);
  const first = fc.inputStart + lo - f.extension;
  const count = Math.max(0, Math.min(len - lo, n - first));
  for (let b = 0; b < batch; b++) {
    host.fill(0, b * len, (b + 1) * len);
    if (count > 0) host.set(chunk.data.subarray(b * n + first, b * n + first + count) as never, b * len + lo);
  }
  const x = buf.device('input', inType, batch * len);
  x.write(pin, { stream: s, length: batch * len });
  let bytesMoved = batch * len * dtypeInfo(inType).bytes;
  // The chunk's input searched for a non-finite sample (the zeros around each series are finite).
  const cell = nonFiniteCell(lane, job, slot.index);
  if (cell) findNonFinite(x as SignalInput, cell, { batch, stream: s });

  progress.stage = 'fft';
  const zxx = buf.device('zxx', lane.complex, batch * F * M) as DeviceBuffer<DType>;
  stftWithGeometry(x as SignalInput, g, {
    ...(sixteen ? { scale: job.scale, precision: real } : {}),
    scaling: 'spectrum',
    batch,
    stream: s,
    output: zxx as ComplexBuffer,
  });
  // |Zxx| of the first P frequency rows of every series: per series those rows are P*M contiguous
  // values, so each series is read as one "spectrum" of F*M bins (an F*M-point half spectrum).
  const preview = buf.device('preview', real, batch * P * M) as DeviceBuffer<DType>;
  spectrumMagnitude(zxx as ComplexBuffer, preview as RealBuffer, {
    batch,
    length: 2 * (F * M - 1),
    bins: P * M,
    stream: s,
  });

  progress.stage = 'mask';
  const [k0, k1] = bandBins(job.passBand, job.fs, f.nperseg, 'passBand');
  for (let b = 0; b < batch; b++) {
    if (k0 > 0) zxx.view(b * F * M, Math.min(k0, F) * M).memset(0, { stream: s });
    if (k1 < F - 1) zxx.view(b * F * M + (k1 + 1) * M, (F - 1 - k1) * M).memset(0, { stream: s });
  }

  progress.stage = 'inverse';
  const y = buf.device('filtered', real, batch * len) as DeviceBuffer<DType>;
  istftWithGeometry(zxx as ComplexBuffer, istftGeometryOf(g, { boundary: false, scaling: 'spectrum' }), {
    batch,
    stream: s,
    output: y as RealBuffer,
  });

  progress.stage = 'd2h';
  // outputDtype f16/bf16: rounded on the GPU, copied back in 2 bytes per sample.
  let back: DeviceBuffer<DType> = y;
  if (job.outputDtype) {
    back = buf.device('filtered 16-bit', job.outputDtype, batch * len);
    narrow(y as RealBuffer, back as DeviceBuffer<'f16'>, { length: batch * len, stream: s });
  }
  const yHost = buf.host('filtered', back.dtype, batch * len, slot.index);
  back.read(yHost, { stream: s, length: batch * len });
  const pHost = buf.host('preview', real, batch * P * M, slot.index);
  preview.read(pHost, { stream: s, length: batch * P * M });
  const cellHost = cell ? nonFiniteHost(lane, slot.index) : undefined;
  if (cell && cellHost) cell.read(cellHost, { stream: s, length: 1 });
  bytesMoved += batch * len * dtypeInfo(back.dtype).bytes + batch * P * M * el;

  progress.stage = 'gpu';
  slot.finished.record(s);
  await slot.finished.done();
  const gpuMs = slot.finished.elapsedSince(slot.start);

  progress.stage = 'readback';
  // Owned padded samples [outputStart, outputStart + outputLength) are series samples minus the extension.
  const t0 = Math.max(0, fc.outputStart - f.extension);
  const t1 = Math.min(n, fc.outputStart + fc.outputLength - f.extension);
  const ys = rawArray(yHost);
  const ps = pHost.array as Float32Array | Float64Array;
  const total = f.frames;
  for (let b = 0; b < batch; b++) {
    if (t1 > t0 && outputs.filtered)
      outputs.filtered.set(
        ys.subarray(b * len + t0 + f.extension - fc.inputStart, b * len + t1 + f.extension - fc.inputStart) as never,
        b * n + t0,
      );
    if (outputs.spectrum)
      for (let k = 0; k < P; k++)
        outputs.spectrum.set(ps.subarray((b * P + k) * M, (b * P + k + 1) * M), (b * P + k) * total + fc.frameStart);
  }
  // Input position p of series b is series sample first + (p - b * len - lo).
  const at = cellHost ? nonFiniteIndex(cellHost) : undefined;
  const nonFinite = at === undefined ? undefined : Math.floor(at / len) * (n - len) + at + first - lo;
  return { gpuMs, bytesMoved: bytesMoved + (cell ? 8 : 0), stages: {}, nonFinite };
}
