/**
 * IIR filter design on the CPU with scipy.signal's names and defaults: butter, cheby1 and cheby2
 * with `output: 'sos'` (low-pass, high-pass, band-pass, band-stop; `fs`), built as scipy's
 * iirfilter builds them (analog prototype -> frequency transformation -> bilinear transform ->
 * zpk2sos), so the sections match scipy 1.18 within rounding. Also the checks every SOS consumer
 * shares (checkSos) and sosfilt_zi. Pure: no CUDA.
 */
import { bilinearZpk, buttap, cheb1ap, cheb2ap, lp2bpZpk, lp2bsZpk, lp2hpZpk, lp2lpZpk, type Zpk } from './zpk.js';
import { zpk2sos } from './zpk2sos.js';
import { FilterCoefficientError, FilterDesignError } from './filter-errors.js';
import { shownValue } from '../runtime/value-checks.js';

/** Second-order sections as the design functions return them: rows [b0, b1, b2, a0 = 1, a1, a2]. */
export type Sos = number[][];
/** Second-order sections as the filtering functions take them (any nested array-likes of 6 numbers). */
export type SosInput = ArrayLike<ArrayLike<number>>;
/** The band types and scipy's spellings of them. */
export type BandType =
  | 'lowpass'
  | 'highpass'
  | 'bandpass'
  | 'bandstop'
  | 'low'
  | 'high'
  | 'lp'
  | 'hp'
  | 'l'
  | 'h'
  | 'band'
  | 'bp'
  | 'pass'
  | 'bs'
  | 'stop'
  | 'bands';
/** The critical frequency (low/high-pass) or the two band edges (band-pass/stop), in units of `fs`. */
export type CriticalFrequency = number | readonly [number, number];

const BAND_TYPES: Readonly<Record<BandType, 'lowpass' | 'highpass' | 'bandpass' | 'bandstop'>> = {
  lowpass: 'lowpass',
  low: 'lowpass',
  lp: 'lowpass',
  l: 'lowpass',
  highpass: 'highpass',
  high: 'highpass',
  hp: 'highpass',
  h: 'highpass',
  bandpass: 'bandpass',
  band: 'bandpass',
  bp: 'bandpass',
  pass: 'bandpass',
  bandstop: 'bandstop',
  bs: 'bandstop',
  stop: 'bandstop',
  bands: 'bandstop',
};

/** The most sections one filter may have: the GPU kernel keeps one thread's state for all of them (filter.cu MAX_SOS_SECTIONS). */
export const MAX_SOS_SECTIONS = 64;

/** The highest filter order designed: bounds the host memory and time of a design (scipy has no bound). */
export const MAX_IIR_ORDER = 1000;

/** Options of butter, cheby1 and cheby2. */
export interface IirDesignOptions {
  /** 'lowpass' (default), 'highpass', 'bandpass' or 'bandstop' (or scipy's short spellings). */
  btype?: BandType | undefined;
  /** Sample rate; Wn is then in the same units and must lie in (0, fs/2). Default 2 (Wn normalised to Nyquist = 1). */
  fs?: number | undefined;
  /** Only 'sos' (the default here): second-order sections. */
  output?: 'sos' | undefined;
}

/** Which analog prototype iirfilter starts from, with its ripple or attenuation. */
type Prototype = { kind: 'butter' } | { kind: 'cheby1'; rp: number } | { kind: 'cheby2'; rs: number };

function positiveFinite(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new FilterDesignError(`${what} must be a positive finite number, got ${shownValue(value)}`);
  return value;
}

