/**
 * The job engine benchmark's jobs (engine.ts, and the probes and multi-GPU runs that share them):
 * the STFT and CWT series, their parameters, and their specs with plain or engine-lent arrays.
 * Keep them equal to bench/peers/stft_job_peer.py.
 */
import type { Precision } from '../../src/runtime/index.js';
import type { Band, JobEngine, JobSpec } from '../../src/engine/index.js';

/** Series per STFT job. */
export const STFT_B = 64;
/** Samples per STFT series. */
export const STFT_N = 65536;
/** Sampling rate of every job, Hz. */
export const FS = 1000;
/** The STFT job's pass band, Hz. */
export const PASS_BAND: Band = [20, 200];
/** The STFT job's cycle bands, Hz. */
export const BANDS: readonly Band[] = [
  [5, 15],
  [25, 35],
  [60, 80],
  [140, 160],
];
/** Spectrum bins the STFT job returns per series. */
export const PREVIEW_BINS = 256;
/** Series per CWT job. */
export const CWT_B = 8;
/** Samples per CWT series. */
export const CWT_N = 65536;
/** Morlet frequencies of the CWT job. */
export const CWT_FREQS = 128;
/** Cycles of each Morlet wavelet. */
export const CWT_CYCLES = 6;
/** Lowest CWT frequency, Hz. */
export const CWT_FMIN = 2;
/** Highest CWT frequency, Hz. */
export const CWT_FMAX = 400;
/** The bands the CWT job reduces its power to on the GPU, Hz. */
export const CWT_BANDS: readonly Band[] = [
  [2, 8],
  [8, 30],
  [30, 100],
  [100, 400],
];

/** CWT centre frequencies: CWT_FREQS log-spaced from CWT_FMIN to CWT_FMAX (numpy.geomspace). */
export function cwtFrequencies(): number[] {
  const r = Math.log(CWT_FMAX / CWT_FMIN);
  return Array.from({ length: CWT_FREQS }, (_, i) => CWT_FMIN * Math.exp((r * i) / (CWT_FREQS - 1)));
}

/**
 * Series like the peers' (DC, trend, four tones with random phases, Gaussian noise), from a
 * seeded generator so each run is alike; the values differ from the peers' (numpy's generator)
 * but the work does not depend on them.
 */
export function jobData(batch: number, n: number, seed: number, into?: Float32Array): Float32Array {
  const out = into ?? new Float32Array(batch * n);
  let s = seed >>> 0 || 1;
  const uniform = (): number => {
    // xorshift32: fast, deterministic, good enough for test signals.
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return (s + 0.5) / 4294967296;
  };
  const tones = [
    [10, 1.0],
    [30, 0.6],
    [70, 0.4],
    [150, 0.3],
  ] as const;
  for (let b = 0; b < batch; b++) {
    const phases = tones.map(() => uniform() * 2 * Math.PI);
    for (let i = 0; i < n; i++) {
      const t = i / FS;
      // Box-Muller: one normal per sample.
      let v = 0.5 * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
      v += 3 + 0.002 * i;
      for (let k = 0; k < tones.length; k++) v += tones[k]![1] * Math.cos(2 * Math.PI * tones[k]![0] * t + phases[k]!);
      out[b * n + i] = v;
    }
  }
  return out;
}

export function stftSpec(data: Float32Array): JobSpec {
  // Band powers back, not the band-limited waves (bands x N more to copy): the job of issue 11.
  return {
    data,
    batch: data.length / STFT_N,
    fs: FS,
    flags: ['stft', 'cycles'],
    detrend: 'linear',
    window: 'hann',
    passBand: PASS_BAND,
    previewBins: PREVIEW_BINS,
    bands: BANDS,
    bandWaves: false,
  };
}

export function cwtSpec(data: Float32Array, freqs: readonly number[]): JobSpec {
  return {
    data,
    batch: data.length / CWT_N,
    fs: FS,
    flags: ['wavelet'],
    detrend: false,
    window: 'boxcar',
    freqs,
    nCycles: CWT_CYCLES,
    bands: CWT_BANDS,
    waveletBands: true,
  };
}

/** An engine-lent pinned Float32Array (or Float64Array) of `length`. */
export function lend(engine: JobEngine, length: number): Float32Array;
export function lend(engine: JobEngine, length: number, dtype: 'f64'): Float64Array;
export function lend(engine: JobEngine, length: number, dtype: Precision = 'f32'): Float32Array | Float64Array {
  return dtype === 'f32' ? engine.hostBuffer('f32', length) : engine.hostBuffer('f64', length);
}

/** The pinned job: input and every result array lent by the engine (zero-copy both ways). */
export function pinnedStftSpec(engine: JobEngine, base: Float32Array): JobSpec {
  const data = lend(engine, STFT_B * STFT_N);
  data.set(base);
  const into = {
    filtered: lend(engine, STFT_B * STFT_N),
    spectrum: lend(engine, STFT_B * PREVIEW_BINS),
    bandPowers: lend(engine, STFT_B * BANDS.length, 'f64'),
  };
  return { ...stftSpec(data), into };
}
