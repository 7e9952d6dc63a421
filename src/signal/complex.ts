/**
 * Complex arithmetic in float64 for the CPU filter design (zeros, poles and gains): the few
 * operations numpy's complex128 performs there, with numpy's branch choices (principal square
 * root, exp, sinh), so designed coefficients match scipy's within rounding.
 */

/** A complex number. */
export interface Complex {
  readonly re: number;
  readonly im: number;
}

/** re + i·im. */
export const cx = (re: number, im = 0): Complex => ({ re, im });
/** a + b. */
export const cadd = (a: Complex, b: Complex): Complex => cx(a.re + b.re, a.im + b.im);
/** a − b. */
export const csub = (a: Complex, b: Complex): Complex => cx(a.re - b.re, a.im - b.im);
/** a · b. */
export const cmul = (a: Complex, b: Complex): Complex => cx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
/** s · a for a real s. */
export const cscale = (a: Complex, s: number): Complex => cx(a.re * s, a.im * s);
/** −a. */
export const cneg = (a: Complex): Complex => cx(-a.re, -a.im);
/** The conjugate of a. */
export const cconj = (a: Complex): Complex => cx(a.re, -a.im);
/** |a|. */
export const cabs = (a: Complex): number => Math.hypot(a.re, a.im);
/** Whether a is real in numpy's sense (`np.isreal`: imaginary part exactly 0). */
export const isReal = (a: Complex): boolean => a.im === 0;

/** a / b, scaled (Smith's method) so that neither overflows nor underflows before the division. */
export function cdiv(a: Complex, b: Complex): Complex {
  if (Math.abs(b.re) >= Math.abs(b.im)) {
    const r = b.im / b.re;
    const d = b.re + b.im * r;
    return cx((a.re + a.im * r) / d, (a.im - a.re * r) / d);
  }
  const r = b.re / b.im;
  const d = b.re * r + b.im;
  return cx((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}

/** The principal square root (C99 csqrt: non-negative real part, imaginary part with the sign of a.im, signed zero included). */
export function csqrt(a: Complex): Complex {
  if (a.re === 0 && a.im === 0) return cx(0, a.im);
  const t = Math.sqrt((Math.abs(a.re) + Math.hypot(a.re, a.im)) / 2);
  if (a.re >= 0) return cx(t, a.im / (2 * t));
  return cx(Math.abs(a.im) / (2 * t), Object.is(a.im, -0) || a.im < 0 ? -t : t);
}

/** e^(iθ). */
export const expi = (theta: number): Complex => cx(Math.cos(theta), Math.sin(theta));

/** sinh(a) = sinh(re)cos(im) + i cosh(re)sin(im). */
export const csinh = (a: Complex): Complex => cx(Math.sinh(a.re) * Math.cos(a.im), Math.cosh(a.re) * Math.sin(a.im));

/** The product of `values` (1 when empty), multiplied left to right as numpy's prod does. */
export function cprod(values: readonly Complex[]): Complex {
  let p = cx(1);
  for (const v of values) p = cmul(p, v);
  return p;
}
