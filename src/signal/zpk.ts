/**
 * Zeros, poles and gain of IIR filters, as scipy.signal builds them: the analog low-pass
 * prototypes (buttap, cheb1ap, cheb2ap), the frequency transformations (lp2lp_zpk, lp2hp_zpk,
 * lp2bp_zpk, lp2bs_zpk) and the bilinear transform (bilinear_zpk). Pure float64, the same
 * operations in the same order as scipy 1.18, so the results agree within rounding.
 */
import {
  cabs,
  cadd,
  cconj,
  cdiv,
  cmul,
  cneg,
  cprod,
  cscale,
  csinh,
  csqrt,
  csub,
  cx,
  expi,
  type Complex,
} from './complex.js';

/** A filter as zeros, poles and a real gain. */
export interface Zpk {
  z: Complex[];
  p: Complex[];
  k: number;
}

/** m = -N+1, -N+3, ..., N-1 (numpy's arange(-N+1, N, 2)). */
function oddSteps(n: number): number[] {
  const m: number[] = [];
  for (let v = -n + 1; v < n; v += 2) m.push(v);
  return m;
}

/** scipy.signal.buttap: N poles on the unit circle in the left half plane, no zeros, gain 1. */
export function buttap(n: number): Zpk {
  // -exp(iπm/2N); the middle pole of an odd order is exactly -1.
  return { z: [], p: oddSteps(n).map((m) => cneg(expi((Math.PI * m) / (2 * n)))), k: 1 };
}

/** scipy.signal.cheb1ap: Chebyshev type I prototype with `rp` dB of passband ripple. */
export function cheb1ap(n: number, rp: number): Zpk {
  const eps = Math.sqrt(10 ** (0.1 * rp) - 1);
  const mu = (1 / n) * Math.asinh(1 / eps);
  const p = oddSteps(n).map((m) => cneg(csinh(cx(mu, (Math.PI * m) / (2 * n)))));
  let k = cprod(p.map(cneg)).re;
  // An even order starts at the bottom of the ripple: DC gain 10^(-rp/20).
  if (n % 2 === 0) k = k / Math.sqrt(1 + eps * eps);
  return { z: [], p, k };
}

/** scipy.signal.cheb2ap: Chebyshev type II prototype with `rs` dB of stopband attenuation. */
export function cheb2ap(n: number, rs: number): Zpk {
  const de = 1 / Math.sqrt(10 ** (0.1 * rs) - 1);
  const mu = Math.asinh(1 / de) / n;
  // An odd order has no zero at infinity's mirror (m = 0 is left out).
  const mz = n % 2 ? oddSteps(n).filter((m) => m !== 0) : oddSteps(n);
  const z = mz.map((m) => cneg(cconj(cdiv(cx(0, 1), cx(Math.sin((m * Math.PI) / (2 * n)))))));
  const p = oddSteps(n).map((m) => {
    const b = cneg(expi((Math.PI * m) / (2 * n)));
    // Butterworth poles warped onto the ellipse, then inverted.
    return cdiv(cx(1), cx(Math.sinh(mu) * b.re, Math.cosh(mu) * b.im));
  });
  const k = cdiv(cprod(p.map(cneg)), cprod(z.map(cneg))).re;
  return { z, p, k };
}

/** Poles minus zeros; scipy's "improper transfer function" when negative. */
function relativeDegree(f: Zpk): number {
  const degree = f.p.length - f.z.length;
  if (degree < 0) throw new RangeError('improper transfer function: more zeros than poles');
  return degree;
}

/** scipy.signal.lp2lp_zpk: a unit-cutoff low-pass moved to cutoff `wo` (rad/s). */
export function lp2lpZpk(f: Zpk, wo: number): Zpk {
  const degree = relativeDegree(f);
  return { z: f.z.map((v) => cscale(v, wo)), p: f.p.map((v) => cscale(v, wo)), k: f.k * wo ** degree };
}

/** scipy.signal.lp2hp_zpk: a unit-cutoff low-pass turned into a high-pass at `wo`. */
export function lp2hpZpk(f: Zpk, wo: number): Zpk {
  const degree = relativeDegree(f);
  const w = cx(wo);
  const z = [...f.z.map((v) => cdiv(w, v)), ...Array.from({ length: degree }, () => cx(0))];
  const k = f.k * cdiv(cprod(f.z.map(cneg)), cprod(f.p.map(cneg))).re;
  return { z, p: f.p.map((v) => cdiv(w, v)), k };
}

/** Each point v doubled into v ± sqrt(v² − wo²) (the band transformations' shift to ±wo). */
function splitAround(values: readonly Complex[], wo: number): Complex[] {
  const w2 = cx(wo * wo);
  const root = values.map((v) => csqrt(csub(cmul(v, v), w2)));
  return [...values.map((v, i) => cadd(v, root[i]!)), ...values.map((v, i) => csub(v, root[i]!))];
}

/** scipy.signal.lp2bp_zpk: a unit-cutoff low-pass turned into a band-pass centred on `wo` of width `bw`. */
export function lp2bpZpk(f: Zpk, wo: number, bw: number): Zpk {
  const degree = relativeDegree(f);
  const z = [
    ...splitAround(
      f.z.map((v) => cscale(v, bw / 2)),
      wo,
    ),
    ...Array.from({ length: degree }, () => cx(0)),
  ];
  return {
    z,
    p: splitAround(
      f.p.map((v) => cscale(v, bw / 2)),
      wo,
    ),
    k: f.k * bw ** degree,
  };
}

/** scipy.signal.lp2bs_zpk: a unit-cutoff low-pass turned into a band-stop centred on `wo` of width `bw`. */
export function lp2bsZpk(f: Zpk, wo: number, bw: number): Zpk {
  const degree = relativeDegree(f);
  const half = cx(bw / 2);
  const z = [
    ...splitAround(
      f.z.map((v) => cdiv(half, v)),
      wo,
    ),
    ...Array.from({ length: degree }, () => cx(0, wo)),
    ...Array.from({ length: degree }, () => cx(0, -wo)),
  ];
  const k = f.k * cdiv(cprod(f.z.map(cneg)), cprod(f.p.map(cneg))).re;
  return {
    z,
    p: splitAround(
      f.p.map((v) => cdiv(half, v)),
      wo,
    ),
    k,
  };
}

/** scipy.signal.bilinear_zpk: s = 2·fs·(z − 1)/(z + 1); zeros at infinity land on Nyquist (z = −1). */
export function bilinearZpk(f: Zpk, fs: number): Zpk {
  const degree = relativeDegree(f);
  const fs2 = cx(2 * fs);
  const z = [...f.z.map((v) => cdiv(cadd(fs2, v), csub(fs2, v))), ...Array.from({ length: degree }, () => cx(-1))];
  const p = f.p.map((v) => cdiv(cadd(fs2, v), csub(fs2, v)));
  const k = f.k * cdiv(cprod(f.z.map((v) => csub(fs2, v))), cprod(f.p.map((v) => csub(fs2, v)))).re;
  return { z, p, k };
}

/** |1 − |v||: how close a digital pole is to the unit circle (zpk2sos pairs the closest first). */
export const distanceToUnitCircle = (v: Complex): number => Math.abs(1 - cabs(v));
