/**
 * The error a signal operation throws, before any GPU work, when it is handed complex input (c64,
 * c128, or interleaved I/Q) it cannot take: a class of its own so that a caller can tell "this
 * operation is real-only" from a wrong dtype.
 */

/** Complex input given to an operation that takes real series only (its message names the operation). */
export class ComplexInputError extends TypeError {
  override name = 'ComplexInputError';
}
