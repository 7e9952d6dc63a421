/**
 * Float64 CPU references of the rows' operations (pure, no CUDA), written apart from tscuda's kernels:
 * the rows check tscuda's output against them, and scripts/docs-figures draws the band-passed chirp
 * of docs/signal.md through sosfiltReference.
 */
import FFT from 'fft.js';

/** scipy.signal.sosfilt of one series in float64 (transposed direct form II per section, zero initial state). */
export function sosfiltReference(sos: readonly (readonly number[])[], x: ArrayLike<number>): Float64Array {
  const y = Float64Array.from(x as ArrayLike<number>);
  for (const [b0, b1, b2, , a1, a2] of sos) {
    let z1 = 0;
    let z2 = 0;
    for (let i = 0; i < y.length; i++) {
      const v = y[i]!;
      const out = b0! * v + z1;
      z1 = b1! * v - a1! * out + z2;
      z2 = b2! * v - a2! * out;
      y[i] = out;
    }
  }
  return y;
}

/** scipy.signal.hilbert of one series in float64 (its length a power of two, as fft.js needs): interleaved re, im. */
export function analyticReference(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const fft = new FFT(n);
  const spectrum = fft.createComplexArray() as number[];
  fft.realTransform(spectrum, Array.from(x));
  fft.completeSpectrum(spectrum);
  // scipy's weights: 1 at DC (and at N/2 for even N), 2 for the positive frequencies, 0 for the negative ones.
  for (let k = 1; k < n; k++) {
    const w = k < n / 2 ? 2 : k === n / 2 ? 1 : 0;
    spectrum[2 * k] = spectrum[2 * k]! * w;
    spectrum[2 * k + 1] = spectrum[2 * k + 1]! * w;
  }
  const z = fft.createComplexArray() as number[];
  fft.inverseTransform(z, spectrum); // fft.js's inverse divides by n, as numpy's ifft
  return Float64Array.from(z);
}
