/**
 * The errors the filter design and filtering functions throw before any GPU work, one class per
 * kind of mistake so that a caller (or the server's error mapping) can tell them apart.
 */

/** A design parameter is out of range: order, critical frequencies against fs/2, ripple, attenuation, band type, tap count. */
export class FilterDesignError extends RangeError {
  override name = 'FilterDesignError';
}

/**
 * Filter coefficients that cannot be used: the wrong shape, empty taps, a non-finite value, a
 * section whose a0 is not 1, or a section with a pole at z = 1 where a steady state is needed
 * (sosfilt_zi, sosfiltfilt: scipy's linear solve is singular there).
 */
export class FilterCoefficientError extends RangeError {
  override name = 'FilterCoefficientError';
}

/** A signal the operation cannot filter: empty, or not longer than the padding filtfilt/sosfiltfilt extend it by. */
export class SignalLengthError extends RangeError {
  override name = 'SignalLengthError';
}
