/**
 * Host-side finishing of the dominant-cycle search and band-power bookkeeping (CUDA-free).
 */
import { bandBins } from './geometry.js';

/** The dominant cycle of one series. */
export interface DominantCycle {
  /** Frequency in Hz of the strongest bin (DC excluded by default). */
  frequency: number;
  /** Period in seconds (1 / frequency). */
  period: number;
  /** Amplitude of the cosine at that frequency, in the signal's units (window gain corrected). */
  amplitude: number;
  /** Phase in radians of that cosine at sample 0: x[t] = amplitude·cos(2π·frequency·t/fs + phase). */
  phase: number;
  /** The FFT bin. */
  bin: number;
}

/** How `finishDominantCycles` reads the kernel's rows: `batch` series of `length` samples, the sample rate `fs` in Hz (default 1: frequencies in cycles per sample) and the window's sum for the amplitude correction. */
export interface FinishDominantOptions {
  batch: number;
  /** N, samples per series (the FFT length). */
  length: number;
  fs?: number | undefined;
  /** sum(w) of the window applied before the FFT (default N: no window). */
  windowSum?: number | undefined;
}

/**
 * Turns the dominant kernel's rows (bin, re, im, |X|^2 per series, f64 B x 4) into cycles.
 * For x[t] = A cos(2π k t / N + φ) the bin holds X_k = A·sum(w)/2·e^{iφ} (A·sum(w) at DC and at an
 * even N's Nyquist), which this inverts. A series with no bin in range gives NaN fields.
 */
export function finishDominantCycles(rows: Float64Array, options: FinishDominantOptions): DominantCycle[] {
  const { batch, length } = options;
  const fs = options.fs ?? 1;
  const gain = options.windowSum ?? length;
  if (rows.length < 4 * batch)
    throw new RangeError(`dominant rows hold ${rows.length} values; 4 per series x ${batch} are needed`);
  const out: DominantCycle[] = [];
  for (let b = 0; b < batch; b++) {
    const k = rows[4 * b]!;
    const re = rows[4 * b + 1]!;
    const im = rows[4 * b + 2]!;
    if (k < 0) {
      out.push({ frequency: NaN, period: NaN, amplitude: NaN, phase: NaN, bin: -1 });
      continue;
    }
    const frequency = (k * fs) / length;
    const unpaired = k === 0 || (length % 2 === 0 && k === length / 2);
    const amplitude = (Math.hypot(re, im) * (unpaired ? 1 : 2)) / gain;
    out.push({ frequency, period: 1 / frequency, amplitude, phase: Math.atan2(im, re), bin: k });
  }
  return out;
}

/** The [k0, k1] bin ranges of bands as the band-power kernel takes them (Int32Array, 2 per band). */
export function bandRanges(bands: readonly (readonly [number, number])[], fs: number, length: number): Int32Array {
  if (!Array.isArray(bands) || bands.length === 0) throw new RangeError('bands must be a non-empty array of [lo, hi]');
  const out = new Int32Array(2 * bands.length);
  bands.forEach((band, i) => {
    const [k0, k1] = bandBins(band, fs, length, `bands[${i}]`);
    out[2 * i] = k0;
    out[2 * i + 1] = k1;
  });
  return out;
}

/**
 * CPU reference of the band-power convention (float64): for each band, the sum over its bins k of
 * c_k |X_k|^2 / N^2 with c_k = 2 except at DC and an even N's Nyquist. Over all bins it equals
 * mean(x^2) (Parseval, one-sided). `spectrum` is interleaved (re, im) of N/2+1 bins.
 */
export function bandPowersReference(spectrum: Float64Array, length: number, ranges: Int32Array): Float64Array {
  const out = new Float64Array(ranges.length / 2);
  for (let q = 0; q < out.length; q++) {
    let acc = 0;
    for (let k = ranges[2 * q]!; k <= ranges[2 * q + 1]!; k++) {
      const p = spectrum[2 * k]! ** 2 + spectrum[2 * k + 1]! ** 2;
      acc += k > 0 && !(length % 2 === 0 && 2 * k === length) ? 2 * p : p;
    }
    out[q] = acc / (length * length);
  }
  return out;
}
