/**
 * The Morlet wavelet convention of tscuda's CWT (CUDA-free), and a float64 CPU reference.
 *
 * Convention: MNE-Python's `mne.time_frequency.morlet(sfreq, freqs, n_cycles, zero_mean=False)`.
 * For a centre frequency f (Hz) with n cycles, sigma_t = n / (2π f) seconds, and the wavelet sampled
 * at d = ..., -1, 0, 1, ... samples (t = d / fs) is
 *
 *     W(d) = c · exp(-t² / (2 sigma_t²)) · exp(2πi f t)     for |t| < 5 sigma_t, 0 beyond,
 *
 * with c chosen so that ||W||₂ = √2 (MNE divides by √0.5·||W||). The CWT is the linear convolution
 * y[n] = Σ_d x[n - d] W(d) with the wavelet centred on each output sample ('same' mode, as MNE's
 * cwt), x taken as zero outside [0, N). By FFT: x is zero-padded to a fast length L ≥ N + h (h the
 * half support, at most N - 1 matters), so the circular convolution equals the linear one on [0, N).
 *
 * Scales: `scales` s (in samples, the Gaussian's sigma) with `w0` (default 6) mean
 * f = w0·fs / (2π s) and n_cycles = w0, the usual Morlet (w0 = 6) parametrisation.
 */
import { checkFs } from './geometry.js';
import { positiveInteger } from '../runtime/value-checks.js';

/** What the CWT takes to pick its wavelets. */
export interface MorletOptions {
  fs?: number | undefined;
  /** Centre frequencies in Hz (0 < f <= fs/2). Give `freqs` or `scales`. */
  freqs?: readonly number[] | Float64Array | undefined;
  /** Scales in samples (Gaussian sigma); with `w0`. */
  scales?: readonly number[] | Float64Array | undefined;
  /** Cycles per wavelet with `freqs` (default 6). */
  nCycles?: number | undefined;
  /** Morlet w0 with `scales` (default 6). */
  w0?: number | undefined;
}

/** The resolved wavelets of one CWT call. */
export interface MorletGeometry {
  fs: number;
  /** Samples per series. */
  length: number;
  /** Centre frequencies in Hz. */
  freqs: Float64Array;
  nCycles: number;
  /** Padded FFT length. */
  paddedLength: number;
  /** Per wavelet: (cycles per sample, sigma in samples, normalisation c, half support h), 4 values each. */
  params: Float64Array;
  /** A cache key for the wavelet table. */
  key: string;
}

/** Smallest 2^a·3^b·5^c·7^d >= n (cuFFT's fast sizes). */
export function fastLength(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`fastLength needs a positive integer, got ${n}`);
  let best = Infinity;
  for (let a = 1; a < 2 * n + 2; a *= 2)
    for (let b = a; b < 2 * n + 2; b *= 3)
      for (let c = b; c < 2 * n + 2; c *= 5)
        for (let d = c; d < 2 * n + 2; d *= 7) {
          if (d >= n && d < best) best = d;
        }
  return best;
}

/** Half-supports up to this many samples have their energy summed (at most ~4 ms). */
const MAX_SUMMED_HALF = 1 << 20;

/** One wavelet's sampling: sigma in samples, half support h = ceil(5 sigma) - 1, and c (||W|| = √2). */
export function morletShape(cyclesPerSample: number, nCycles: number): { sigma: number; half: number; norm: number } {
  const sigma = nCycles / (2 * Math.PI * cyclesPerSample);
  const half = Math.max(0, Math.ceil(5 * sigma) - 1);
  let energy = 0;
  // Summed while that is cheap. Past it, the closed form: a Gaussian summed over the integers is
  // sigma * sqrt(pi) to double precision once sigma > 2, and its tails past 5 sigma are 1.5e-12 of
  // it (a wavelet far longer than any signal, e.g. 1 nHz at 1 kHz, once looped for minutes).
  if (half > MAX_SUMMED_HALF) energy = sigma * Math.sqrt(Math.PI);
  else for (let d = -half; d <= half; d++) energy += Math.exp(-(d * d) / (sigma * sigma));
  return { sigma, half, norm: 1 / (Math.sqrt(0.5) * Math.sqrt(energy)) };
}

