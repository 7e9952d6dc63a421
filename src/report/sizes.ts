/**
 * The bounds of the pictures the renderers draw, and the one check of a size option. Here, not
 * in runtime/value-checks.ts: report/ is the bottom layer and imports nothing (tools/layers.ts).
 * A size beyond these is a mistake, not a picture: a 60000 x 60000 spectrogram allocated 14 GB
 * before failing, a timeline 10^7 pixels wide built a 26 MB string, and an infinite width looped.
 */

/** Widest chart (timeline, band chart) in pixels. */
export const MAX_CHART_WIDTH = 100_000;

/** Longest side of a spectrogram picture or figure in pixels (16384 x 16384 RGBA is already 1 GiB). */
export const MAX_IMAGE_SIDE = 16_384;

/**
 * `value` when it is a finite number in (0, max] (an integer when `integer`); else throws
 * `error` (the module's input error, or RangeError) with a message naming `what` and the bound.
 */
export function checkPixels(
  value: unknown,
  what: string,
  max: number,
  integer: boolean,
  error: new (message: string) => Error = RangeError,
): number {
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value > 0 &&
    value <= max &&
    (!integer || Number.isInteger(value));
  if (!ok) {
    // Numbers as they print; anything else by its type (report/ cannot import runtime's shownValue).
    const shown = typeof value === 'number' ? String(value) : value === null ? 'null' : typeof value;
    throw new error(
      `${what} must be ${integer ? 'an integer from 1' : 'a number above 0'} to ${max} pixels, got ${shown}`,
    );
  }
  return value;
}
