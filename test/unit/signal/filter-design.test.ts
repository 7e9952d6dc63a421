/**
 * Filter design on the CPU against references that do not come from the implementation: scipy's
 * documented examples (firwin, zpk2sos), closed forms derived by hand in float64 (the second-order
 * Butterworth biquad through the bilinear transform), and the classic magnitude responses of the
 * Butterworth and Chebyshev families after a bilinear transform (|H|² as a function of
 * tan(ω/2)), evaluated on the designed sections. Bad input: the named errors.
 */
import { describe, expect, it } from 'vitest';
import {
  butter,
  cheby1,
  cheby2,
  checkSos,
  checkTaps,
  FilterCoefficientError,
  FilterDesignError,
  firwin,
  sosfiltfiltPadlen,
  sosfiltZi,
  zpk2sos,
  type Sos,
} from '../../../src/signal/index.js';

/** |H(e^{iω})| of a cascade of sections, evaluated directly from the rows. */
function sosMagnitude(sos: Sos, w: number): number {
  let mag = 1;
  for (const [b0, b1, b2, a0, a1, a2] of sos) {
    const num = Math.hypot(
      b0! + b1! * Math.cos(w) + b2! * Math.cos(2 * w),
      -(b1! * Math.sin(w) + b2! * Math.sin(2 * w)),
    );
    const den = Math.hypot(
      a0! + a1! * Math.cos(w) + a2! * Math.cos(2 * w),
      -(a1! * Math.sin(w) + a2! * Math.sin(2 * w)),
    );
    mag *= num / den;
  }
  return mag;
}

/** Chebyshev polynomial T_N(x) for any real x. */
function chebyshevT(n: number, x: number): number {
  const ax = Math.abs(x);
  const v = ax <= 1 ? Math.cos(n * Math.acos(ax)) : Math.cosh(n * Math.acosh(ax));
  return x < 0 && n % 2 === 1 ? -v : v;
}

type Band = 'lowpass' | 'highpass' | 'bandpass' | 'bandstop';

/** The prewarped low-pass prototype frequency Ω/Ωc that a digital frequency ω maps to for a band type (edges normalised to Nyquist = 1). */
function prototypeFrequency(btype: Band, wn: number[], w: number): number {
  const t = Math.tan(w / 2);
  const [t1, t2] = wn.map((v) => Math.tan((Math.PI * v) / 2)) as [number, number];
  if (btype === 'lowpass') return t / t1;
  if (btype === 'highpass') return t1 / t;
  const r = (t * t - t1 * t2) / (t * (t2 - t1));
  return btype === 'bandpass' ? r : 1 / r;
}

/** The magnitude each family has at prototype frequency r (the textbook formulas, not scipy's code). */
const FAMILY = {
  butter: (n: number, r: number) => 1 / Math.sqrt(1 + r ** (2 * n)),
  cheby1: (n: number, r: number, rp: number) => 1 / Math.sqrt(1 + (10 ** (rp / 10) - 1) * chebyshevT(n, r) ** 2),
  cheby2: (n: number, r: number, rs: number) => {
    const t = chebyshevT(n, 1 / r) ** 2;
    return Math.sqrt(t / (t + 10 ** (rs / 10) - 1));
  },
};

const GRID = Array.from({ length: 97 }, (_, i) => (Math.PI * (i + 0.5)) / 97);

