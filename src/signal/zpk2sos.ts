/**
 * scipy.signal.zpk2sos with its default digital pairing ('nearest'), step for step: the same
 * conjugate split (_cplxreal), the same order of picking poles (closest to the unit circle last)
 * and zeros (nearest), so the rows come out in scipy's order with scipy's values within rounding.
 */
import { cabs, cconj, cmul, csub, cx, isReal, type Complex } from './complex.js';
import { distanceToUnitCircle, type Zpk } from './zpk.js';
import { FilterCoefficientError } from './filter-errors.js';

/** Relative tolerance of _cplxreal: 100 float64 epsilons. */
const TOL = 100 * Number.EPSILON;

/** Stable sort of `values` by `key` (numpy's lexsort is stable; ties keep their order). */
function sortedBy(values: readonly Complex[], key: (a: Complex, b: Complex) => number): Complex[] {
  return values
    .map((v, i) => ({ v, i }))
    .sort((a, b) => key(a.v, b.v) || a.i - b.i)
    .map((e) => e.v);
}

/**
 * scipy's _cplxreal: the upper halves of the conjugate pairs (each pair averaged), then the real
 * values, both sorted by real part then |imaginary part| (runs of equal real part by |imaginary|).
 */
export function cplxreal(values: readonly Complex[]): { complex: Complex[]; real: number[] } {
  if (values.length === 0) return { complex: [], real: [] };
  const z = sortedBy(values, (a, b) => a.re - b.re || Math.abs(a.im) - Math.abs(b.im));
  const isRealValue = (v: Complex): boolean => Math.abs(v.im) <= TOL * cabs(v);
  const real = z.filter(isRealValue).map((v) => v.re);
  if (real.length === z.length) return { complex: [], real };
  const rest = z.filter((v) => !isRealValue(v));
  const upper = rest.filter((v) => v.im > 0);
  const lower = rest.filter((v) => v.im < 0);
  if (upper.length !== lower.length)
    throw new FilterCoefficientError('zeros or poles hold a complex value without its conjugate');
  // Within each run of (nearly) equal real parts, order by |imaginary part| on both halves.
  let start = 0;
  for (let i = 1; i <= upper.length; i++) {
    const sameRun = i < upper.length && upper[i]!.re - upper[i - 1]!.re <= TOL * cabs(upper[i - 1]!);
    if (sameRun) continue;
    if (i - start > 1) {
      const byImag = (a: Complex, b: Complex): number => Math.abs(a.im) - Math.abs(b.im);
      upper.splice(start, i - start, ...sortedBy(upper.slice(start, i), byImag));
      lower.splice(start, i - start, ...sortedBy(lower.slice(start, i), byImag));
    }
    start = i;
  }
  for (let i = 0; i < upper.length; i++)
    if (cabs(csub(upper[i]!, cconj(lower[i]!))) > TOL * cabs(lower[i]!))
      throw new FilterCoefficientError('zeros or poles hold a complex value without its conjugate');
  const complex = upper.map((u, i) => cx((u.re + lower[i]!.re) / 2, (u.im - lower[i]!.im) / 2));
  return { complex, real };
}

/** [1, −(r1 + r2), r1·r2] of two roots (numpy's poly, real when they are a conjugate pair or both real). */
function quadratic(roots: readonly Complex[]): number[] {
  let c: Complex[] = [cx(1)];
  for (const r of roots) {
    const next: Complex[] = [...c, cx(0)];
    for (let i = 0; i < c.length; i++) next[i + 1] = csub(next[i + 1]!, cmul(c[i]!, r));
    c = next;
  }
  return c.map((v) => v.re);
}

/** One section from up to two zeros and two poles (scipy's _single_zpksos: right-aligned b and a). */
function singleSection(z: readonly Complex[], p: readonly Complex[]): number[] {
  const row = [0, 0, 0, 0, 0, 0];
  const b = quadratic(z);
  const a = quadratic(p);
  b.forEach((v, i) => (row[3 - b.length + i] = v));
  a.forEach((v, i) => (row[6 - a.length + i] = v));
  return row;
}