/** scipy's iirfilter(..., output='sos') for a digital filter. */
function iirSos(
  what: string,
  order: number,
  wn: CriticalFrequency,
  prototype: Prototype,
  options: IirDesignOptions,
): Sos {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${what}: options must be an object, got ${shownValue(options)}`);
  if (!Number.isSafeInteger(order) || order < 1 || order > MAX_IIR_ORDER)
    throw new FilterDesignError(
      `${what}: order N must be an integer in [1, ${MAX_IIR_ORDER}], got ${shownValue(order)}`,
    );
  const output = options.output ?? 'sos';
  if (output !== 'sos')
    throw new FilterDesignError(`${what}: output must be 'sos' (second-order sections), got ${shownValue(output)}`);
  const btypeName = options.btype ?? 'lowpass';
  const btype = Object.hasOwn(BAND_TYPES, btypeName) ? BAND_TYPES[btypeName] : undefined;
  if (!btype)
    throw new FilterDesignError(
      `${what}: btype must be one of ${Object.keys(BAND_TYPES).join(', ')}, got ${shownValue(btypeName)}`,
    );
  const fs = options.fs === undefined ? undefined : positiveFinite(options.fs, `${what}: fs`);
  const edges = typeof wn === 'number' ? [wn] : Array.isArray(wn) ? [...(wn as readonly number[])] : undefined;
  if (!edges || edges.some((v) => typeof v !== 'number' || !Number.isFinite(v)))
    throw new FilterDesignError(`${what}: Wn must be a finite number or a pair of them, got ${shownValue(wn)}`);
  const banded = btype === 'bandpass' || btype === 'bandstop';
  if (banded && edges.length !== 2)
    throw new FilterDesignError(`${what}: a ${btype} filter needs Wn = [low, high], got ${edges.length} value(s)`);
  if (!banded && edges.length !== 1)
    throw new FilterDesignError(`${what}: a ${btype} filter needs one critical frequency Wn, got ${edges.length}`);
  const nyquist = fs === undefined ? 1 : fs / 2;
  const scaled = edges.map((v) => v / nyquist);
  if (scaled.some((v) => v <= 0 || v >= 1)) {
    const range = fs === undefined ? '0 < Wn < 1' : `0 < Wn < fs/2 (fs=${fs} -> fs/2=${fs / 2})`;
    throw new FilterDesignError(
      `${what}: digital filter critical frequencies must be ${range}, got ${edges.join(', ')}`,
    );
  }
  if (banded && !(scaled[0]! < scaled[1]!))
    throw new FilterDesignError(`${what}: Wn[0] must be less than Wn[1], got ${edges.join(', ')}`);
  let f: Zpk;
  if (prototype.kind === 'butter') f = buttap(order);
  else if (prototype.kind === 'cheby1')
    f = cheb1ap(order, positiveFinite(prototype.rp, `${what}: rp (passband ripple, dB)`));
  else f = cheb2ap(order, positiveFinite(prototype.rs, `${what}: rs (stopband attenuation, dB)`));
  // Pre-warp for the bilinear transform at fs = 2 (Wn is normalised to Nyquist = 1 by now).
  const warped = scaled.map((v) => 4 * Math.tan((Math.PI * v) / 2));
  if (btype === 'lowpass') f = lp2lpZpk(f, warped[0]!);
  else if (btype === 'highpass') f = lp2hpZpk(f, warped[0]!);
  else {
    const bw = warped[1]! - warped[0]!;
    const wo = Math.sqrt(warped[0]! * warped[1]!);
    f = btype === 'bandpass' ? lp2bpZpk(f, wo, bw) : lp2bsZpk(f, wo, bw);
  }
  return zpk2sos(bilinearZpk(f, 2));
}

/** scipy.signal.butter(N, Wn, btype, output='sos', fs): an Nth-order digital Butterworth filter as second-order sections. */
export function butter(N: number, Wn: CriticalFrequency, options: IirDesignOptions = {}): Sos {
  return iirSos('butter', N, Wn, { kind: 'butter' }, options);
}

/** scipy.signal.cheby1(N, rp, Wn, btype, output='sos', fs): Chebyshev type I with `rp` dB of passband ripple. */
export function cheby1(N: number, rp: number, Wn: CriticalFrequency, options: IirDesignOptions = {}): Sos {
  return iirSos('cheby1', N, Wn, { kind: 'cheby1', rp }, options);
}

/** scipy.signal.cheby2(N, rs, Wn, btype, output='sos', fs): Chebyshev type II with `rs` dB of stopband attenuation. */
export function cheby2(N: number, rs: number, Wn: CriticalFrequency, options: IirDesignOptions = {}): Sos {
  return iirSos('cheby2', N, Wn, { kind: 'cheby2', rs }, options);
}

/**
 * Checks second-order sections as scipy's _validate_sos does (n x 6, sos[:, 3] all ones) and that
 * every value is finite; returns them flat (row-major float64) with the section count.
 */
export function checkSos(sos: SosInput, what: string): { flat: Float64Array; sections: number } {
  if (sos === null || typeof sos !== 'object' || typeof sos.length !== 'number')
    throw new FilterCoefficientError(
      `${what}: sos must be an array of sections [b0, b1, b2, a0, a1, a2], got ${shownValue(sos)}`,
    );
  const sections = sos.length;
  if (sections === 0)
    throw new FilterCoefficientError(`${what}: sos is empty (it must have shape (n_sections, 6) with n_sections >= 1)`);
  const flat = new Float64Array(sections * 6);
  for (let s = 0; s < sections; s++) {
    const row = sos[s];
    if (row === null || typeof row !== 'object' || row.length !== 6)
      throw new FilterCoefficientError(
        `${what}: sos must have shape (n_sections, 6); row ${s} is ${shownValue(row)}${row && typeof row === 'object' ? ` of length ${String(row.length)}` : ''}`,
      );
    for (let c = 0; c < 6; c++) {
      const v = row[c];
      if (typeof v !== 'number' || !Number.isFinite(v))
        throw new FilterCoefficientError(`${what}: sos[${s}][${c}] must be a finite number, got ${shownValue(v)}`);
      flat[s * 6 + c] = v;
    }
    if (flat[s * 6 + 3] !== 1)
      throw new FilterCoefficientError(`${what}: sos[:, 3] should be all ones; sos[${s}][3] is ${flat[s * 6 + 3]}`);
  }
  return { flat, sections };
}

/**
 * scipy.signal.sosfilt_zi(sos): the initial state (n_sections x 2) that makes the step response
 * start in steady state. Multiply by the first sample to start a signal there. A section with a
 * pole at z = 1 (a1 + a2 = -1) has no steady state: FilterCoefficientError (scipy's solve is singular).
 */
export function sosfiltZi(sos: SosInput): Sos {
  const { flat, sections } = checkSos(sos, 'sosfilt_zi');
  const zi: Sos = [];
  let scale = 1;
  for (let s = 0; s < sections; s++) {
    const [b0, b1, b2, , a1, a2] = flat.subarray(s * 6, s * 6 + 6) as unknown as number[];
    const aSum = 1 + a1! + a2!;
    if (aSum === 0)
      throw new FilterCoefficientError(
        `sosfilt_zi: section ${s} has a pole at z = 1 (1 + a1 + a2 = 0): no steady state exists`,
      );
    // lfilter_zi for one section: (I - companion(a)^T) zi = b[1:] - a[1:] b0, solved in closed form.
    const r0 = b1! - a1! * b0!;
    const r1 = b2! - a2! * b0!;
    const z0 = (r0 + r1) / aSum;
    zi.push([scale * z0, scale * (r1 - a2! * z0)]);
    scale *= (b0! + b1! + b2!) / aSum;
  }
  return zi;
}

/** sosfiltfilt's default pad: 3 × (2·n_sections + 1 − min(#(b2 = 0), #(a2 = 0))), as scipy counts the taps. */
export function sosfiltfiltPadlen(sos: SosInput): number {
  const { flat, sections } = checkSos(sos, 'sosfiltfilt');
  let b2zero = 0;
  let a2zero = 0;
  for (let s = 0; s < sections; s++) {
    if (flat[s * 6 + 2] === 0) b2zero++;
    if (flat[s * 6 + 5] === 0) a2zero++;
  }
  return 3 * (2 * sections + 1 - Math.min(b2zero, a2zero));
}
