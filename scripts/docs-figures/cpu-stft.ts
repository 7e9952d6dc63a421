/**
 * The STFT the docs figures are drawn from, on the CPU (fft.js, float64), so they can be redrawn on
 * a machine without a GPU: scipy.signal.stft(x, fs, nperseg, noverlap) with a periodic Hann window,
 * zero boundary extension, zero padding of the last segment, 'spectrum' scaling, each segment
 * optionally detrended (detrend='linear'), |Zxx| in scipy's layout (frequencies x frames).
 */
import FFT from 'fft.js';

/** The segments' geometry and detrending. */
export interface CpuStftOptions {
  fs: number;
  /** A power of two (fft.js). */
  nperseg: number;
  noverlap: number;
  detrend: 'linear' | false;
}

/** |Zxx| (frequencies x frames) and its axes, as scipy returns f, t, Zxx. */
export interface CpuStft {
  magnitude: Float32Array;
  f: Float64Array;
  t: Float64Array;
}

/** |scipy.signal.stft(signal, ...)| of one series. */
export function cpuStftMagnitude(signal: ArrayLike<number>, o: CpuStftOptions): CpuStft {
  const { fs, nperseg, noverlap } = o;
  const n = signal.length;
  const hop = nperseg - noverlap;
  const window = Float64Array.from({ length: nperseg }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / nperseg));
  const scale = window.reduce((a, b) => a + b, 0);
  // boundary='zeros' adds nperseg / 2 zeros at each end; padded=True fills the last segment with zeros.
  const frames = Math.ceil(n / hop) + 1;
  const extended = new Float64Array((frames - 1) * hop + nperseg);
  for (let i = 0; i < n; i++) extended[nperseg / 2 + i] = signal[i]!;
  const freqs = nperseg / 2 + 1;
  const magnitude = new Float32Array(freqs * frames);
  const fft = new FFT(nperseg);
  const segment = fft.createComplexArray() as number[];
  const spectrum = fft.createComplexArray() as number[];
  for (let t = 0; t < frames; t++) {
    const seg = extended.subarray(t * hop, t * hop + nperseg);
    let mean = 0;
    let slope = 0;
    if (o.detrend === 'linear') {
      mean = seg.reduce((a, b) => a + b, 0) / nperseg;
      let sxy = 0;
      let sxx = 0;
      for (let i = 0; i < nperseg; i++) {
        sxy += (i - (nperseg - 1) / 2) * (seg[i]! - mean);
        sxx += (i - (nperseg - 1) / 2) ** 2;
      }
      slope = sxy / sxx;
    }
    for (let i = 0; i < nperseg; i++) {
      segment[2 * i] = (seg[i]! - mean - slope * (i - (nperseg - 1) / 2)) * window[i]!;
      segment[2 * i + 1] = 0;
    }
    fft.transform(spectrum, segment);
    for (let k = 0; k < freqs; k++)
      magnitude[k * frames + t] = Math.hypot(spectrum[2 * k]!, spectrum[2 * k + 1]!) / scale;
  }
  return {
    magnitude,
    f: Float64Array.from({ length: freqs }, (_, k) => (k * fs) / nperseg),
    t: Float64Array.from({ length: frames }, (_, i) => (i * hop) / fs),
  };
}