/** Index of the element of `from` nearest `to`, among the real ones, the complex ones, or any (first on ties). */
function nearest(from: readonly Complex[], to: Complex, which: 'real' | 'complex' | 'any'): number {
  let best = -1;
  let bestDistance = Infinity;
  from.forEach((v, i) => {
    if (which === 'real' && !isReal(v)) return;
    if (which === 'complex' && isReal(v)) return;
    const d = cabs(csub(v, to));
    if (d < bestDistance) {
      best = i;
      bestDistance = d;
    }
  });
  return best;
}

/** Index of the pole closest to the unit circle (first on ties, as numpy's argmin). */
function worst(p: readonly Complex[], indices: readonly number[]): number {
  let best = indices[0]!;
  for (const i of indices) if (distanceToUnitCircle(p[i]!) < distanceToUnitCircle(p[best]!)) best = i;
  return best;
}

/** Removes and returns p[i]. */
const take = (values: Complex[], i: number): Complex => values.splice(i, 1)[0]!;
const realCount = (values: readonly Complex[]): number => values.filter(isReal).length;

/** scipy.signal.zpk2sos(z, p, k) for a digital filter (pairing 'nearest'): rows [b0, b1, b2, 1, a1, a2], gain in the first. */
export function zpk2sos(f: Zpk): number[][] {
  if (f.z.length === 0 && f.p.length === 0) return [[f.k, 0, 0, 1, 0, 0]];
  let z = [...f.z, ...Array.from({ length: Math.max(f.p.length - f.z.length, 0) }, () => cx(0))];
  let p = [...f.p, ...Array.from({ length: Math.max(f.z.length - f.p.length, 0) }, () => cx(0))];
  const sections = Math.floor((Math.max(p.length, z.length) + 1) / 2);
  if (p.length % 2 === 1) {
    p.push(cx(0));
    z.push(cx(0));
  }
  const split = (v: Complex[]): Complex[] => {
    const s = cplxreal(v);
    return [...s.complex, ...s.real.map((r) => cx(r))];
  };
  z = split(z);
  p = split(p);
  const sos: number[][] = Array.from({ length: sections }, () => [0, 0, 0, 0, 0, 0]);
  // Built from the last section back, so the poles nearest the unit circle end up last.
  for (let si = sections - 1; si >= 0; si--) {
    const p1 = take(
      p,
      worst(
        p,
        p.map((_, i) => i),
      ),
    );
    if (isReal(p1) && realCount(p) === 0) {
      // The last real pole: a first-order section with the nearest real zero (and 0, 0 for the order).
      const z1 = take(z, nearest(z, p1, 'real'));
      sos[si] = singleSection([z1, cx(0)], [p1, cx(0)]);
    } else if (p.length + 1 === z.length && !isReal(p1) && realCount(p) === 1 && realCount(z) === 1) {
      // One real pole and one real zero remain for later: this complex pole must take a complex zero.
      const z1 = take(z, nearest(z, p1, 'complex'));
      sos[si] = singleSection([z1, cconj(z1)], [p1, cconj(p1)]);
    } else {
      let p2: Complex;
      if (isReal(p1)) {
        const realIndices = p.flatMap((v, i) => (isReal(v) ? [i] : []));
        p2 = take(p, worst(p, realIndices));
      } else p2 = cconj(p1);
      if (z.length > 0) {
        const z1 = take(z, nearest(z, p1, 'any'));
        if (!isReal(z1)) sos[si] = singleSection([z1, cconj(z1)], [p1, p2]);
        else if (z.length > 0) {
          const z2 = take(z, nearest(z, p1, 'real'));
          sos[si] = singleSection([z1, z2], [p1, p2]);
        } else sos[si] = singleSection([z1], [p1, p2]);
      } else sos[si] = singleSection([], [p1, p2]);
    }
  }
  for (let i = 0; i < 3; i++) sos[0]![i]! *= f.k;
  return sos;
}
