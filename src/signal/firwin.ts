/**
 * FIR design by the window method on the CPU: scipy.signal.firwin with its defaults (hamming
 * window, pass_zero true, scale true, fs 2), Kaiser windows from a transition width, and the
 * checks every consumer of taps shares (checkTaps). Pure: no CUDA.
 */
import { getWindow, type WindowSpec } from './window.js';
import { FilterCoefficientError, FilterDesignError } from './filter-errors.js';
import { shownValue } from '../runtime/value-checks.js';

/** The most taps designed or filtered with: bounds host memory and the direct kernel's work per sample. */
export const MAX_TAPS = 1 << 20;

/** Options of firwin (scipy's keyword arguments). */
export interface FirwinOptions {
  /** Transition width (units of fs): when given, a Kaiser window meeting it replaces `window`. */
  width?: number | undefined;
  /** Window (getWindow's specs), symmetric; default 'hamming'. */
  window?: WindowSpec | undefined;
  /** Gain 1 at DC (true, default) or 0 (false), or the band type by name. */
  passZero?: boolean | 'lowpass' | 'highpass' | 'bandpass' | 'bandstop' | undefined;
  /** Scale so the response is exactly 1 at the centre of the first passband (default true). */
  scale?: boolean | undefined;
  /** Sample rate; cutoffs lie in (0, fs/2). Default 2. */
  fs?: number | undefined;
}

/** scipy.signal.kaiser_atten: the attenuation (dB) of a Kaiser FIR of `numtaps` taps and transition `width` (normalised to Nyquist = 1). */
export function kaiserAtten(numtaps: number, width: number): number {
  return 2.285 * (numtaps - 1) * Math.PI * width + 7.95;
}

/** scipy.signal.kaiser_beta: the Kaiser window's beta for `a` dB of attenuation. */
export function kaiserBeta(a: number): number {
  if (a > 50) return 0.1102 * (a - 8.7);
  if (a > 21) return 0.5842 * (a - 21) ** 0.4 + 0.07886 * (a - 21);
  return 0;
}

/** sin(πx)/(πx), 1 at 0 (numpy's sinc). */
function sinc(x: number): number {
  if (x === 0) return 1;
  const y = Math.PI * x;
  return Math.sin(y) / y;
}

/**
 * scipy.signal.firwin(numtaps, cutoff, width, window, pass_zero, scale, fs): a linear-phase FIR
 * of `numtaps` taps whose passbands are delimited by `cutoff` (one frequency, or increasing band
 * edges), each in (0, fs/2).
 */
