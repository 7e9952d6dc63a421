/**
 * A GPU lane (the seed's StreamContext): one stream, its timing/finished events, and pinned and
 * device buffers reused job after job. Per job, in stream order: H2D, detrend + window, forward
 * FFT, stages placed after the FFT, pass-band mask + inverse FFT (filtered wave, magnitude
 * preview), stages placed after the inverse, band powers / band waves / dominant cycle, CWT power,
 * D2H, event record. The job is done when the event completes (the completion poller: the event
 * loop never blocks). A lane holds `laneDepth` jobs at once (default 2): the next is enqueued behind
 * the one running, so the GPU never idles while the host learns of a completion.
 */
import type { Context } from '../runtime/context.js';
import { Event } from '../runtime/event.js';
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { HostBuffer } from '../runtime/memory/host-buffer.js';
import { dtypeInfo, type DType } from '../runtime/memory/dtype.js';
import { Stream } from '../runtime/stream.js';
import { complexToRealType, complexType, realToComplexType } from '../runtime/fft/precision.js';
import { finishDominantCycles } from '../signal/cycles.js';
import { bandMask, bandPowers, detrendWindow, dominantCycleDevice, halfBins, irfft, rfft, spectrumMagnitude, type ComplexBuffer, type RealBuffer } from '../signal/primitives.js';
import { getWindow } from '../signal/window.js';
import { bandBins } from '../signal/geometry.js';
import { istft, stft } from '../signal/stft.js';
import { narrow, type SampleDType, type SignalInput } from '../signal/samples.js';
import { signalWorkspace } from '../signal/workspace.js';
import type { FrameChunk } from './chunks.js';
import { runsAlone, type LaneChunk, type LaneChunkOutcome, type LaneRunner } from './lane-runner.js';
import { LaneBuffers } from './lane-buffers.js';
import { copyHostArray } from '../runtime/memory/host-copy.js';
import { runWavelet, waveletGeometry, waveletScratchPerRow } from './wavelet.js';
import type { StageContext, StageRegistry } from './stages.js';
import type { NormalizedJob } from './validate.js';

/** Element types of the pinned arrays an engine lends (hostBuffer). */
export type LentType = 'f32' | 'f64' | 'i16' | 'f16' | 'bf16';

/** Any host array the lane copies between (results, inputs, staging). */
type HostSide = Float32Array | Float64Array | Int16Array | Uint16Array;

/**
 * A pinned buffer's array as the lane copies it: f16 memory as raw bits (a Uint16Array, also where
 * the runtime's f16 array is a Float16Array), so copies between it and a job's arrays move bits.
 */
function rawArray(host: HostBuffer<DType>): HostSide {
  const a = host.array as unknown as HostSide;
  return host.dtype === 'f16' && !(a instanceof Uint16Array) ? new Uint16Array(a.buffer, a.byteOffset, a.length) : a;
}

/** Whether a job's samples are 16-bit (converted on the GPU by the first kernel that reads them). */
function sixteenBit(job: NormalizedJob): job is NormalizedJob & { dtype: SampleDType } {
  return job.dtype === 'i16' || job.dtype === 'f16' || job.dtype === 'bf16';
}

/** What every lane of an engine shares. */
export interface LaneShared {
  readonly precision: 'f32' | 'f64';
  readonly stages: StageRegistry;
  /** Pinned arrays lent by engine.hostBuffer(), by their ArrayBuffer. */
  readonly lent: ReadonlyMap<ArrayBufferLike, HostBuffer<LentType>>;
  /** Device memory one chunk may use on a lane (bytes). */
  readonly laneMemoryBytes: number;
  /** Jobs each lane holds on the GPU at once. */
  readonly laneDepth: number;
}

