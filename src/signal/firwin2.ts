/**
 * FIR design by frequency sampling on the CPU: scipy.signal.firwin2 with its defaults (nfreqs the
 * next power of 2 above numtaps, plus 1; hamming window; fs 2). The desired gain is interpolated
 * linearly on a uniform grid, given the phase of a linear-phase filter, transformed back by an
 * inverse real DFT (float64, only the numtaps samples kept are computed) and windowed. Pure.
 */
import { shownValue } from '../runtime/value-checks.js';
import { FilterDesignError } from './filter-errors.js';
import { MAX_TAPS } from './firwin.js';
import { getWindow, type WindowSpec } from './window.js';

/** Options of firwin2 (scipy's keyword arguments). */
export interface Firwin2Options {
  /** Points of the interpolation grid from 0 to fs/2; default 1 + 2^ceil(log2 numtaps); more than numtaps. */
  nfreqs?: number | undefined;
  /** Window (getWindow's specs, symmetric), or null for none; default 'hamming'. */
  window?: WindowSpec | null | undefined;
  /** An antisymmetric filter (types III and IV) instead of a symmetric one (default false). */
  antisymmetric?: boolean | undefined;
  /** Sample rate; freq runs from 0 to fs/2. Default 2. */
  fs?: number | undefined;
}

/** The most numtaps × nfreqs terms of firwin2's inverse DFT (its work and time bound: under a second). */
export const MAX_FIRWIN2_TERMS = 2 ** 28;

/** numpy.interp(x, xp, fp) for increasing xp: linear between the points, the end values beyond them. */
function interpolate(x: number, xp: readonly number[], fp: readonly number[]): number {
  if (x <= xp[0]!) return fp[0]!;
  const last = xp.length - 1;
  if (x >= xp[last]!) return fp[last]!;
  let lo = 0;
  let hi = last;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (xp[mid]! <= x) lo = mid;
    else hi = mid;
  }
  return ((fp[lo + 1]! - fp[lo]!) / (xp[lo + 1]! - xp[lo]!)) * (x - xp[lo]!) + fp[lo]!;
}

function numbers(values: readonly number[] | ArrayLike<number>, what: string): number[] {
  if (values === null || typeof values !== 'object' || typeof values.length !== 'number')
    throw new FilterDesignError(`firwin2: ${what} must be an array of numbers, got ${shownValue(values)}`);
  const out = Array.from(values as ArrayLike<number>);
  out.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new FilterDesignError(`firwin2: ${what}[${i}] must be a finite number, got ${shownValue(v)}`);
  });
  return out;
}

/**
 * scipy.signal.firwin2(numtaps, freq, gain, nfreqs, window, antisymmetric, fs): a linear-phase FIR
 * of `numtaps` taps whose gain at the frequencies `freq` (from 0 to fs/2, non-decreasing, a value
 * repeated at most twice for a step) is `gain`.
 */
