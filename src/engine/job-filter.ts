/**
 * A job's `filter` checked and made ready for the lanes: second-order sections or FIR taps as
 * given, or a design (butter, cheby1, cheby2 with the job's fs) made on the CPU by the signal
 * layer's scipy-equivalent design code. Refusals name the field (`filter.sos[2][4]`,
 * `filter.cutoff`). Checked as scipy checks them (shape, sos[:, 3] all ones), and beyond scipy:
 * every value finite, every pole strictly inside the unit circle (an unstable filter's output
 * grows without bound, and no float32 or float64 holds it), at most MAX_SOS_SECTIONS sections
 * (the GPU kernel's state), at most MAX_JOB_TAPS taps and, with zeroPhase, series longer than scipy's padding. CUDA-free.
 */
import { fail, finite, show } from './field-checks.js';
import type { NormalizedFilter } from './normalized-job.js';
import type { FilterBandType, FilterDesign } from './types.js';
import {
  butter,
  cheby1,
  cheby2,
  MAX_IIR_ORDER,
  MAX_SOS_SECTIONS,
  sosfiltfiltPadlen,
  type Sos,
} from '../signal/filter-design.js';
import { FilterDesignError } from '../signal/filter-errors.js';

/** The band types a designed filter takes. */
export const FILTER_BAND_TYPES: readonly FilterBandType[] = ['lowpass', 'highpass', 'bandpass', 'bandstop'];
/** The designs a designed filter takes. */
export const FILTER_DESIGNS: readonly FilterDesign[] = ['butter', 'cheby1', 'cheby2'];
/** A designed filter's order when none is given. */
export const DEFAULT_FILTER_ORDER = 4;
/** cheby1's passband ripple (dB) when none is given. */
export const DEFAULT_RIPPLE_DB = 1;
/** cheby2's stopband attenuation (dB) when none is given. */
export const DEFAULT_ATTENUATION_DB = 40;
/**
 * The most FIR taps a job's filter takes. The lanes filter directly, one thread per output sample
 * reading every tap: the bound keeps a request's GPU time in proportion to its samples (longer
 * filters belong to `fftconvolve` of tscuda/signal).
 */
export const MAX_JOB_TAPS = 4096;

const FORMS = ['sos', 'taps', 'btype'] as const;
const KEYS: Readonly<Record<(typeof FORMS)[number], readonly string[]>> = {
  sos: ['sos', 'zeroPhase'],
  taps: ['taps', 'zeroPhase'],
  btype: ['btype', 'cutoff', 'order', 'design', 'rp', 'rs', 'zeroPhase'],
};

/**
 * The filter of a job over series of `length` samples at `fs` Hz, or undefined when it gives none;
 * throws JobValidationError naming the field at fault.
 */
export function normalizeFilter(given: unknown, fs: number, length: number): NormalizedFilter | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    return fail('filter', `must be an object: {sos}, {taps} or {btype, cutoff}, got ${show(given)}`);
  const spec = given as Record<string, unknown>;
  const forms = FORMS.filter((k) => spec[k] !== undefined);
  if (forms.length !== 1)
    fail(
      'filter',
      forms.length === 0
        ? 'needs one of sos (second-order sections), taps (FIR) or btype with cutoff (a design)'
        : `takes one of sos, taps and btype, got ${forms.join(' and ')}`,
    );
  const form = forms[0]!;
  for (const key of Object.keys(spec))
    if (!KEYS[form].includes(key))
      fail(`filter.${key}`, `unknown field of a ${form} filter (known: ${KEYS[form].join(', ')})`);
  const zeroPhase = spec.zeroPhase ?? false;
  if (typeof zeroPhase !== 'boolean') fail('filter.zeroPhase', `must be true or false, got ${show(zeroPhase)}`);
  const zero = zeroPhase as boolean;
  if (form === 'taps') {
    const taps = checkTaps(spec.taps);
    // filtfilt's default padding: 3 x the tap count (scipy's padlen for an FIR b with a = 1).
    if (zero && !(length > 3 * taps.length))
      fail('filter.zeroPhase', `series of ${length} samples must be longer than the padding, 3 x ${taps.length} taps`);
    return { kind: 'fir', taps, zeroPhase: zero };
  }
  const sos = form === 'sos' ? checkSections(spec.sos, 'filter.sos') : designed(spec, fs);
  if (zero) {
    const padlen = sosfiltfiltPadlen(sos);
    if (!(length > padlen))
      fail('filter.zeroPhase', `series of ${length} samples must be longer than sosfiltfilt's padding of ${padlen}`);
  }
  return { kind: 'sos', sos, zeroPhase: zero };
}

