/**
 * An independent float64 CPU reference of the engine's job flow, by direct DFT (no FFT library,
 * no code from src/signal): detrend, window, one-sided DFT, band mask + inverse, magnitude
 * preview, band powers, band waves, dominant cycle.
 */

export interface ReferenceOptions {
  fs: number;
  detrend: 'linear' | 'constant' | false;
  /** The window's N values (float64). */
  window: Float64Array;
  passBand: readonly [number, number];
  previewBins: number;
  bands: readonly (readonly [number, number])[];
}

export interface ReferenceRow {
  filtered: Float64Array;
  spectrum: Float64Array;
  bandPowers: Float64Array;
  /** bands x N */
  bandWaves: Float64Array;
  dominant: { bin: number; frequency: number; amplitude: number; phase: number };
  /** sum over one-sided bins of |X_k|^2 (unnormalized), for stage checks. */
  energy: number;
}

/** The periodic Hann window (scipy get_window('hann', n)). */
export function hannPeriodic(n: number): Float64Array {
  return Float64Array.from({ length: n }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n));
}

const tables = new Map<number, { cos: Float64Array; sin: Float64Array }>();
function twiddles(n: number): { cos: Float64Array; sin: Float64Array } {
  let t = tables.get(n);
  if (!t) {
    t = { cos: new Float64Array(n), sin: new Float64Array(n) };
    for (let m = 0; m < n; m++) {
      t.cos[m] = Math.cos((2 * Math.PI * m) / n);
      t.sin[m] = Math.sin((2 * Math.PI * m) / n);
    }
    tables.set(n, t);
  }
  return t;
}

/** Bins k with k·fs/n in [lo, hi] (a relative 1e-9 slack at the edges), as an inclusive range. */
export function binRange(band: readonly [number, number], fs: number, n: number): [number, number] {
  const k0 = Math.max(0, Math.ceil((band[0] * n) / fs - 1e-9));
  const k1 = Math.min(Math.floor(n / 2), Math.floor((band[1] * n) / fs + 1e-9));
  return [k0, k1];
}

function detrend(x: Float64Array, how: 'linear' | 'constant' | false): Float64Array {
  const n = x.length;
  if (how === false) return Float64Array.from(x);
  let mean = 0;
  for (const v of x) mean += v;
  mean /= n;
  if (how === 'constant') return x.map((v) => v - mean);
  const tbar = (n - 1) / 2;
  let sxy = 0;
  let sxx = 0;
  for (let t = 0; t < n; t++) {
    sxy += (t - tbar) * (x[t]! - mean);
    sxx += (t - tbar) ** 2;
  }
  const slope = sxy / sxx;
  return x.map((v, t) => v - mean - slope * (t - tbar));
}

