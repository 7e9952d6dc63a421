/**
 * A GPU lane (the seed's StreamContext): one stream, its timing/finished events, and pinned and
 * device buffers reused job after job. Per job, in stream order: H2D, detrend + window, forward
 * FFT, stages placed after the FFT, pass-band mask + inverse FFT (filtered wave, magnitude
 * preview), stages placed after the inverse, band powers / band waves / dominant cycle, CWT power,
 * D2H, event record. The job is done when the event completes (the completion poller: the event
 * loop never blocks).
 */
import type { Context } from '../runtime/context.js';
import { Event } from '../runtime/event.js';
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { HostBuffer } from '../runtime/memory/host-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import { Stream } from '../runtime/stream.js';
import { finishDominantCycles } from '../signal/cycles.js';
import { bandMask, bandPowers, detrendWindow, dominantCycleDevice, halfBins, irfft, rfft, spectrumMagnitude, type ComplexBuffer, type RealBuffer } from '../signal/primitives.js';
import { getWindow } from '../signal/window.js';
import type { LaneChunk, LaneChunkOutcome, LaneRunner } from './lane-runner.js';
import { LaneBuffers } from './lane-buffers.js';
import { runWavelet, waveletScratchPerRow } from './wavelet.js';
import type { StageContext, StageRegistry } from './stages.js';
import type { NormalizedJob } from './validate.js';

/** What every lane of an engine shares. */
export interface LaneShared {
  readonly precision: 'f32' | 'f64';
  readonly stages: StageRegistry;
  /** Pinned arrays lent by engine.hostBuffer(), by their ArrayBuffer. */
  readonly lent: ReadonlyMap<ArrayBufferLike, HostBuffer<'f32' | 'f64'>>;
  /** Device memory one chunk may use on a lane (bytes). */
  readonly laneMemoryBytes: number;
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

/** One lane on one stream. */
export class GpuLane implements LaneRunner {
  readonly index: number;
  readonly device: number;
  readonly context: Context;
  readonly stream: Stream;
  readonly #start: Event;
  /** The seed's finished_event: recorded last; its completion makes the job ready. */
  readonly #finished: Event;
  readonly #buffers: LaneBuffers;
  readonly #shared: LaneShared;
  readonly #real: 'f32' | 'f64';
  readonly #complex: 'c64' | 'c128';
  readonly #bytes: number;

  constructor(context: Context, index: number, shared: LaneShared, label: string) {
    this.index = index;
    this.context = context;
    this.device = context.device.ordinal;
    this.#shared = shared;
    this.#real = shared.precision;
    this.#complex = shared.precision === 'f32' ? 'c64' : 'c128';
    this.#bytes = shared.precision === 'f32' ? 4 : 8;
    const name = `${label} lane ${index}`;
    this.stream = new Stream({ context, label: name });
    try {
      this.#start = new Event({ context, timing: true, label: `${name} start` });
      this.#finished = new Event({ context, timing: true, label: `${name} finished` });
    } catch (e) {
      this.stream.dispose();
      throw e;
    }
    this.#buffers = new LaneBuffers(context, this.stream, name);
  }