function checkTaps(taps: unknown): number[] {
  if (!Array.isArray(taps)) return fail('filter.taps', `must be an array of numbers, got ${show(taps)}`);
  if (taps.length === 0) fail('filter.taps', 'is empty: a FIR filter needs at least one tap');
  if (taps.length > MAX_JOB_TAPS)
    fail('filter.taps', `${taps.length} taps is more than the ${MAX_JOB_TAPS} a job filters directly`);
  return Array.from(taps as unknown[], (v, i) => finite(v, `filter.taps[${i}]`));
}

/** Second-order sections checked: shape n x 6, finite, a0 = 1, at most MAX_SOS_SECTIONS, every pole inside the unit circle. */
function checkSections(sos: unknown, field: string): Sos {
  if (!Array.isArray(sos)) return fail(field, `must be an array of sections [b0, b1, b2, 1, a1, a2], got ${show(sos)}`);
  if (sos.length === 0) fail(field, 'is empty: it must have at least one section [b0, b1, b2, 1, a1, a2]');
  if (sos.length > MAX_SOS_SECTIONS)
    fail(field, `${sos.length} sections is more than the ${MAX_SOS_SECTIONS} the GPU filter keeps state for`);
  return Array.from(sos as unknown[], (row, s) => {
    if (!Array.isArray(row) || row.length !== 6)
      fail(`${field}[${s}]`, `must be a section of 6 numbers [b0, b1, b2, 1, a1, a2], got ${show(row)}`);
    const values = (row as unknown[]).map((v, c) => finite(v, `${field}[${s}][${c}]`));
    if (values[3] !== 1)
      fail(`${field}[${s}][3]`, `a0 must be 1 (scipy: sos[:, 3] should be all ones), got ${values[3]}`);
    checkStable(values[4]!, values[5]!, `${field}[${s}]`);
    return values;
  });
}

/**
 * The poles of 1 + a1 z^-1 + a2 z^-2 lie strictly inside the unit circle exactly when |a2| < 1
 * and |a1| < 1 + a2 (the stability triangle of a second-order section).
 */
function checkStable(a1: number, a2: number, field: string): void {
  if (!(Math.abs(a2) < 1 && Math.abs(a1) < 1 + a2))
    fail(
      field,
      `has a pole on or outside the unit circle (a1 = ${a1}, a2 = ${a2}): the filter is unstable and its output grows without bound`,
    );
}

const designCache = new Map<string, Sos>();

