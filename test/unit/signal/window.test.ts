import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  besselI0,
  getWindow,
  logBesselI0,
  resolveWindow,
  UnknownWindowError,
  WindowParameterError,
  windowKey,
  windowSum,
  type WindowSpec,
} from '../../../src/signal/window.js';

/** Values printed by scipy 1.17 (scipy.signal.get_window); regenerate with the script in the test's history if scipy changes. */
const SCIPY = JSON.parse(readFileSync(join(import.meta.dirname, 'scipy-constants.json'), 'utf8')) as {
  windows: { spec: string | [string, number] | [string]; n: number; sym: boolean; w: number[] }[];
};

function specOf(s: string | [string, number] | [string]): WindowSpec {
  if (typeof s === 'string') return s;
  return s.length === 1 ? s[0] : [s[0], s[1]!];
}

describe('getWindow matches scipy.signal.get_window', () => {
  for (const c of SCIPY.windows) {
    it(`${JSON.stringify(c.spec)} n=${c.n} ${c.sym ? 'symmetric' : 'periodic'}`, () => {
      const w = getWindow(specOf(c.spec), c.n, { sym: c.sym });
      expect(w.length).toBe(c.w.length);
      for (let i = 0; i < c.n; i++)
        expect(Math.abs(w[i]! - c.w[i]!)).toBeLessThanOrEqual(1e-14 * Math.max(1, Math.abs(c.w[i]!)));
    });
  }
});

describe('getWindow formulas', () => {
  it('periodic hann is 0.5 - 0.5 cos(2πn/N) and sums to N/2', () => {
    for (const n of [16, 17, 1000]) {
      const w = getWindow('hann', n);
      for (let i = 0; i < n; i++) expect(w[i]).toBeCloseTo(0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n), 14);
      expect(windowSum('hann', n)).toBeCloseTo(n / 2, 10);
    }
  });

  it('symmetric windows are symmetric; periodic ones are the symmetric window of n+1 without its last point', () => {
    for (const spec of [
      'hamming',
      'blackman',
      'nuttall',
      'flattop',
      'bartlett',
      'triang',
      'cosine',
      ['tukey', 0.4],
      ['kaiser', 5],
      ['gaussian', 3],
    ] as WindowSpec[]) {
      for (const n of [9, 10]) {
        const s = getWindow(spec, n, { sym: true });
        for (let i = 0; i < n; i++) expect(s[i]).toBeCloseTo(s[n - 1 - i]!, 13);
        const p = getWindow(spec, n);
        const s1 = getWindow(spec, n + 1, { sym: true });
        for (let i = 0; i < n; i++) expect(p[i]).toBeCloseTo(s1[i]!, 14);
      }
    }
  });

  it('I0 matches known values', () => {
    expect(besselI0(0)).toBe(1);
    expect(besselI0(1)).toBeCloseTo(1.2660658777520082, 14);
    expect(besselI0(5) / 27.239871823604442).toBeCloseTo(1, 14);
    expect(besselI0(8.6) / 750.4611595631659).toBeCloseTo(1, 12);
  });

  it('tukey degenerates to boxcar (alpha <= 0) and hann (alpha >= 1); n <= 1 gives ones', () => {
    expect([...getWindow(['tukey', 0], 8)]).toEqual(new Array(8).fill(1));
    expect([...getWindow(['tukey', 1], 8)]).toEqual([...getWindow('hann', 8)]);
    expect([...getWindow('hann', 1)]).toEqual([1]);
    expect(getWindow('hann', 0).length).toBe(0);
  });

  it('aliases resolve; keys are canonical', () => {
    expect(resolveWindow('han').name).toBe('hann');
    expect(resolveWindow(['KSR', 3]).name).toBe('kaiser');
    expect(() => resolveWindow('ksr')).toThrow(WindowParameterError);
    expect(windowKey(['kaiser', 8])).toBe('kaiser(8)');
    expect(windowKey('tukey')).toBe('tukey(0.5)');
  });

  it('names bad specs', () => {
    expect(() => getWindow('hanning-ish', 8)).toThrow(UnknownWindowError);
    expect(() => getWindow('hanning-ish', 8)).toThrow(/hanning-ish/);
    expect(() => getWindow('kaiser', 8)).toThrow(/beta/);
    expect(() => getWindow('gaussian', 8)).toThrow(/std/);
    expect(() => getWindow(['gaussian', 0], 8)).toThrow(WindowParameterError);
    expect(() => getWindow(['hann', 3], 8)).toThrow(/takes no parameter/);
    expect(() => getWindow(['kaiser', Number.NaN], 8)).toThrow(/finite/);
    expect(() => getWindow('hann', -1)).toThrow(RangeError);
    expect(() => getWindow('hann', 2.5)).toThrow(RangeError);
  });
});

describe('kaiser with a large beta (I0 overflows a double past ~713)', () => {
  it('stays finite and matches scipy computed through i0e (no overflow there) at beta 1000', () => {
    // scipy.special.i0e(x) * exp(x - beta) / i0e(beta), x = beta * sqrt(1 - ((n - 4) / 4)^2), n = 0..8.
    const reference = [0, 1.1327e-147, 7.0277e-59, 1.6457e-14, 1, 1.6457e-14, 7.0277e-59, 1.1327e-147, 0];
    const w = getWindow(['kaiser', 1000], 9, { sym: true });
    for (let i = 0; i < 9; i++)
      expect(Math.abs(w[i]! - reference[i]!)).toBeLessThanOrEqual(1e-4 * reference[i]! + 1e-300);
  });

  it('is continuous across the switch to logarithms, and a centre of 1 with zeros about it at beta 1e308', () => {
    const below = getWindow(['kaiser', 699.999999], 33, { sym: true });
    const above = getWindow(['kaiser', 700], 33, { sym: true });
    for (let i = 0; i < 33; i++) expect(Math.abs(above[i]! - below[i]!)).toBeLessThanOrEqual(1e-6 * below[i]! + 1e-300);
    const huge = getWindow(['kaiser', 1e308], 9, { sym: true });
    expect(Array.from(huge)).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 0]);
    expect(logBesselI0(0)).toBe(0);
    expect(logBesselI0(710)).toBeCloseTo(Math.log(besselI0(710)), 9);
  });
});

describe('getWindow and windowSum options', () => {
  it('null options are a TypeError naming them', () => {
    expect(() => getWindow('hann', 8, null as never)).toThrow(
      'getWindow: options must be an object ({ sym }), got null',
    );
    expect(() => windowSum('hann', 8, null as never)).toThrow(/options must be an object/);
  });
});