export function firwin2(
  numtaps: number,
  freq: ArrayLike<number>,
  gain: ArrayLike<number>,
  options: Firwin2Options = {},
): Float64Array {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`firwin2: options must be an object, got ${shownValue(options)}`);
  if (!Number.isSafeInteger(numtaps) || numtaps < 1 || numtaps > MAX_TAPS)
    throw new FilterDesignError(`firwin2: numtaps must be an integer in [1, ${MAX_TAPS}], got ${shownValue(numtaps)}`);
  const fs = options.fs ?? 2;
  if (typeof fs !== 'number' || !Number.isFinite(fs) || fs <= 0)
    throw new FilterDesignError(`firwin2: fs must be a positive finite number, got ${shownValue(fs)}`);
  const nyq = 0.5 * fs;
  const f = numbers(freq, 'freq');
  const g = numbers(gain, 'gain');
  if (f.length !== g.length)
    throw new FilterDesignError(`firwin2: freq and gain must be of same length (${f.length} and ${g.length})`);
  if (f.length < 2) throw new FilterDesignError('firwin2: freq must hold at least 0 and fs/2');
  const nfreqs = options.nfreqs ?? 1 + 2 ** Math.ceil(Math.log2(numtaps));
  if (!Number.isSafeInteger(nfreqs) || nfreqs < 2)
    throw new FilterDesignError(`firwin2: nfreqs must be an integer of at least 2, got ${shownValue(nfreqs)}`);
  if (numtaps >= nfreqs)
    throw new FilterDesignError(
      `firwin2: ntaps must be less than nfreqs, but firwin2 was called with ntaps=${numtaps} and nfreqs=${nfreqs}`,
    );
  if (numtaps * nfreqs > MAX_FIRWIN2_TERMS)
    throw new FilterDesignError(`firwin2: numtaps × nfreqs (${numtaps * nfreqs}) is more than ${MAX_FIRWIN2_TERMS}`);
  if (f[0] !== 0 || f[f.length - 1] !== nyq)
    throw new FilterDesignError(`firwin2: freq must start with 0 and end with fs/2 (${nyq})`);
  for (let k = 1; k < f.length; k++)
    if (f[k]! < f[k - 1]!) throw new FilterDesignError('firwin2: the values in freq must be nondecreasing');
  for (let k = 2; k < f.length; k++)
    if (f[k] === f[k - 2]) throw new FilterDesignError('firwin2: a value in freq must not occur more than twice');
  if (f[1] === 0) throw new FilterDesignError('firwin2: value 0 must not be repeated in freq');
  if (f[f.length - 2] === nyq) throw new FilterDesignError('firwin2: value fs/2 must not be repeated in freq');
  const antisymmetric = options.antisymmetric ?? false;
  if (typeof antisymmetric !== 'boolean')
    throw new FilterDesignError(`firwin2: antisymmetric must be a boolean, got ${shownValue(antisymmetric)}`);
  const ftype = antisymmetric ? (numtaps % 2 === 0 ? 4 : 3) : numtaps % 2 === 0 ? 2 : 1;
  const [g0, gEnd] = [g[0]!, g[g.length - 1]!];
  if (ftype === 2 && gEnd !== 0)
    throw new FilterDesignError('firwin2: a Type II filter must have zero gain at the Nyquist frequency');
  if (ftype === 3 && (g0 !== 0 || gEnd !== 0))
    throw new FilterDesignError('firwin2: a Type III filter must have zero gain at zero and Nyquist frequencies');
  if (ftype === 4 && g0 !== 0)
    throw new FilterDesignError('firwin2: a Type IV filter must have zero gain at zero frequency');
  // A repeated frequency (a step) is moved apart by eps·nyq on each side so interpolation sees two points.
  const eps = 2 ** -52 * nyq;
  for (let k = 0; k < f.length - 1; k++)
    if (f[k] === f[k + 1]) {
      f[k] = f[k]! - eps;
      f[k + 1] = f[k + 1]! + eps;
    }
  for (let k = 1; k < f.length; k++)
    if (f[k]! <= f[k - 1]!)
      throw new FilterDesignError(
        `firwin2: freq cannot contain numbers that are too close (within eps * (fs/2): ${eps}) to a repeated value`,
      );
  // fx2[k] = interp(x_k)·e^{−iπ(numtaps−1)/2·x_k/nyq} (times i for types III, IV) on x_k = k·nyq/(nfreqs − 1).
  const step = nyq / (nfreqs - 1);
  const re = new Float64Array(nfreqs);
  const im = new Float64Array(nfreqs);
  for (let k = 0; k < nfreqs; k++) {
    const x = k === nfreqs - 1 ? nyq : k * step;
    const a = interpolate(x, f, g);
    const phase = (-(numtaps - 1) / 2) * Math.PI * (x / nyq);
    const [c, s] = [Math.cos(phase), Math.sin(phase)];
    [re[k], im[k]] = ftype > 2 ? [-a * s, a * c] : [a * c, a * s];
  }
  // numpy's irfft of nfreqs bins (m = 2(nfreqs − 1) points), its first numtaps samples:
  // out[t] = (re0 + re_{m/2}·(−1)^t + 2 Σ_{0<k<m/2} (re_k cos − im_k sin)(2πkt/m)) / m.
  const m = 2 * (nfreqs - 1);
  const cos = Float64Array.from({ length: m }, (_, j) => Math.cos((2 * Math.PI * j) / m));
  const sin = Float64Array.from({ length: m }, (_, j) => Math.sin((2 * Math.PI * j) / m));
  const window = options.window === null ? undefined : getWindow(options.window ?? 'hamming', numtaps, { sym: true });
  const out = new Float64Array(numtaps);
  for (let t = 0; t < numtaps; t++) {
    let acc = re[0]! + (t % 2 === 0 ? re[nfreqs - 1]! : -re[nfreqs - 1]!);
    for (let k = 1, j = t; k < nfreqs - 1; k++, j = (j + t) % m) acc += 2 * (re[k]! * cos[j]! - im[k]! * sin[j]!);
    out[t] = (acc / m) * (window ? window[t]! : 1);
  }
  if (ftype === 3) out[Math.floor(numtaps / 2)] = 0;
  return out;
}