const sumCache = new Map<string, number>();
/** sum(w) of a window (the dominant cycle's gain correction), cached per window and length. */
function windowSum(job: NormalizedJob): number {
  const spec = job.window.parameter === undefined ? job.window.name : ([job.window.name, job.window.parameter] as const);
  const key = `${JSON.stringify(spec)}:${job.length}`;
  let s = sumCache.get(key);
  if (s === undefined) {
    s = getWindow(spec, job.length).reduce((a, b) => a + b, 0);
    if (sumCache.size > 256) sumCache.clear();
    sumCache.set(key, s);
  }
  return s;
}

/**
 * The copy streams the lanes of one device share: every lane's host-to-device copies queue on
 * one, its device-to-host copies on the other, each in submission order. Joined to the lanes'
 * compute streams by events, the copy engines of both directions stay busy back to back while
 * the lanes compute (a lane alone on one stream copies in, computes and copies out in turn, and
 * the lanes then fall into step: measured 10.8 vs 11.7 Gsamples/s, bench/probe/engine-stages.ts).
 */
export interface CopyStreams {
  readonly copyIn: Stream;
  readonly copyOut: Stream;
}

/** What one job in flight on a lane owns: its events and (by index) its input, outputs and pinned staging. */
interface LaneSlot {
  readonly index: number;
  readonly start: Event;
  /** Recorded on the copy-in stream after the input copy: the lane's compute waits for it. */
  readonly loaded: Event;
  /** Recorded on the lane's stream after the compute: the copies back wait for it. */
  readonly computed: Event;
  /** The seed's finished_event: recorded last; its completion makes the job ready. */
  readonly finished: Event;
}

/** One lane on one stream. */
export class GpuLane implements LaneRunner {
  readonly index: number;
  readonly device: number;
  readonly context: Context;
  readonly stream: Stream;
  readonly depth: number;
  readonly #slots: LaneSlot[] = [];
  readonly #free: LaneSlot[] = [];
  readonly #buffers: LaneBuffers;
  readonly #copies: CopyStreams;
  readonly #shared: LaneShared;
  readonly #real: 'f32' | 'f64';
  readonly #complex: 'c64' | 'c128';
  readonly #bytes: number;

  constructor(context: Context, index: number, shared: LaneShared, label: string, copies: CopyStreams) {
    this.index = index;
    this.depth = shared.laneDepth;
    this.#copies = copies;
    this.context = context;
    this.device = context.device.ordinal;
    this.#shared = shared;
    this.#real = shared.precision;
    this.#complex = shared.precision === 'f32' ? 'c64' : 'c128';
    this.#bytes = shared.precision === 'f32' ? 4 : 8;
    const name = `${label} lane ${index}`;
    this.stream = new Stream({ context, label: name });
    const created: Event[] = [];
    try {
      for (let i = 0; i < this.depth; i++) {
        const event = (what: string, timing: boolean): Event => {
          const ev = new Event({ context, timing, label: `${name} slot ${i} ${what}` });
          created.push(ev);
          return ev;
        };
        this.#slots.push({ index: i, start: event('start', true), loaded: event('loaded', false), computed: event('computed', false), finished: event('finished', true) });
      }
    } catch (e) {
      for (const ev of created) ev.dispose();
      this.stream.dispose();
      throw e;
    }
    this.#free.push(...this.#slots);
    this.#buffers = new LaneBuffers(context, this.stream, name);
  }

