/**
 * Float64 references the resampling and cross-spectral tests share, each written from its
 * definition (never from src/signal): upfirdn (zeros inserted, the convolution sum, every down-th
 * sample), scipy's csd segments (mean removed, windowed, DFT, conj(X)·Y scaled and doubled), the
 * median and scipy's median bias.
 */
import type { SpectralGeometry } from '../../../../src/signal/geometry.js';

/** upfirdn by its definition: zeros inserted, the convolution sum, every down-th sample. */
export function upfirdnReference(h: ArrayLike<number>, x: ArrayLike<number>, up: number, down: number): Float64Array {
  const upsampled = new Float64Array((x.length - 1) * up + 1);
  for (let i = 0; i < x.length; i++) upsampled[i * up] = x[i]!;
  const full = new Float64Array(upsampled.length + h.length - 1);
  for (let i = 0; i < upsampled.length; i++) for (let k = 0; k < h.length; k++) full[i + k]! += upsampled[i]! * h[k]!;
  return full.filter((_, i) => i % down === 0);
}

/** One segment's nfft-point spectrum by its definition (mean removed, windowed, zero-padded DFT). */
export function segmentSpectrum(
  x: ArrayLike<number>,
  start: number,
  g: SpectralGeometry,
): { re: Float64Array; im: Float64Array } {
  const seg = Float64Array.from({ length: g.nperseg }, (_, t) => x[start + t]!);
  const mean = seg.reduce((a, b) => a + b, 0) / g.nperseg;
  const w = seg.map((v, t) => (v - mean) * g.window[t]!);
  const re = new Float64Array(g.nfft);
  const im = new Float64Array(g.nfft);
  for (let k = 0; k < g.nfft; k++)
    for (let t = 0; t < g.nperseg; t++) {
      const a = (-2 * Math.PI * k * t) / g.nfft;
      re[k]! += w[t]! * Math.cos(a);
      im[k]! += w[t]! * Math.sin(a);
    }
  return { re, im };
}

/** scipy's csd of one pair, per segment and bin: conj(X)·Y / (fs Σw²), doubled one-sided off DC and Nyquist. [frames][freqs] of [re, im]. */
export function crossSegments(x: ArrayLike<number>, y: ArrayLike<number>, g: SpectralGeometry): [number, number][][] {
  const scale = 1 / (g.fs * g.window.reduce((a, v) => a + v * v, 0));
  return Array.from({ length: g.frames }, (_, f) => {
    const X = segmentSpectrum(x, f * g.hop, g);
    const Y = segmentSpectrum(y, f * g.hop, g);
    return Array.from({ length: g.freqs }, (_, k): [number, number] => {
      const doubled = g.onesided && k > 0 && !(g.nfft % 2 === 0 && 2 * k === g.nfft) ? 2 : 1;
      const s = scale * doubled;
      return [s * (X.re[k]! * Y.re[k]! + X.im[k]! * Y.im[k]!), s * (X.re[k]! * Y.im[k]! - X.im[k]! * Y.re[k]!)];
    });
  });
}

/** The mean over segments of crossSegments: [freqs] of [re, im]. */
export function csdMeanReference(x: ArrayLike<number>, y: ArrayLike<number>, g: SpectralGeometry): [number, number][] {
  const segs = crossSegments(x, y, g);
  return Array.from(
    { length: g.freqs },
    (_, k) => [0, 1].map((part) => segs.reduce((a, s) => a + s[k]![part]!, 0) / g.frames) as [number, number],
  );
}

/** The median (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/** scipy's _median_bias(n), written from its series: 1 + Σ_{i=1}^{(n−1)/2} 1/(2i+1) − 1/(2i). */
export function medianBiasReference(n: number): number {
  let b = 1;
  for (let i = 1; i <= (n - 1) >> 1; i++) b += 1 / (2 * i + 1) - 1 / (2 * i);
  return b;
}