describe('filter design vs scipy examples and closed forms', { timeout: 5_000 }, () => {
  it('firwin reproduces scipy’s documented examples (hamming default, nuttall, high-pass, band-pass, band-stop, multi-band)', () => {
    const close = (a: Float64Array, b: number[]) => b.forEach((v, i) => expect(a[i]).toBeCloseTo(v, 8));
    close(firwin(3, 0.1), [0.06799017, 0.86401967, 0.06799017]);
    close(firwin(3, 0.1, { window: 'nuttall' }), [3.56607041e-4, 9.99286786e-1, 3.56607041e-4]);
    close(firwin(3, 0.1, { passZero: false }), [-0.00859313, 0.98281375, -0.00859313]);
    close(firwin(3, [0.1, 0.2], { passZero: false }), [0.06301614, 0.88770441, 0.06301614]);
    close(firwin(3, [0.1, 0.2]), [-0.00801395, 1.0160279, -0.00801395]);
    close(firwin(3, [0.1, 0.2, 0.3, 0.4]), [-0.01376344, 1.02752689, -0.01376344]);
    close(firwin(3, [0.1, 0.2, 0.3, 0.4], { passZero: false }), [0.04890915, 0.91284326, 0.04890915]);
    // fs: the same filter in Hz.
    close(firwin(3, 50, { fs: 1000 }), Array.from(firwin(3, 0.1)));
  });

  it('firwin’s scale makes the response exactly 1 at DC (low-pass) and at Nyquist (high-pass)', () => {
    const lp = firwin(31, 0.3);
    expect(lp.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 14);
    const hp = firwin(31, 0.3, { passZero: 'highpass' });
    expect(hp.reduce((s, v, i) => s + v * Math.cos(Math.PI * (i - 15)), 0)).toBeCloseTo(1, 14);
    const kaiser = firwin(41, 0.25, { width: 0.1 });
    expect(kaiser.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 14);
    expect(Math.abs(kaiser[10]! / firwin(41, 0.25)[10]! - 1)).toBeGreaterThan(1e-3); // a Kaiser window, not the hamming default
  });

  it('zpk2sos pairs as scipy’s documented example (pairing nearest)', () => {
    const c = (re: number, im = 0) => ({ re, im });
    const sos = zpk2sos({ z: [c(-1), c(-0.5, -0.5), c(-0.5, 0.5)], p: [c(0.75), c(0.8, 0.1), c(0.8, -0.1)], k: 1 });
    const expected = [
      [1, 1, 0.5, 1, -0.75, 0],
      [1, 1, 0, 1, -1.6, 0.65],
    ];
    sos.forEach((row, i) => row.forEach((v, j) => expect(v).toBeCloseTo(expected[i]![j]!, 14)));
  });

  it('butter(2, Wn) equals the bilinear Butterworth biquad derived by hand', () => {
    for (const wn of [0.5, 0.1, 0.73]) {
      const k = Math.tan((Math.PI * wn) / 2);
      const d = 1 + Math.SQRT2 * k + k * k;
      const expected = [
        (k * k) / d,
        (2 * k * k) / d,
        (k * k) / d,
        1,
        (2 * (k * k - 1)) / d,
        (1 - Math.SQRT2 * k + k * k) / d,
      ];
      const [row] = butter(2, wn);
      row!.forEach((v, j) => expect(v).toBeCloseTo(expected[j]!, 14));
    }
  });

  const designs: { name: keyof typeof FAMILY; n: number; wn: number[]; btype: Band; param: number; fs?: number }[] = [];
  for (const btype of ['lowpass', 'highpass', 'bandpass', 'bandstop'] as const)
    for (const n of [1, 4, 7]) {
      const wn = btype.startsWith('band') ? [0.2, 0.45] : [0.3];
      designs.push(
        { name: 'butter', n, wn, btype, param: 0 },
        { name: 'cheby1', n, wn, btype, param: 0.5 },
        { name: 'cheby2', n, wn, btype, param: 40 },
      );
    }

  it.each(designs)(
    '$name N=$n $btype: |H| follows the family’s closed form, poles inside the unit circle',
    ({ name, n, wn, btype, param }) => {
      const fs = 500;
      const inHz = wn.map((v) => (v * fs) / 2);
      const o = { btype, fs };
      const arg = inHz.length === 1 ? inHz[0]! : ([inHz[0]!, inHz[1]!] as [number, number]);
      const sos =
        name === 'butter' ? butter(n, arg, o) : name === 'cheby1' ? cheby1(n, param, arg, o) : cheby2(n, param, arg, o);
      expect(sos.length).toBe(Math.ceil((btype.startsWith('band') ? 2 * n : n) / 2));
      for (const w of GRID) {
        const expected = FAMILY[name](n, Math.abs(prototypeFrequency(btype, wn, w)), param);
        expect(Math.abs(sosMagnitude(sos, w) - expected)).toBeLessThan(1e-9);
      }
      for (const [, , , , a1, a2] of sos) {
        // Both roots of z² + a1 z + a2 inside the unit circle (Jury: |a2| < 1, |a1| < 1 + a2).
        expect(Math.abs(a2!)).toBeLessThan(1);
        expect(Math.abs(a1!)).toBeLessThan(1 + a2!);
      }
    },
  );

  it('sosfiltZi starts each section in steady state: a constant input gives a constant output from the first sample', () => {
    for (const sos of [
      butter(4, 0.2),
      cheby1(5, 1, [0.1, 0.3], { btype: 'bandpass' }),
      cheby2(3, 30, 0.4, { btype: 'highpass' }),
    ]) {
      const zi = sosfiltZi(sos);
      let dcGain = 1;
      for (const [b0, b1, b2, , a1, a2] of sos) dcGain *= (b0! + b1! + b2!) / (1 + a1! + a2!);
      const z = zi.map((r) => [...r]);
      for (let t = 0; t < 5; t++) {
        let v = 1;
        sos.forEach(([b0, b1, b2, , a1, a2], s) => {
          const y = b0! * v + z[s]![0]!;
          z[s]![0] = b1! * v - a1! * y + z[s]![1]!;
          z[s]![1] = b2! * v - a2! * y;
          v = y;
        });
        expect(v).toBeCloseTo(dcGain, 12);
      }
    }
  });

  it('sosfiltfiltPadlen counts taps as scipy does (first-order sections lower it)', () => {
    expect(sosfiltfiltPadlen(butter(4, 0.2))).toBe(15); // 2 sections: 3 * 5
    expect(sosfiltfiltPadlen(butter(3, 0.2))).toBe(12); // a first-order section (b2 = a2 = 0): 3 * 4
  });

  it('refuses bad design parameters with FilterDesignError naming the problem', () => {
    expect(() => butter(4, 0)).toThrow(FilterDesignError);
    expect(() => butter(4, 1)).toThrow(/0 < Wn < 1/);
    expect(() => butter(4, 250, { fs: 500 })).toThrow(/fs\/2/);
    expect(() => butter(4, [0.3, 0.2], { btype: 'bandpass' })).toThrow(/Wn\[0\] must be less than Wn\[1\]/);
    expect(() => butter(4, 0.3, { btype: 'bandpass' })).toThrow(/needs Wn = \[low, high\]/);
    expect(() => butter(0, 0.3)).toThrow(/order N/);
    expect(() => butter(2.5, 0.3)).toThrow(FilterDesignError);
    expect(() => butter(4, Number.NaN)).toThrow(/finite/);
    expect(() => cheby1(4, 0, 0.3)).toThrow(/rp/);
    expect(() => cheby2(4, -3, 0.3)).toThrow(/rs/);
    expect(() => butter(4, 0.3, { btype: 'notch' as never })).toThrow(/btype/);
    expect(() => butter(4, 0.3, { output: 'ba' as never })).toThrow(/output must be 'sos'/);
    expect(() => firwin(0, 0.3)).toThrow(/numtaps/);
    expect(() => firwin(11, 1)).toThrow(/less than fs\/2/);
    expect(() => firwin(11, [0.3, 0.2])).toThrow(/strictly increasing/);
    expect(() => firwin(10, 0.3, { passZero: false })).toThrow(/even number of coefficients/);
  });

  it('refuses bad coefficients with FilterCoefficientError naming the problem', () => {
    expect(() => checkSos([], 'x')).toThrow(/empty/);
    expect(() => checkSos([[1, 0, 0, 1, 0]], 'x')).toThrow(/shape \(n_sections, 6\)/);
    expect(() => checkSos([[1, 0, Number.NaN, 1, 0, 0]], 'x')).toThrow(/sos\[0\]\[2\] must be a finite number/);
    expect(() => checkSos([[1, 0, 0, 2, 0, 0]], 'x')).toThrow(/should be all ones/);
    expect(() => sosfiltZi([[1, 0, 0, 1, -1, 0]])).toThrow(FilterCoefficientError); // a pole at z = 1
    expect(() => checkTaps([], 'x')).toThrow(/empty/);
    expect(() => checkTaps([1, Number.POSITIVE_INFINITY], 'x')).toThrow(/b\[1\]/);
  });
});