  /** Device bytes one series of `job` needs on the lane (every buffer the flow uses, per row). */
  bytesPerRow(job: NormalizedJob): number {
    const n = job.length;
    const k = halfBins(n);
    const nb = job.bands.length;
    let elements = 2 * n + 2 * k; // input, windowed, spectrum
    if (job.stft || job.stages.length > 0) elements += 2 * k + n + job.previewBins; // masked, filtered, preview
    if (job.cycles) elements += nb * (2 * k + n); // band spectra and waves
    let bytes = elements * this.#bytes + (job.cycles ? 8 * (nb + 4) : 0);
    if (job.wavelet) bytes += waveletScratchPerRow(job, this.#real);
    return bytes;
  }

  maxRows(job: NormalizedJob): number {
    return Math.floor(this.#shared.laneMemoryBytes / this.bytesPerRow(job));
  }

  async run(chunk: LaneChunk): Promise<LaneChunkOutcome> {
    try {
      return await this.#run(chunk);
    } catch (e) {
      // Let whatever was enqueued finish before the lane's buffers are reused by the next job.
      await this.stream.done().catch(() => {});
      throw e;
    }
  }

  async #run(chunk: LaneChunk): Promise<LaneChunkOutcome> {
    const { job, rows, rowStart, outputs, progress } = chunk;
    const sticky = this.context.stickyError;
    if (sticky) throw sticky;
    const s = this.stream;
    const n = job.length;
    const k = halfBins(n);
    const real = this.#real;
    const complex = this.#complex;
    const el = this.#bytes;
    const nb = job.bands.length;
    const total = rows * n;
    const series = { batch: rows, length: n, stream: s };
    const buf = this.#buffers;
    let bytesMoved = 0;

    progress.stage = 'h2d';
    this.#start.record(s);
    const x = buf.device('input', real, total) as RealBuffer;
    const lent = this.#lentSource(chunk.data);
    if (lent) (x as DeviceBuffer<DType>).write(lent.host, { stream: s, otherOffset: lent.offset, length: total });
    else {
      const pin = buf.host('input', real, total);
      pin.array.set(chunk.data);
      (x as DeviceBuffer<DType>).write(pin, { stream: s, length: total });
    }
    bytesMoved += total * el;

    progress.stage = 'detrend';
    const xw = buf.device('windowed', real, total) as RealBuffer;
    const window = job.window.parameter === undefined ? job.window.name : ([job.window.name, job.window.parameter] as const);
    detrendWindow(x, xw, { ...series, detrend: job.detrend, window });

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
      input: x,
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
        pending.push({ name, value: stage.run(stageCtx(name, output)) });
      }
    };
    runStages('fft', undefined);

