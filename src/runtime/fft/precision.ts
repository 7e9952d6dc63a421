/**
 * Real precisions and the cuFFT transform types that go with them: the one place that decides
 * that f32 series use R2C/C2R (and C2C) plans over c64 spectra and f64 series D2Z/Z2D (and Z2Z) over c128.
 */

/** The real element type of a series: single ('f32') or double ('f64') precision. */
export type Precision = 'f32' | 'f64';
/** The complex element type of a precision's spectra: c64 for f32, c128 for f64. */
export type ComplexOf<P extends Precision> = P extends 'f32' ? 'c64' : 'c128';
/** `ComplexOf` as a value. */
export const COMPLEX_OF: Readonly<{ [P in Precision]: ComplexOf<P> }> = { f32: 'c64', f64: 'c128' };

/** The forward real -> complex transform of a precision: R2C for f32, D2Z for f64. */
export type RealToComplex<P extends Precision> = P extends 'f32' ? 'R2C' : 'D2Z';
/** The inverse complex -> real transform of a precision: C2R for f32, Z2D for f64. */
export type ComplexToReal<P extends Precision> = P extends 'f32' ? 'C2R' : 'Z2D';

/** The complex <-> complex transform of a precision: C2C for f32 (c64), Z2Z for f64 (c128). */
export type ComplexToComplex<P extends Precision> = P extends 'f32' ? 'C2C' : 'Z2Z';

/** The cuFFT type of a complex transform over precision `p`'s complex type (C2C or Z2Z). */
export function complexType<P extends Precision>(p: P): ComplexToComplex<P> {
  return (p === 'f32' ? 'C2C' : 'Z2Z') as ComplexToComplex<P>;
}

/** The cuFFT type of a forward real transform of precision `p` (R2C or D2Z). */
export function realToComplexType<P extends Precision>(p: P): RealToComplex<P> {
  return (p === 'f32' ? 'R2C' : 'D2Z') as RealToComplex<P>;
}

/** The cuFFT type of an inverse transform back to precision `p` (C2R or Z2D). */
export function complexToRealType<P extends Precision>(p: P): ComplexToReal<P> {
  return (p === 'f32' ? 'C2R' : 'Z2D') as ComplexToReal<P>;
}