export function firwin(numtaps: number, cutoff: number | readonly number[], options: FirwinOptions = {}): Float64Array {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`firwin: options must be an object, got ${shownValue(options)}`);
  if (!Number.isSafeInteger(numtaps) || numtaps < 1 || numtaps > MAX_TAPS)
    throw new FilterDesignError(`firwin: numtaps must be an integer in [1, ${MAX_TAPS}], got ${shownValue(numtaps)}`);
  const fs = options.fs ?? 2;
  if (typeof fs !== 'number' || !Number.isFinite(fs) || fs <= 0)
    throw new FilterDesignError(`firwin: fs must be a positive finite number, got ${shownValue(fs)}`);
  const nyq = 0.5 * fs;
  const edges =
    typeof cutoff === 'number' ? [cutoff] : Array.isArray(cutoff) ? [...(cutoff as readonly number[])] : undefined;
  if (!edges || edges.some((v) => typeof v !== 'number' || !Number.isFinite(v)))
    throw new FilterDesignError(
      `firwin: cutoff must be a finite number or an array of them, got ${shownValue(cutoff)}`,
    );
  if (edges.length === 0) throw new FilterDesignError('firwin: at least one cutoff frequency must be given');
  const c = edges.map((v) => v / nyq);
  if (c.some((v) => v <= 0 || v >= 1))
    throw new FilterDesignError(
      `firwin: invalid cutoff frequency ${edges.join(', ')}: frequencies must be greater than 0 and less than fs/2 (${nyq})`,
    );
  for (let i = 1; i < c.length; i++)
    if (c[i]! <= c[i - 1]!)
      throw new FilterDesignError(`firwin: cutoff frequencies must be strictly increasing, got ${edges.join(', ')}`);
  let window: WindowSpec = options.window ?? 'hamming';
  if (options.width !== undefined) {
    if (typeof options.width !== 'number' || !Number.isFinite(options.width) || options.width <= 0)
      throw new FilterDesignError(`firwin: width must be a positive finite number, got ${shownValue(options.width)}`);
    window = ['kaiser', kaiserBeta(kaiserAtten(numtaps, options.width / nyq))];
  }
  const passZero = resolvePassZero(options.passZero ?? true, c.length);
  const passNyquist = (c.length % 2 === 1) !== passZero;
  if (passNyquist && numtaps % 2 === 0)
    throw new FilterDesignError(
      'firwin: a filter with an even number of coefficients must have zero response at the Nyquist frequency',
    );
  const bands = [...(passZero ? [0] : []), ...c, ...(passNyquist ? [1] : [])];
  const alpha = 0.5 * (numtaps - 1);
  const h = new Float64Array(numtaps);
  for (let i = 0; i < numtaps; i++) {
    const m = i - alpha;
    let v = 0;
    for (let b = 0; b < bands.length; b += 2) {
      v += bands[b + 1]! * sinc(bands[b + 1]! * m);
      v -= bands[b]! * sinc(bands[b]! * m);
    }
    h[i] = v;
  }
  const win = getWindow(window, numtaps, { sym: true });
  for (let i = 0; i < numtaps; i++) h[i]! *= win[i]!;
  if (options.scale ?? true) {
    const [left, right] = [bands[0]!, bands[1]!];
    const f = left === 0 ? 0 : right === 1 ? 1 : 0.5 * (left + right);
    let s = 0;
    for (let i = 0; i < numtaps; i++) s += h[i]! * Math.cos(Math.PI * (i - alpha) * f);
    for (let i = 0; i < numtaps; i++) h[i]! /= s;
  }
  return h;
}

/** pass_zero as a boolean, checking the named band types against the number of cutoffs as scipy does. */
function resolvePassZero(passZero: NonNullable<FirwinOptions['passZero']>, cutoffs: number): boolean {
  if (typeof passZero === 'boolean') return passZero;
  const single = passZero === 'lowpass' || passZero === 'highpass';
  if (passZero !== 'lowpass' && passZero !== 'highpass' && passZero !== 'bandpass' && passZero !== 'bandstop')
    throw new FilterDesignError(
      `firwin: passZero must be true, false, 'bandpass', 'lowpass', 'highpass' or 'bandstop', got ${shownValue(passZero)}`,
    );
  if (single && cutoffs !== 1)
    throw new FilterDesignError(`firwin: cutoff must have one element when passZero is '${passZero}', got ${cutoffs}`);
  if (!single && cutoffs < 2)
    throw new FilterDesignError(
      `firwin: cutoff must have at least two elements when passZero is '${passZero}', got ${cutoffs}`,
    );
  return passZero === 'lowpass' || passZero === 'bandstop';
}

/** Checks FIR taps (non-empty, at most MAX_TAPS, finite) and returns them as float64. */
export function checkTaps(taps: ArrayLike<number>, what: string): Float64Array {
  if (taps === null || typeof taps !== 'object' || typeof taps.length !== 'number')
    throw new FilterCoefficientError(`${what}: taps b must be an array of numbers, got ${shownValue(taps)}`);
  if (taps.length === 0) throw new FilterCoefficientError(`${what}: taps b are empty (zero-length filter)`);
  if (taps.length > MAX_TAPS) throw new FilterCoefficientError(`${what}: ${taps.length} taps is more than ${MAX_TAPS}`);
  const out = new Float64Array(taps.length);
  for (let i = 0; i < taps.length; i++) {
    const v = taps[i];
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new FilterCoefficientError(`${what}: b[${i}] must be a finite number, got ${shownValue(v)}`);
    out[i] = v;
  }
  return out;
}