    const needInverse = job.stft || job.stages.some((name) => this.#shared.stages.get(name)?.after === 'inverse');
    let filteredHost: HostBuffer | undefined;
    let previewHost: HostBuffer | undefined;
    if (needInverse) {
      progress.stage = 'mask';
      const masked = buf.device('masked', complex, rows * k) as ComplexBuffer;
      bandMask(spectrum, { ...series, fs: job.fs, band: job.passBand, output: masked, scale: 1 / n });
      progress.stage = 'inverse';
      const filtered = buf.device('filtered', real, total) as RealBuffer;
      irfft(masked, filtered, { ...series, normalize: false });
      // Stages after the inverse run before the copy back: what they write into `output` is returned.
      runStages('inverse', filtered);
      if (job.stft) {
        const preview = buf.device('preview', real, rows * job.previewBins) as RealBuffer;
        spectrumMagnitude(spectrum, preview, { ...series, bins: job.previewBins, scale: 1 / n });
        progress.stage = 'd2h';
        filteredHost = buf.host('filtered', real, total);
        (filtered as DeviceBuffer<DType>).read(filteredHost, { stream: s, length: total });
        previewHost = buf.host('preview', real, rows * job.previewBins);
        (preview as DeviceBuffer<DType>).read(previewHost, { stream: s, length: rows * job.previewBins });
        bytesMoved += (total + rows * job.previewBins) * el;
      }
    }

    let powersHost: HostBuffer | undefined;
    let dominantHost: HostBuffer | undefined;
    let wavesHost: HostBuffer | undefined;
    if (job.cycles) {
      progress.stage = 'cycles';
      const powers = buf.device('powers', 'f64', rows * nb);
      bandPowers(spectrum, powers, { ...series, fs: job.fs, bands: job.bands });
      const dominant = buf.device('dominant', 'f64', rows * 4);
      dominantCycleDevice(spectrum, dominant, { ...series, fs: job.fs });
      // One masked copy of the spectrum per band ([band][row][bin]), then one batched inverse of them all.
      const bandSpectra = buf.device('band spectra', complex, nb * rows * k) as ComplexBuffer;
      for (let q = 0; q < nb; q++) bandMask(spectrum, { ...series, fs: job.fs, band: job.bands[q]!, output: (bandSpectra as DeviceBuffer<DType>).view(q * rows * k, rows * k) as ComplexBuffer, scale: 1 / n });
      const waves = buf.device('band waves', real, nb * total) as RealBuffer;
      irfft(bandSpectra, waves, { batch: nb * rows, length: n, stream: s, normalize: false });
      progress.stage = 'd2h';
      powersHost = buf.host('powers', 'f64', rows * nb);
      powers.read(powersHost as HostBuffer<'f64'>, { stream: s, length: rows * nb });
      dominantHost = buf.host('dominant', 'f64', rows * 4);
      dominant.read(dominantHost as HostBuffer<'f64'>, { stream: s, length: rows * 4 });
      wavesHost = buf.host('band waves', real, nb * total);
      (waves as DeviceBuffer<DType>).read(wavesHost, { stream: s, length: nb * total });
      bytesMoved += rows * (nb + 4) * 8 + nb * total * el;
    }

    let waveletHost: HostBuffer | undefined;
    let waveletRows = 0;
    if (job.wavelet) {
      progress.stage = 'wavelet';
      waveletRows = job.waveletBands ? nb : job.freqs.length;
      const power = buf.device('wavelet power', real, rows * waveletRows * n) as RealBuffer;
      runWavelet(x, power, job, rows, s);
      progress.stage = 'd2h';
      waveletHost = buf.host('wavelet power', real, rows * waveletRows * n);
      (power as DeviceBuffer<DType>).read(waveletHost, { stream: s, length: rows * waveletRows * n });
      bytesMoved += rows * waveletRows * n * el;
    }

    progress.stage = 'gpu';
    this.#finished.record(s);
    await this.#finished.done();
    const gpuMs = this.#finished.elapsedSince(this.#start);

    progress.stage = 'readback';
    if (filteredHost && outputs.filtered) outputs.filtered.set(view(filteredHost, total), rowStart * n);
    if (previewHost && outputs.spectrum) outputs.spectrum.set(view(previewHost, rows * job.previewBins), rowStart * job.previewBins);
    if (powersHost && outputs.bandPowers) outputs.bandPowers.set(view(powersHost, rows * nb), rowStart * nb);
    if (dominantHost && outputs.dominant) {
      const cycles = finishDominantCycles(view(dominantHost, rows * 4) as Float64Array, { batch: rows, length: n, fs: job.fs, windowSum: windowSum(job) });
      for (let r = 0; r < rows; r++) outputs.dominant[rowStart + r] = cycles[r]!;
    }
    if (wavesHost && outputs.bandWaves) {
      // [band][row][t] on the device -> [row][band][t] in the result.
      const src = wavesHost.array as Float32Array | Float64Array;
      for (let q = 0; q < nb; q++) for (let r = 0; r < rows; r++) outputs.bandWaves.set(src.subarray((q * rows + r) * n, (q * rows + r + 1) * n), ((rowStart + r) * nb + q) * n);
    }
    if (waveletHost && outputs.waveletPower) outputs.waveletPower.set(view(waveletHost, rows * waveletRows * n), rowStart * waveletRows * n);

    const stages: Record<string, unknown> = {};
    for (const { name, value } of pending) {
      progress.stage = name;
      stages[name] = await value;
    }
    return { gpuMs, bytesMoved, stages };
  }

  /** The pinned buffer behind an array lent by engine.hostBuffer() in the engine's precision, and the element offset of `data` in it. */
  #lentSource(data: Float32Array | Float64Array): { host: HostBuffer<'f32' | 'f64'>; offset: number } | undefined {
    const host = this.#shared.lent.get(data.buffer);
    if (!host || host.disposed || host.dtype !== this.#real) return undefined;
    return { host, offset: data.byteOffset / data.BYTES_PER_ELEMENT };
  }

  dispose(): void {
    let first: unknown;
    for (const fn of [() => this.#buffers.dispose(), () => this.#start.dispose(), () => this.#finished.dispose(), () => this.stream.dispose()]) {
      try {
        fn();
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined && !this.context.stickyError) throw first;
  }
}

function view(host: HostBuffer, length: number): Float32Array | Float64Array {
  return (host.array as Float32Array | Float64Array).subarray(0, length);
}
