/** A LaneRunner without CUDA for the engine core's tests: CPU "results", gates to hold jobs, injected failures. */
import { firstNonFinite } from '../../../src/engine/finite-samples.js';
import type { LaneChunk, LaneChunkOutcome, LaneRunner } from '../../../src/engine/lane-runner.js';
import type { NormalizedJob } from '../../../src/engine/validate.js';

export class FakeLane implements LaneRunner {
  readonly device: number;
  /** Samples one chunk may hold. */
  capacity: number;
  /** Chunks run, in order: [jobId, rowStart, rows]. */
  readonly runs: [number, number, number][] = [];
  /** When set, run() waits for release() before finishing. */
  hold = false;
  /** Errors thrown by the next runs, in this stage. */
  failNext: { error: unknown; stage: string } | undefined;
  disposed = false;
  readonly #gates: (() => void)[] = [];
  inFlight = 0;
  maxInFlight = 0;

  /** Chunks the engine may give this lane at once. */
  readonly depth: number;

  constructor(device = 0, capacity = 1 << 20, depth = 1) {
    this.device = device;
    this.capacity = capacity;
    this.depth = depth;
  }

  maxRows(job: NormalizedJob): number {
    return Math.floor(this.capacity / job.length);
  }

  /** Lets the oldest held run finish. */
  release(): boolean {
    const g = this.#gates.shift();
    g?.();
    return g !== undefined;
  }

  get waiting(): number {
    return this.#gates.length;
  }

  maxFrames(job: NormalizedJob): number {
    return job.framing
      ? Math.min(job.framing.frames, Math.floor(this.capacity / (job.batch * job.framing.nperseg)))
      : 0;
  }

  /** Framed chunks: a CPU overlap-add of "processed" frames over the zero-extended series, owned samples only. */
  #framed(chunk: LaneChunk): void {
    const { job, outputs } = chunk;
    const f = job.framing!;
    const c = chunk.frames!;
    const n = job.length;
    const w = Float64Array.from(
      { length: f.nperseg },
      (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / f.nperseg),
    );
    for (let b = 0; b < job.batch; b++) {
      const at = (p: number): number =>
        p - f.extension >= 0 && p - f.extension < n ? chunk.data[b * n + p - f.extension]! : 0;
      const num = new Float64Array(c.inputLength);
      const den = new Float64Array(c.inputLength);
      for (let k = 0; k < c.frames; k++) {
        const frame = c.frameStart + k;
        for (let i = 0; i < f.nperseg; i++) {
          const p = frame * f.hop + i;
          num[p - c.inputStart] = num[p - c.inputStart]! + w[i]! * w[i]! * (at(p) * 1.5 + frame * 0.01);
          den[p - c.inputStart] = den[p - c.inputStart]! + w[i]! * w[i]!;
        }
        if (outputs.spectrum)
          for (let q = 0; q < job.previewBins; q++)
            outputs.spectrum[(b * job.previewBins + q) * f.frames + frame] = frame * 1000 + q;
      }
      for (let p = c.outputStart; p < c.outputStart + c.outputLength; p++) {
        const t = p - f.extension;
        if (t >= 0 && t < n && outputs.filtered)
          outputs.filtered[b * n + t] = num[p - c.inputStart]! / den[p - c.inputStart]!;
      }
    }
  }

  /**
   * The GPU lane's search for a non-finite sample, on the CPU: the first one among the samples the
   * chunk reads, as an index into `chunk.data` (a framed chunk reads its frames' span of each series).
   */
  #nonFinite(chunk: LaneChunk): number | undefined {
    const { job, data } = chunk;
    if (!chunk.frames) {
      const at = firstNonFinite(data, job.dtype);
      return at < 0 ? undefined : at;
    }
    const f = job.framing!;
    const c = chunk.frames;
    const n = job.length;
    const lo = Math.max(0, c.inputStart - f.extension);
    const hi = Math.min(n, c.inputStart + c.inputLength - f.extension);
    for (let b = 0; b < job.batch; b++) {
      const at = hi > lo ? firstNonFinite(data.subarray(b * n + lo, b * n + hi), job.dtype) : -1;
      if (at >= 0) return b * n + lo + at;
    }
    return undefined;
  }

  async run(chunk: LaneChunk): Promise<LaneChunkOutcome> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      this.runs.push([chunk.jobId, chunk.rowStart, chunk.rows]);
      chunk.progress.stage = 'h2d';
      if (this.hold) await new Promise<void>((r) => this.#gates.push(r));
      else await new Promise<void>((r) => setImmediate(r));
      const fail = this.failNext;
      if (fail) {
        this.failNext = undefined;
        chunk.progress.stage = fail.stage;
        throw fail.error;
      }
      chunk.progress.stage = 'fft';
      if (chunk.frames) {
        this.runs.push([chunk.jobId, chunk.frames.frameStart, chunk.frames.frames]);
        this.#framed(chunk);
        return { gpuMs: 0.1, bytesMoved: 0, stages: {}, nonFinite: this.#nonFinite(chunk) };
      }
      const { job, outputs, rowStart, rows, data } = chunk;
      const n = job.length;
      // filtered = 2x, spectrum = row index, bandPowers = row sum per band, dominant = row's first sample.
      for (let r = 0; r < rows; r++) {
        const row = rowStart + r;
        let sum = 0;
        for (let i = 0; i < n; i++) {
          const v = data[r * n + i]!;
          sum += v;
          if (outputs.filtered) outputs.filtered[row * n + i] = 2 * v;
        }
        if (outputs.spectrum) outputs.spectrum.fill(row, row * job.previewBins, (row + 1) * job.previewBins);
        if (outputs.bandPowers)
          for (let b = 0; b < job.bands.length; b++) outputs.bandPowers[row * job.bands.length + b] = sum * (b + 1);
        if (outputs.dominant)
          outputs.dominant[row] = { frequency: data[r * n]!, period: 1 / data[r * n]!, amplitude: 1, phase: 0 };
      }
      const stages: Record<string, unknown> = {};
      for (const s of job.stages) stages[s] = { rows, rowStart };
      return { gpuMs: 0.5 * rows, bytesMoved: rows * n * 8, stages, nonFinite: this.#nonFinite(chunk) };
    } finally {
      this.inFlight--;
    }
  }

  dispose(): void {
    this.disposed = true;
  }
}

/** A CudaError-like sticky error without loading CUDA. */
export class FakeStickyError extends Error {
  readonly sticky = true;
  readonly status = 'CUDA_ERROR_ILLEGAL_ADDRESS';
}

export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
