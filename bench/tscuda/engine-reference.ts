/**
 * Float64 CPU references of the job engine's results, so the engine benchmarks can refuse a
 * fast wrong answer: the `stft` flag's filtered wave and the `cycles` flag's band powers and
 * dominant cycle, defined as the seed's flow (and bench/peers/stft_job_peer.py) defines them:
 * linear detrend -> periodic window -> FFT -> pass-band mask (bins with low <= f <= high, and
 * their mirrors) -> inverse FFT; band power = sum over the band's one-sided bins of c_k |X_k|^2 / N^2
 * (c_k = 2 except DC and Nyquist), Parseval's scaling. Pure (fft.js, radix 4, powers of two).
 */
import FFT from 'fft.js';
import { morletWavelet } from '../../src/signal/index.js';

function hannPeriodic(n: number): Float64Array {
  const w = new Float64Array(n);
  for (let i = 0; i < n; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n);
  return w;
}

/** Least-squares line removed ('linear'), or the mean ('constant'), or nothing (false). */
export function detrendRow(x: ArrayLike<number>, kind: 'linear' | 'constant' | false): Float64Array {
  const n = x.length;
  const out = Float64Array.from(x);
  if (kind === false) return out;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += out[i]!;
  mean /= n;
  if (kind === 'constant') {
    for (let i = 0; i < n; i++) out[i]! -= mean;
    return out;
  }
  const tMean = (n - 1) / 2;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const tc = i - tMean;
    num += out[i]! * tc;
    den += tc * tc;
  }
  const slope = den > 0 ? num / den : 0;
  for (let i = 0; i < n; i++) out[i] = out[i]! - mean - slope * (i - tMean);
  return out;
}

/** The full complex spectrum (interleaved re, im) of the detrended, Hann-windowed row. */
export function windowedSpectrum(
  x: ArrayLike<number>,
  detrend: 'linear' | 'constant' | false = 'linear',
): { spectrum: Float64Array; windowSum: number } {
  const n = x.length;
  const xd = detrendRow(x, detrend);
  const w = hannPeriodic(n);
  let windowSum = 0;
  for (let i = 0; i < n; i++) {
    xd[i]! *= w[i]!;
    windowSum += w[i]!;
  }
  const fft = new FFT(n);
  const out = fft.createComplexArray() as number[];
  fft.realTransform(out, Array.from(xd));
  fft.completeSpectrum(out);
  return { spectrum: Float64Array.from(out), windowSum };
}

/** Whether one-sided bin k (frequency k fs / n) lies in [low, high]. */
function inBand(k: number, n: number, fs: number, band: readonly [number, number]): boolean {
  const f = (k * fs) / n;
  return f >= band[0] && f <= band[1];
}

/** The `stft` flag's filtered wave of one row. */
export function referenceFiltered(x: ArrayLike<number>, fs: number, passBand: readonly [number, number]): Float64Array {
  const n = x.length;
  const { spectrum } = windowedSpectrum(x);
  for (let k = 0; k < n; k++) {
    const mirrored = k <= n / 2 ? k : n - k;
    if (!inBand(mirrored, n, fs, passBand)) {
      spectrum[2 * k] = 0;
      spectrum[2 * k + 1] = 0;
    }
  }
  const fft = new FFT(n);
  const out = fft.createComplexArray() as number[];
  fft.inverseTransform(out, Array.from(spectrum)); // divides by n, as numpy's irfft
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) y[i] = out[2 * i]!;
  return y;
}

/** The `cycles` flag's band powers of one row, and its dominant non-DC bin (frequency, amplitude, phase). */
export function referenceCycles(
  x: ArrayLike<number>,
  fs: number,
  bands: readonly (readonly [number, number])[],
): { bandPowers: Float64Array; dominant: { frequency: number; amplitude: number; phase: number } } {
  const n = x.length;
  const { spectrum, windowSum } = windowedSpectrum(x);
  const half = Math.floor(n / 2);
  const bandPowers = new Float64Array(bands.length);
  let best = -1;
  let bestK = 1;
  for (let k = 0; k <= half; k++) {
    const p = spectrum[2 * k]! ** 2 + spectrum[2 * k + 1]! ** 2;
    const c = k === 0 || (n % 2 === 0 && k === half) ? 1 : 2;
    bands.forEach((b, j) => {
      if (inBand(k, n, fs, b)) bandPowers[j]! += (c * p) / (n * n);
    });
    if (k > 0 && p > best) {
      best = p;
      bestK = k;
    }
  }
  const re = spectrum[2 * bestK]!;
  const im = spectrum[2 * bestK + 1]!;
  return {
    bandPowers,
    dominant: {
      frequency: (bestK * fs) / n,
      amplitude: (2 * Math.hypot(re, im)) / windowSum,
      phase: Math.atan2(im, re),
    },
  };
}

/** ||a - b|| / ||b|| over all entries. */
export function relativeL2(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    const d = a[i]! - b[i]!;
    num += d * d;
    den += b[i]! * b[i]!;
  }
  const r = Math.sqrt(num / Math.max(den, 1e-300));
  return Number.isNaN(r) ? Number.POSITIVE_INFINITY : r;
}

/**
 * The `wavelet` flag's band-reduced Morlet power of one row at a few output samples, by direct
 * convolution with tscuda's wavelets (src/signal/morlet.ts, MNE's convention): for each band,
 * the sum over its centre frequencies (inclusive edges) of |sum_d x[t - d] W(d)|^2. A spot check
 * (a full direct CWT of 64k samples x 128 frequencies would take minutes on the CPU).
 */
export function referenceCwtBandPower(
  x: ArrayLike<number>,
  fs: number,
  freqs: readonly number[],
  nCycles: number,
  bands: readonly (readonly [number, number])[],
  samples: readonly number[],
): Float64Array {
  const n = x.length;
  const out = new Float64Array(bands.length * samples.length);
  freqs.forEach((f) => {
    const { half, values } = morletWavelet(f / fs, nCycles);
    samples.forEach((t, s) => {
      let re = 0;
      let im = 0;
      const lo = Math.max(-half, t - (n - 1));
      const hi = Math.min(half, t);
      for (let d = lo; d <= hi; d++) {
        const v = x[t - d]!;
        re += v * values[2 * (d + half)]!;
        im += v * values[2 * (d + half) + 1]!;
      }
      bands.forEach((b, q) => {
        if (f >= b[0] && f <= b[1]) out[q * samples.length + s]! += re * re + im * im;
      });
    });
  });
  return out;
}