/** One-sided DFT (k = 0..n/2), interleaved re/im, e^{-2πi kt/n}. */
function dft(x: Float64Array): Float64Array {
  const n = x.length;
  const K = Math.floor(n / 2) + 1;
  const { cos, sin } = twiddles(n);
  const out = new Float64Array(2 * K);
  for (let k = 0; k < K; k++) {
    let re = 0;
    let im = 0;
    let m = 0;
    for (let t = 0; t < n; t++) {
      re += x[t]! * cos[m]!;
      im -= x[t]! * sin[m]!;
      m += k;
      if (m >= n) m -= n;
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
  return out;
}

/** Inverse of a one-sided spectrum restricted to bins [k0, k1], divided by n (cuFFT C2R semantics: DC and Nyquist real parts only). */
function inverse(X: Float64Array, n: number, k0: number, k1: number): Float64Array {
  const { cos, sin } = twiddles(n);
  const y = new Float64Array(n);
  for (let k = k0; k <= k1; k++) {
    const unpaired = k === 0 || (n % 2 === 0 && 2 * k === n);
    const re = X[2 * k]!;
    const im = unpaired ? 0 : X[2 * k + 1]!;
    const c = unpaired ? 1 : 2;
    let m = 0;
    for (let t = 0; t < n; t++) {
      y[t] = y[t]! + c * (re * cos[m]! - im * sin[m]!);
      m += k;
      if (m >= n) m -= n;
    }
  }
  for (let t = 0; t < n; t++) y[t] = y[t]! / n;
  return y;
}

/** The engine's results for one series, in float64. */
export function referenceRow(x: ArrayLike<number>, o: ReferenceOptions): ReferenceRow {
  const n = x.length;
  const K = Math.floor(n / 2) + 1;
  const d = detrend(Float64Array.from(x), o.detrend);
  const w = d.map((v, t) => v * o.window[t]!);
  const X = dft(w);
  const [p0, p1] = binRange(o.passBand, o.fs, n);
  const filtered = inverse(X, n, p0, p1);
  const spectrum = new Float64Array(o.previewBins);
  for (let k = 0; k < o.previewBins; k++) spectrum[k] = Math.hypot(X[2 * k]!, X[2 * k + 1]!) / n;
  const weight = (k: number): number => (k === 0 || (n % 2 === 0 && 2 * k === n) ? 1 : 2);
  const bandPowers = new Float64Array(o.bands.length);
  const bandWaves = new Float64Array(o.bands.length * n);
  o.bands.forEach((band, q) => {
    const [k0, k1] = binRange(band, o.fs, n);
    let acc = 0;
    for (let k = k0; k <= k1; k++) acc += weight(k) * (X[2 * k]! ** 2 + X[2 * k + 1]! ** 2);
    bandPowers[q] = acc / (n * n);
    bandWaves.set(inverse(X, n, k0, k1), q * n);
  });
  let best = -1;
  let bin = -1;
  for (let k = 1; k < K; k++) {
    const p = X[2 * k]! ** 2 + X[2 * k + 1]! ** 2;
    if (p > best) {
      best = p;
      bin = k;
    }
  }
  const wsum = o.window.reduce((a, b) => a + b, 0);
  const dominant = {
    bin,
    frequency: (bin * o.fs) / n,
    amplitude: (weight(bin) * Math.sqrt(best)) / wsum,
    phase: Math.atan2(X[2 * bin + 1]!, X[2 * bin]!),
  };
  let energy = 0;
  for (let k = 0; k < K; k++) energy += X[2 * k]! ** 2 + X[2 * k + 1]! ** 2;
  return { filtered, spectrum, bandPowers, bandWaves, dominant, energy };
}

/** sqrt(sum (a-b)^2 / sum b^2): NaN anywhere gives Infinity. */
export function relL2(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  if (actual.length !== expected.length) return Infinity;
  let num = 0;
  let den = 0;
  for (let i = 0; i < expected.length; i++) {
    const d = actual[i]! - expected[i]!;
    if (Number.isNaN(d)) return Infinity;
    num += d * d;
    den += expected[i]! ** 2;
  }
  return Math.sqrt(num / Math.max(den, 1e-300));
}

/** Rows [start, start + count) of each row-major field of length `per` per row. */
export function rows(a: ArrayLike<number>, per: number, start: number, count: number): Float64Array {
  const out = new Float64Array(per * count);
  for (let i = 0; i < out.length; i++) out[i] = a[start * per + i]!;
  return out;
}

/** Random series with content in every band: noise, a trend, DC, and a strong bin-centred cosine at `bin`. */
export function testSeries(
  batch: number,
  n: number,
  bin: number,
  Array_: Float32ArrayConstructor | Float64ArrayConstructor = Float32Array,
): Float32Array | Float64Array {
  const out = new Array_(batch * n);
  for (let b = 0; b < batch; b++) {
    const phase = Math.random() * 2 * Math.PI - Math.PI;
    const amp = 2 + Math.random();
    const trend = Math.random() - 0.5;
    const dc = Math.random() * 4 - 2;
    for (let t = 0; t < n; t++)
      out[b * n + t] =
        dc +
        (trend * t) / n +
        amp * Math.cos((2 * Math.PI * (bin + b) * t) / n + phase) +
        0.3 * (Math.random() * 2 - 1);
  }
  return out;
}

export interface FramedOptions {
  fs: number;
  nperseg: number;
  noverlap: number;
  window: Float64Array;
  detrend: 'linear' | 'constant' | false;
  passBand: readonly [number, number];
  previewBins: number;
}

/**
 * scipy.signal.stft(x, boundary='zeros', padded=True, scaling='spectrum') -> zero the bins outside
 * the pass band -> scipy.signal.istft(...)[:N], in float64 by direct DFT, and |Zxx| of the first
 * previewBins frequencies (previewBins x frames).
 */
export function framedReference(
  x: ArrayLike<number>,
  o: FramedOptions,
): { filtered: Float64Array; spectrum: Float64Array; frames: number } {
  const n = x.length;
  const { nperseg, noverlap } = o;
  const step = nperseg - noverlap;
  const ext = Math.floor(nperseg / 2);
  const extended = n + 2 * ext;
  const mod = (a: number, m: number): number => ((a % m) + m) % m;
  const padded = extended + mod(mod(-(extended - nperseg), step), nperseg);
  const xp = new Float64Array(padded);
  for (let t = 0; t < n; t++) xp[t + ext] = x[t]!;
  const frames = Math.floor((padded - noverlap) / step);
  const wsum = o.window.reduce((a, b) => a + b, 0);
  const [k0, k1] = binRange(o.passBand, o.fs, nperseg);
  const out = new Float64Array(padded);
  const norm = new Float64Array(padded);
  const spectrum = new Float64Array(o.previewBins * frames);
  for (let f = 0; f < frames; f++) {
    const seg = detrend(xp.slice(f * step, f * step + nperseg), o.detrend).map((v, i) => v * o.window[i]!);
    const X = dft(seg);
    for (let k = 0; k < o.previewBins; k++) spectrum[k * frames + f] = Math.hypot(X[2 * k]!, X[2 * k + 1]!) / wsum;
    const y = inverse(X, nperseg, k0, k1);
    for (let i = 0; i < nperseg; i++) {
      out[f * step + i] = out[f * step + i]! + y[i]! * o.window[i]!;
      norm[f * step + i] = norm[f * step + i]! + o.window[i]! ** 2;
    }
  }
  const filtered = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    const p = t + ext;
    filtered[t] = norm[p]! > 1e-10 ? out[p]! / norm[p]! : out[p]!;
  }
  return { filtered, spectrum, frames };
}