  /** Device bytes one series of `job` needs on the lane (every buffer the flow uses, per row). */
  bytesPerRow(job: NormalizedJob): number {
    const n = job.length;
    const k = halfBins(n);
    const nb = job.bands.length;
    let elements = 2 * n + 2 * k; // input, windowed, spectrum
    if (job.stft || job.stages.length > 0) elements += 2 * k + n + job.previewBins; // masked, filtered, preview
    if (job.cycles && job.bandWaves) elements += nb * (2 * k + n); // band spectra and waves
    let bytes = elements * this.#bytes + (job.cycles ? 8 * (nb + 4) : 0);
    // Waves rounded to 16 bits before the copy back: their own (slot) buffers of 2 bytes per sample.
    if (job.outputDtype) bytes += 2 * n * (1 + (job.cycles && job.bandWaves ? nb : 0));
    if (job.wavelet) bytes += waveletScratchPerRow(job, this.#real);
    return bytes;
  }

  /** Device bytes one frame of one series of a framed-stft job needs (input, Zxx, the stft/istft scratch, output, preview). */
  bytesPerFrame(job: NormalizedJob): number {
    const f = job.framing!;
    const nfft = f.nperseg;
    return this.#bytes * (2 * f.step + 2 * nfft + 6 * f.freqs + job.previewBins) + (job.outputDtype ? 2 * f.step : 0);
  }

  maxFrames(job: NormalizedJob): number {
    if (!job.framing) return 0;
    return Math.min(job.framing.frames, Math.floor(this.#shared.laneMemoryBytes / (job.batch * this.bytesPerFrame(job))));
  }

  maxRows(job: NormalizedJob): number {
    return Math.floor(this.#shared.laneMemoryBytes / this.bytesPerRow(job));
  }

  async run(chunk: LaneChunk): Promise<LaneChunkOutcome> {
    const slot = this.#take(chunk);
    try {
      return await this.#run(chunk, slot);
    } catch (e) {
      // Let whatever was enqueued (on the lane's stream and the copy streams) finish before the
      // slot's buffers are reused by the next job.
      await Promise.all([this.stream, this.#copies.copyIn, this.#copies.copyOut].map((st) => st.done().catch(() => {})));
      throw e;
    } finally {
      this.#free.push(slot);
    }
  }

  /**
   * A free slot for `chunk`. The engine core schedules lanes (at most `depth` chunks on one, a chunk
   * that runs alone only on an empty lane): a chunk with no free place, or a lone one on a busy
   * lane, is a scheduling bug and refused.
   */
  #take(chunk: LaneChunk): LaneSlot {
    const taken = this.depth - this.#free.length;
    if (taken === this.depth || (taken > 0 && runsAlone(chunk.job)))
      throw new Error(`lane ${this.index}: a chunk arrived with ${taken} of its ${this.depth} places taken (the engine core schedules lanes)`);
    return this.#free.pop()!;
  }

  async #run(chunk: LaneChunk, slot: LaneSlot): Promise<LaneChunkOutcome> {
    const { job, rows, rowStart, outputs, progress } = chunk;
    const sticky = this.context.stickyError;
    if (sticky) throw sticky;
    if (chunk.frames) return this.#runFramed(chunk, chunk.frames, slot);
    const s = this.stream;
    const n = job.length;
    const k = halfBins(n);
    const real = this.#real;
    const complex = this.#complex;
    const nb = job.bands.length;
    const total = rows * n;
    const series = { batch: rows, length: n, stream: s };
    const buf = this.#buffers;
    let bytesMoved = 0;

    // Plans first, before anything is enqueued: planning may wait for the device to go idle
    // (cuFFT allocates and frees while planning), which must not happen behind this job's own work.
    this.#warmPlans(job, rows);

    // The input and every buffer copied back belong to the slot (the next job's input may arrive,
    // and its compute run, while this job's results are still being copied back); intermediates are
    // the lane's, used only on its stream, in order.
    const { copyIn, copyOut } = this.#copies;
    const own = { slot: slot.index };
    progress.stage = 'h2d';
    // A plain array is copied into the slot's pinned staging first, on the thread pool (the event
    // loop stays free); everything after is enqueued in one synchronous run, so the jobs of a lane
    // never interleave their work on its stream.
    // 16-bit samples cross in 2 bytes and are converted by detrendWindow's kernels (scale applied there).
    const sixteen = sixteenBit(job);
    const inType: DType = sixteen ? job.dtype : real;
    const lent = this.#lentSource(chunk.data, inType);
    const pin = lent ? undefined : buf.host('input', inType, total, slot.index);
    if (pin) await copyHostArray(rawArray(pin), chunk.data);
    const stickyNow = this.context.stickyError;
    if (stickyNow) throw stickyNow;
    slot.start.record(copyIn);
    const x = buf.device('input', inType, total, own);
    if (lent) x.write(lent.host, { stream: copyIn, otherOffset: lent.offset, length: total });
    else x.write(pin!, { stream: copyIn, length: total });
    slot.loaded.record(copyIn);
    s.waitEvent(slot.loaded);
    bytesMoved += total * dtypeInfo(inType).bytes;

    progress.stage = 'detrend';
    const xw = buf.device('windowed', real, total) as RealBuffer;
    const window = job.window.parameter === undefined ? job.window.name : ([job.window.name, job.window.parameter] as const);
    detrendWindow(x as SignalInput, xw, sixteen ? { ...series, detrend: job.detrend, window, scale: job.scale } : { ...series, detrend: job.detrend, window });

    progress.stage = 'fft';
    const spectrum = buf.device('spectrum', complex, rows * k) as ComplexBuffer;
    rfft(xw, spectrum, series);

    const pending: { name: string; value: unknown }[] = [];
    const stageCtx = (name: string, output: RealBuffer | undefined): StageContext => ({
      name,
      jobId: chunk.jobId,
      lane: this.index,
      device: this.device,
      stream: s,
      precision: real,
      batch: rows,
      length: n,
      fs: job.fs,
      bins: k,
      // Registered stages and the wavelet take f32/f64 data only (validation refuses them for 16-bit samples).
      input: x as RealBuffer,
      windowed: xw,
      spectrum,
      output,
      params: job.stageParams[name],
    });
    const runStages = (after: 'fft' | 'inverse', output: RealBuffer | undefined): void => {
      for (const name of job.stages) {
        const stage = this.#shared.stages.get(name);
        if (!stage || stage.after !== after) continue;
        progress.stage = name;
        const value = stage.run(stageCtx(name, output));
        // Awaited after the job's event; until then a rejection must not count as unhandled.
        if (value instanceof Promise) value.catch(() => {});
        pending.push({ name, value });
      }
    };
    runStages('fft', undefined);

    // Copies back, enqueued on the copy-out stream once the compute is all enqueued (`copiesBack`):
    // straight into the result array when it is pinned memory lent by the engine (hostBuffer) of
    // the buffer's type, else into the slot's pinned staging, copied on the host once the job's
    // event has completed (`after`).
    const copiesBack: (() => void)[] = [];
    const after: (() => void | Promise<void>)[] = [];
    const fetch = (src: DeviceBuffer<DType>, target: HostSide, targetOffset: number, length: number, purpose: string): void => {
      const direct = this.#lentTarget(target, src.dtype);
      if (direct) copiesBack.push(() => src.read(direct.host, { stream: copyOut, otherOffset: direct.offset + targetOffset, length }));
      else {
        const pin = buf.host(purpose, src.dtype, length, slot.index);
        copiesBack.push(() => src.read(pin, { stream: copyOut, length }));
        after.push(() => copyHostArray(target, rawArray(pin).subarray(0, length), targetOffset));
      }
      bytesMoved += length * dtypeInfo(src.dtype).bytes;
    };
    // outputDtype f16/bf16: a wave is computed in the lane's precision, rounded on the GPU into a
    // slot buffer of 2 bytes per sample (the last kernel before the copy back), and that is fetched.
    const half = job.outputDtype;
    const narrowed = (wave: RealBuffer, purpose: string, length: number): DeviceBuffer<DType> => {
      if (!half) return wave as DeviceBuffer<DType>;
      const out = buf.device(purpose, half, length, own) as DeviceBuffer<'f16'> | DeviceBuffer<'bf16'>;
      narrow(wave, out, { length, stream: s });
      return out as DeviceBuffer<DType>;
    };

    const needInverse = job.stft || job.stages.some((name) => this.#shared.stages.get(name)?.after === 'inverse');
    if (needInverse) {
      progress.stage = 'mask';
      const masked = buf.device('masked', complex, rows * k) as ComplexBuffer;
      bandMask(spectrum, { ...series, fs: job.fs, band: job.passBand, output: masked, scale: 1 / n });
      progress.stage = 'inverse';
      // Fetched as it is (a slot's), or rounded to 16 bits first (then only the rounded copy is the slot's).
      const filtered = (half ? buf.device('filtered', real, total) : buf.device('filtered', real, total, own)) as RealBuffer;
      irfft(masked, filtered, { ...series, normalize: false });
      // Stages after the inverse run before the copy back: what they write into `output` is returned.
      runStages('inverse', filtered);
      if (job.stft) {
        const preview = buf.device('preview', real, rows * job.previewBins, own) as RealBuffer;
        spectrumMagnitude(spectrum, preview, { ...series, bins: job.previewBins, scale: 1 / n });
        progress.stage = 'd2h';
        fetch(narrowed(filtered, 'filtered 16-bit', total), outputs.filtered!, rowStart * n, total, 'filtered');
        fetch(preview as DeviceBuffer<DType>, outputs.spectrum!, rowStart * job.previewBins, rows * job.previewBins, 'preview');
      }
    }

    if (job.cycles) {
      progress.stage = 'cycles';
      const powers = buf.device('powers', 'f64', rows * nb, own);
      bandPowers(spectrum, powers, { ...series, fs: job.fs, bands: job.bands });
      const dominant = buf.device('dominant', 'f64', rows * 4, own);
      dominantCycleDevice(spectrum, dominant, { ...series, fs: job.fs });
      let waves: DeviceBuffer<DType> | undefined;
      if (job.bandWaves) {
        // One masked copy of the spectrum per band ([band][row][bin]), then one batched inverse of them all.
        const bandSpectra = buf.device('band spectra', complex, nb * rows * k) as DeviceBuffer<DType>;
        for (let q = 0; q < nb; q++)
          bandMask(spectrum, { ...series, fs: job.fs, band: job.bands[q]!, output: bandSpectra.view(q * rows * k, rows * k) as ComplexBuffer, scale: 1 / n });
        const full = (half ? buf.device('band waves', real, nb * total) : buf.device('band waves', real, nb * total, own)) as RealBuffer;
        irfft(bandSpectra as ComplexBuffer, full, { batch: nb * rows, length: n, stream: s, normalize: false });
        waves = narrowed(full, 'band waves 16-bit', nb * total);
      }
      progress.stage = 'd2h';
      fetch(powers, outputs.bandPowers!, rowStart * nb, rows * nb, 'powers');
      const dominantHost = buf.host('dominant', 'f64', rows * 4, slot.index);
      copiesBack.push(() => dominant.read(dominantHost, { stream: copyOut, length: rows * 4 }));
      bytesMoved += rows * 4 * 8;
      const windowGain = windowSum(job);
      after.push(() => {
        const cycles = finishDominantCycles(dominantHost.array.subarray(0, rows * 4), { batch: rows, length: n, fs: job.fs, windowSum: windowGain });
        for (let r = 0; r < rows; r++) outputs.dominant![rowStart + r] = cycles[r]!;
      });
      const target = outputs.bandWaves;
      if (waves && target) {
        // [band][row][t] on the device -> [row][band][t] in the result.
        const direct = this.#lentTarget(target, waves.dtype);
        const w = waves;
        if (direct) {
          copiesBack.push(() => {
            for (let q = 0; q < nb; q++)
              for (let r = 0; r < rows; r++)
                w.read(direct.host, { stream: copyOut, offset: (q * rows + r) * n, otherOffset: direct.offset + ((rowStart + r) * nb + q) * n, length: n });
          });
        } else {
          const pin = buf.host('band waves', w.dtype, nb * total, slot.index);
          copiesBack.push(() => w.read(pin, { stream: copyOut, length: nb * total }));
          after.push(() => {
            const src = rawArray(pin) as typeof target;
            for (let q = 0; q < nb; q++) for (let r = 0; r < rows; r++) target.set(src.subarray((q * rows + r) * n, (q * rows + r + 1) * n), ((rowStart + r) * nb + q) * n);
          });
        }
        bytesMoved += nb * total * dtypeInfo(w.dtype).bytes;
      }
    }

    if (job.wavelet) {
      progress.stage = 'wavelet';
      const waveletRows = job.waveletBands ? nb : job.freqs.length;
      const power = buf.device('wavelet power', real, rows * waveletRows * n, own) as RealBuffer;
      runWavelet(x as RealBuffer, power, job, rows, s);
      progress.stage = 'd2h';
      fetch(power as DeviceBuffer<DType>, outputs.waveletPower!, rowStart * waveletRows * n, rows * waveletRows * n, 'wavelet power');
    }

    progress.stage = 'd2h';
    slot.computed.record(s);
    copyOut.waitEvent(slot.computed);
    for (const copy of copiesBack) copy();
    progress.stage = 'gpu';
    slot.finished.record(copyOut);
    await slot.finished.done();
    const gpuMs = slot.finished.elapsedSince(slot.start);

    progress.stage = 'readback';
    await Promise.all(after.map((fn) => fn()));

    const stages: Record<string, unknown> = {};
    for (const { name, value } of pending) {
      progress.stage = name;
      stages[name] = await value;
    }
    return { gpuMs, bytesMoved, stages };
  }

  /** Makes (or finds) every cuFFT plan a whole-series job of `rows` series uses. */
  #warmPlans(job: NormalizedJob, rows: number): void {
    const ctx = this.context;
    const n = job.length;
    // The precision's FFT types decided in one place (runtime/fft/precision.ts).
    const forward = realToComplexType(this.#real);
    const inverse = complexToRealType(this.#real);
    const complex = complexType(this.#real);
    signalWorkspace.plan(ctx, forward, n, rows);
    const needInverse = job.stft || job.stages.some((name) => this.#shared.stages.get(name)?.after === 'inverse');
    if (needInverse) signalWorkspace.plan(ctx, inverse, n, rows);
    if (job.cycles && job.bandWaves) signalWorkspace.plan(ctx, inverse, n, job.bands.length * rows);
    if (job.wavelet) {
      const g = waveletGeometry(job);
      signalWorkspace.plan(ctx, forward, g.paddedLength, rows);
      signalWorkspace.plan(ctx, complex, g.paddedLength, rows * g.freqs.length);
      signalWorkspace.plan(ctx, complex, g.paddedLength, g.freqs.length);
    }
  }

  /**
   * A framed-stft chunk: frames [f0, f0 + M) of every series of the zero-extended, padded series
   * (scipy's boundary 'zeros', padded), assembled on the host into the lane's pinned input; stft
   * without boundary, mask (zeroing the frequency rows outside the pass band), istft without
   * boundary (overlap-add divided by the summed squared window of the chunk's frames); the chunk
   * keeps only the samples it owns, whose covering frames it all ran, so chunks stitch exactly.
   */
  async #runFramed(chunk: LaneChunk, fc: FrameChunk, slot: LaneSlot): Promise<LaneChunkOutcome> {
    const { job, outputs, progress } = chunk;
    const f = job.framing!;
    const s = this.stream;
    const buf = this.#buffers;
    const real = this.#real;
    const el = this.#bytes;
    const batch = job.batch;
    const n = job.length;
    const len = fc.inputLength;
    const M = fc.frames;
    const F = f.freqs;
    const P = job.previewBins;
    const window = job.window.parameter === undefined ? job.window.name : ([job.window.name, job.window.parameter] as const);

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

    progress.stage = 'fft';
    const zxx = buf.device('zxx', this.#complex, batch * F * M) as DeviceBuffer<DType>;
    stft(x as SignalInput, {
      ...(sixteen ? { scale: job.scale, precision: real } : {}),
      fs: job.fs,
      window,
      nperseg: f.nperseg,
      noverlap: f.noverlap,
      detrend: job.detrend,
      boundary: null,
      padded: false,
      scaling: 'spectrum',
      batch,
      stream: s,
      output: zxx as ComplexBuffer,
    });
    // |Zxx| of the first P frequency rows of every series: per series those rows are P*M contiguous
    // values, so each series is read as one "spectrum" of F*M bins (an F*M-point half spectrum).
    const preview = buf.device('preview', real, batch * P * M) as DeviceBuffer<DType>;
    spectrumMagnitude(zxx as ComplexBuffer, preview as RealBuffer, { batch, length: 2 * (F * M - 1), bins: P * M, stream: s });

    progress.stage = 'mask';
    const [k0, k1] = bandBins(job.passBand, job.fs, f.nperseg, 'passBand');
    for (let b = 0; b < batch; b++) {
      if (k0 > 0) zxx.view(b * F * M, Math.min(k0, F) * M).memset(0, { stream: s });
      if (k1 < F - 1) zxx.view(b * F * M + (k1 + 1) * M, (F - 1 - k1) * M).memset(0, { stream: s });
    }

    progress.stage = 'inverse';
    const y = buf.device('filtered', real, batch * len) as DeviceBuffer<DType>;
    istft(zxx as ComplexBuffer, {
      frames: M,
      batch,
      fs: job.fs,
      window,
      nperseg: f.nperseg,
      noverlap: f.noverlap,
      boundary: false,
      scaling: 'spectrum',
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
        outputs.filtered.set(ys.subarray(b * len + t0 + f.extension - fc.inputStart, b * len + t1 + f.extension - fc.inputStart) as never, b * n + t0);
      if (outputs.spectrum) for (let k = 0; k < P; k++) outputs.spectrum.set(ps.subarray((b * P + k) * M, (b * P + k + 1) * M), (b * P + k) * total + fc.frameStart);
    }
    return { gpuMs, bytesMoved, stages: {} };
  }

  /** The pinned buffer behind a result array lent by engine.hostBuffer() holding `dtype`, and the element offset of `target` in it. */
  #lentTarget(target: HostSide, dtype: DType): { host: HostBuffer<LentType>; offset: number } | undefined {
    const host = this.#shared.lent.get(target.buffer);
    // The array's own element size too: a float64 view of float32 pinned memory is not that memory's layout.
    if (!host || host.disposed || host.dtype !== dtype || target.BYTES_PER_ELEMENT !== dtypeInfo(dtype).bytes) return undefined;
    return { host, offset: target.byteOffset / target.BYTES_PER_ELEMENT };
  }

  /** The pinned buffer behind an array lent by engine.hostBuffer() holding `dtype` (the engine's precision, or the job's 16-bit type), and the element offset of `data` in it. */
  #lentSource(data: HostSide, dtype: DType): { host: HostBuffer<LentType>; offset: number } | undefined {
    return this.#lentTarget(data, dtype);
  }

  dispose(): void {
    let first: unknown;
    // The signal layer caches scratch per stream: let it go before the stream does (when it offers to).
    const releaseScratch = (): void => (signalWorkspace as { releaseStream?(stream: Stream): void }).releaseStream?.(this.stream);
    const events = this.#slots.flatMap((slot) => [slot.start, slot.loaded, slot.computed, slot.finished]);
    for (const fn of [() => this.#buffers.dispose(), releaseScratch, ...events.map((ev) => () => ev.dispose()), () => this.stream.dispose()]) {
      try {
        fn();
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined && !this.context.stickyError) throw first;
  }
}