/** The sections of a designed filter (scipy's butter/cheby1/cheby2 with output='sos' and the job's fs), cached by their parameters. */
function designed(s: Readonly<Record<string, unknown>>, fs: number): Sos {
  const btype = s.btype as FilterBandType;
  if (!FILTER_BAND_TYPES.includes(btype))
    fail('filter.btype', `must be one of ${FILTER_BAND_TYPES.join(', ')}, got ${show(s.btype)}`);
  const design = (s.design ?? 'butter') as FilterDesign;
  if (!FILTER_DESIGNS.includes(design))
    fail('filter.design', `must be one of ${FILTER_DESIGNS.join(', ')}, got ${show(s.design)}`);
  const banded = btype === 'bandpass' || btype === 'bandstop';
  const nyquist = fs / 2;
  const cutoff = checkCutoff(s.cutoff, banded, btype, nyquist);
  const order = s.order ?? DEFAULT_FILTER_ORDER;
  if (typeof order !== 'number' || !Number.isSafeInteger(order) || order < 1 || order > MAX_IIR_ORDER)
    fail('filter.order', `must be an integer in [1, ${MAX_IIR_ORDER}], got ${show(order)}`);
  const sections = banded ? (order as number) : Math.ceil((order as number) / 2);
  if (sections > MAX_SOS_SECTIONS)
    fail(
      'filter.order',
      `order ${String(order)} makes ${sections} sections, more than the ${MAX_SOS_SECTIONS} the GPU filter keeps state for`,
    );
  const rp = designDb(s.rp, 'rp', design === 'cheby1', DEFAULT_RIPPLE_DB, design);
  const rs = designDb(s.rs, 'rs', design === 'cheby2', DEFAULT_ATTENUATION_DB, design);
  const key = JSON.stringify([btype, cutoff, order, design, rp, rs, fs]);
  let sos = designCache.get(key);
  if (sos === undefined) {
    const options = { btype, fs };
    const n = order as number;
    try {
      sos =
        design === 'butter'
          ? butter(n, cutoff, options)
          : design === 'cheby1'
            ? cheby1(n, rp!, cutoff, options)
            : cheby2(n, rs!, cutoff, options);
    } catch (e) {
      // Every parameter is checked above; what the design itself refuses is named as the filter's.
      if (e instanceof FilterDesignError) fail('filter', e.message);
      throw e;
    }
    // A design in floating point can still put a pole at or past the circle (very high orders, edges near 0 or fs/2).
    for (const row of sos) checkStable(row[4]!, row[5]!, 'filter.order');
    if (designCache.size > 256) designCache.clear();
    designCache.set(key, sos);
  }
  return sos;
}

/** The cutoff in Hz: one frequency, or a [low, high] pair for bandpass/bandstop, strictly inside (0, fs/2). */
function checkCutoff(v: unknown, banded: boolean, btype: string, nyquist: number): number | [number, number] {
  const inside = (x: number, field: string): number => {
    if (!(x > 0 && x < nyquist)) fail(field, `${x} Hz is outside (0, fs/2 = ${nyquist} Hz)`);
    return x;
  };
  if (!banded) {
    if (typeof v !== 'number') return fail('filter.cutoff', `a ${btype} filter needs one cutoff in Hz, got ${show(v)}`);
    return inside(finite(v, 'filter.cutoff'), 'filter.cutoff');
  }
  if (!Array.isArray(v) || v.length !== 2)
    return fail('filter.cutoff', `a ${btype} filter needs a [low, high] pair in Hz, got ${show(v)}`);
  const low = inside(finite(v[0], 'filter.cutoff[0]'), 'filter.cutoff[0]');
  const high = inside(finite(v[1], 'filter.cutoff[1]'), 'filter.cutoff[1]');
  if (!(low < high)) fail('filter.cutoff', `low edge ${low} Hz must be below the high edge ${high} Hz`);
  return [low, high];
}

/** rp (cheby1) or rs (cheby2) in dB: positive and finite, given only to the design that takes it. */
function designDb(v: unknown, name: 'rp' | 'rs', used: boolean, fallback: number, design: string): number | undefined {
  if (!used) {
    if (v !== undefined)
      fail(
        `filter.${name}`,
        `is ${name === 'rp' ? "cheby1's passband ripple" : "cheby2's stopband attenuation"}; a ${design} design takes none`,
      );
    return undefined;
  }
  const value = v ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || !(value > 0))
    fail(`filter.${name}`, `must be a positive finite number of dB, got ${show(value)}`);
  return value as number;
}
