/**
 * How filtfilt and sosfiltfilt extend a series before filtering it both ways (scipy's
 * _validate_pad): the pad type, its kernel code and the pad length, checked against the series
 * length. Pure: no CUDA.
 */
import { shownValue } from '../runtime/value-checks.js';
import { SignalLengthError } from './filter-errors.js';

/** scipy's padtype: odd (default) or even reflection about the end samples, the end samples held, or no padding. */
export type PadType = 'odd' | 'even' | 'constant' | null;

/** The kernels' codes for each pad type (src/kernels/filter.cu PAD_*). */
export const PADTYPE_CODES = { none: 0, odd: 1, even: 2, constant: 3 } as const;

/** The padding options filtfilt and sosfiltfilt share. */
export interface PadOptions {
  /** 'odd' (default), 'even', 'constant', or null for none. */
  padtype?: PadType | undefined;
  /** Samples added at each end; default 3 × the filter's tap count (scipy's rule per function). Ignored with padtype null. */
  padlen?: number | undefined;
}

/**
 * The extension `edge` (samples at each end) and its kernel code for a series of `length`
 * samples; SignalLengthError when the series is not longer than the pad (scipy raises there too).
 */
export function resolvePadding(
  length: number,
  options: PadOptions,
  defaultPadlen: number,
  what: string,
): { edge: number; code: number } {
  const padtype = options.padtype === undefined ? 'odd' : options.padtype;
  if (padtype !== null && padtype !== 'odd' && padtype !== 'even' && padtype !== 'constant')
    throw new TypeError(`${what}: padtype must be 'odd', 'even', 'constant' or null, got ${shownValue(padtype)}`);
  if (
    options.padlen !== undefined &&
    (typeof options.padlen !== 'number' || !Number.isSafeInteger(options.padlen) || options.padlen < 0)
  )
    throw new RangeError(`${what}: padlen must be a non-negative integer, got ${shownValue(options.padlen)}`);
  const edge = padtype === null ? 0 : (options.padlen ?? defaultPadlen);
  if (length <= edge)
    throw new SignalLengthError(
      `${what}: the length of the input vector x (${length}) must be greater than padlen, which is ${edge}`,
    );
  return { edge, code: padtype === null || edge === 0 ? PADTYPE_CODES.none : PADTYPE_CODES[padtype] };
}