/** Resolves and validates the wavelets of a CWT over series of `length` samples. */
export function morletGeometry(length: number, options: MorletOptions): MorletGeometry {
  positiveInteger(length, 'signal length');
  const fs = options.fs ?? 1;
  checkFs(fs);
  if ((options.freqs === undefined) === (options.scales === undefined))
    throw new TypeError('cwt needs exactly one of freqs or scales');
  let freqs: Float64Array;
  let nCycles: number;
  if (options.freqs !== undefined) {
    if (options.w0 !== undefined) throw new TypeError('w0 goes with scales; with freqs give nCycles');
    freqs = Float64Array.from(options.freqs);
    nCycles = options.nCycles ?? 6;
  } else {
    if (options.nCycles !== undefined) throw new TypeError('nCycles goes with freqs; with scales give w0');
    const w0 = options.w0 ?? 6;
    if (!(Number.isFinite(w0) && w0 > 0)) throw new RangeError(`w0 must be a positive number, got ${w0}`);
    const scales = Float64Array.from(options.scales!);
    scales.forEach((s, i) => {
      if (!(Number.isFinite(s) && s > 0)) throw new RangeError(`scales[${i}] must be a positive number, got ${s}`);
    });
    freqs = scales.map((s) => (w0 * fs) / (2 * Math.PI * s));
    nCycles = w0;
  }
  if (!(Number.isFinite(nCycles) && nCycles > 0))
    throw new RangeError(`nCycles must be a positive number, got ${nCycles}`);
  if (freqs.length === 0) throw new RangeError('cwt needs at least one frequency (or scale)');
  freqs.forEach((f, i) => {
    if (!(Number.isFinite(f) && f > 0 && f <= fs / 2))
      throw new RangeError(`freqs[${i}] = ${f} must lie in (0, fs/2 = ${fs / 2}]`);
  });
  const params = new Float64Array(4 * freqs.length);
  let maxHalf = 0;
  freqs.forEach((f, j) => {
    const cps = f / fs;
    const { sigma, half, norm } = morletShape(cps, nCycles);
    params.set([cps, sigma, norm, half], 4 * j);
    maxHalf = Math.max(maxHalf, half);
  });
  const paddedLength = fastLength(length + Math.min(maxHalf, length - 1));
  const key = `morlet:${paddedLength}:${nCycles}:${Array.from(params.filter((_, i) => i % 4 === 0)).join(',')}`;
  return { fs, length, freqs, nCycles, paddedLength, params, key };
}

/** The sampled wavelet of one frequency, d = -h..h (float64, interleaved re/im). */
export function morletWavelet(cyclesPerSample: number, nCycles: number): { half: number; values: Float64Array } {
  const { sigma, half, norm } = morletShape(cyclesPerSample, nCycles);
  const values = new Float64Array(2 * (2 * half + 1));
  for (let d = -half; d <= half; d++) {
    const env = norm * Math.exp(-(d * d) / (2 * sigma * sigma));
    const ph = 2 * Math.PI * cyclesPerSample * d;
    values[2 * (d + half)] = env * Math.cos(ph);
    values[2 * (d + half) + 1] = env * Math.sin(ph);
  }
  return { half, values };
}

/**
 * CPU reference CWT of one real series by direct convolution (float64): interleaved complex,
 * freqs x N. O(N·h) per frequency: for tests and small inputs.
 */
export function cwtReference(x: ArrayLike<number>, geometry: MorletGeometry): Float64Array {
  const n = x.length;
  const nf = geometry.freqs.length;
  const out = new Float64Array(2 * nf * n);
  for (let j = 0; j < nf; j++) {
    const { half, values } = morletWavelet(geometry.params[4 * j]!, geometry.nCycles);
    for (let t = 0; t < n; t++) {
      let re = 0;
      let im = 0;
      const lo = Math.max(-half, t - (n - 1));
      const hi = Math.min(half, t);
      for (let d = lo; d <= hi; d++) {
        const v = x[t - d]!;
        re += v * values[2 * (d + half)]!;
        im += v * values[2 * (d + half) + 1]!;
      }
      out[2 * (j * n + t)] = re;
      out[2 * (j * n + t) + 1] = im;
    }
  }
  return out;
}

/** CSR membership of frequencies in bands [lo, hi] (inclusive): offsets (bands + 1) and frequency indices. */
export function bandMembers(
  freqs: Float64Array,
  bands: readonly (readonly [number, number])[],
): { offsets: Int32Array; members: Int32Array } {
  if (!Array.isArray(bands) || bands.length === 0) throw new RangeError('bands must be a non-empty array of [lo, hi]');
  const offsets = new Int32Array(bands.length + 1);
  const members: number[] = [];
  bands.forEach((band, q) => {
    if (
      !Array.isArray(band) ||
      band.length !== 2 ||
      !(band[0] <= band[1]) ||
      !Number.isFinite(band[0]) ||
      !Number.isFinite(band[1])
    ) {
      throw new RangeError(`bands[${q}] must be [lo, hi] with lo <= hi, got ${JSON.stringify(band)}`);
    }
    freqs.forEach((f, j) => {
      if (f >= band[0] && f <= band[1]) members.push(j);
    });
    offsets[q + 1] = members.length;
  });
  return { offsets, members: members.length ? Int32Array.from(members) : new Int32Array(1) };
}
