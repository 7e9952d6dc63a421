/**
 * A spectrogram as a PNG: time to the right, frequency upwards (the lowest bin on the bottom
 * row), power in decibels through a colormap (viridis by default), the top `dynamicRangeDb`
 * below the peak spread over the map. Encoded with pngjs, the maintained pure-JS PNG codec
 * (zlib from Node itself), so no native image library is needed. Pure: no CUDA.
 */
import { PNG } from 'pngjs';
import { colormapIndex, VIRIDIS, type Colormap } from './colormap.js';
import { checkPixels, MAX_IMAGE_SIDE } from './sizes.js';

/** What `spectrogramImage` draws. */
export interface SpectrogramInput {
  /** frequencies x frames values (scipy's Zxx layout, frequency-major), or frames x frequencies with `layout: 'frame-major'`. */
  values: ArrayLike<number>;
  /** Frequency bins (rows of the picture). */
  frequencies: number;
  /** Time frames (columns of the picture). */
  frames: number;
  layout?: 'frequency-major' | 'frame-major' | undefined;
  /** 'magnitude' (|Z|, 20 log10) or 'power' (|Z|^2, 10 log10); default 'magnitude'. */
  kind?: 'magnitude' | 'power' | undefined;
}

export interface SpectrogramImageOptions {
  /** Output size in pixels, integers up to MAX_IMAGE_SIDE; default: one pixel per frame and per bin, within [minSize, maxSize]. */
  width?: number | undefined;
  height?: number | undefined;
  /** Bounds of the default size (defaults 256 and 1600 pixels; integers up to MAX_IMAGE_SIDE, minSize <= maxSize). */
  minSize?: number | undefined;
  maxSize?: number | undefined;
  /** Decibels below the peak that still get a colour above the map's bottom (default 80). */
  dynamicRangeDb?: number | undefined;
  colormap?: Colormap | undefined;
}

/** An RGBA picture and the decibel range its colours span. */
export interface SpectrogramImage {
  width: number;
  height: number;
  /** width x height x 4 bytes, row after row from the top. */
  rgba: Uint8Array;
  /** The dB value mapped to the colormap's top (the peak) and bottom (peak - dynamic range). */
  peakDb: number;
  floorDb: number;
}

/** Thrown for inconsistent input: the message names the field. */
export class SpectrogramInputError extends Error {
  override readonly name = 'SpectrogramInputError';
}

function clampSize(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, n));
}

/**
 * Source index range [start, end) that output pixel `i` of `out` covers over `n` sources:
 * several sources when shrinking (the picture shows their maximum, so a narrow line survives
 * being shrunk), one repeated source when growing.
 */
function sourceRange(i: number, out: number, n: number): [number, number] {
  const start = Math.floor((i * n) / out);
  const end = Math.max(start + 1, Math.floor(((i + 1) * n) / out));
  return [start, Math.min(n, end)];
}

/** Throws TypeError naming `what` unless `values` is array-like (an object with a numeric length): null read as 'Cannot read properties of null'. */
export function checkValues(values: unknown, what: string): void {
  if (typeof values !== 'object' || values === null || typeof (values as { length?: unknown }).length !== 'number')
    throw new TypeError(
      `${what} must be an array or a typed array of numbers, got ${values === null ? 'null' : typeof values}`,
    );
}

/** Renders values to RGBA pixels. */
export function spectrogramImage(input: SpectrogramInput, options: SpectrogramImageOptions = {}): SpectrogramImage {
  if (typeof input !== 'object' || input === null)
    throw new TypeError(
      `spectrogramImage() input must be an object { values, frequencies, frames }, got ${input === null ? 'null' : typeof input}`,
    );
  if (typeof options !== 'object' || options === null)
    throw new TypeError(
      `spectrogramImage() options must be an object, got ${options === null ? 'null' : typeof options}`,
    );
  checkValues(input.values, 'spectrogramImage() values');
  const { frequencies: nf, frames: nt } = input;
  if (!(Number.isInteger(nf) && nf >= 1))
    throw new SpectrogramInputError(`frequencies must be a positive integer, got ${nf}`);
  if (!(Number.isInteger(nt) && nt >= 1))
    throw new SpectrogramInputError(`frames must be a positive integer, got ${nt}`);
  if (input.values.length !== nf * nt)
    throw new SpectrogramInputError(
      `values has ${input.values.length} entries, expected frequencies x frames = ${nf} x ${nt} = ${nf * nt}`,
    );
  const range = options.dynamicRangeDb ?? 80;
  // Infinity made the floor -Infinity and every level NaN.
  if (!(range > 0 && range < Infinity))
    throw new SpectrogramInputError(`dynamicRangeDb must be a finite number > 0, got ${range}`);
  // Checked before the pixels are allocated: 60000 x 60000 asked for 14 GB, an infinite width failed inside the typed array.
  const size = (value: number | undefined, fallback: number, what: string): number =>
    value === undefined
      ? fallback
      : checkPixels(value, `spectrogramImage() ${what}`, MAX_IMAGE_SIDE, true, SpectrogramInputError);
  const lo = size(options.minSize, 256, 'minSize');
  const hi = size(options.maxSize, 1600, 'maxSize');
  if (lo > hi) throw new SpectrogramInputError(`spectrogramImage() minSize (${lo}) must not exceed maxSize (${hi})`);
  const width = size(options.width, clampSize(nt, lo, hi), 'width');
  const height = size(options.height, clampSize(nf, lo, hi), 'height');

  const frameMajor = input.layout === 'frame-major';
  const factor = input.kind === 'power' ? 10 : 20;
  const tiny = input.kind === 'power' ? 1e-30 : 1e-15;
  const values = input.values;
  // |v| of frequency f, frame t; NaN and infinities count as nothing (the map's bottom).
  const at = (f: number, t: number): number => {
    const v = Math.abs(values[frameMajor ? t * nf + f : f * nt + t]!);
    return Number.isFinite(v) ? v : 0;
  };
  // The logarithm is monotone: pool the raw magnitudes, take the decibels once per pixel.
  let peakValue = 0;
  for (let f = 0; f < nf; f++) for (let t = 0; t < nt; t++) peakValue = Math.max(peakValue, at(f, t));
  // Silence (every value zero or missing) sits at the bottom of the map, not at its top.
  const silent = !(peakValue > tiny);
  const peak = silent ? 0 : factor * Math.log10(peakValue);
  const floor = peak - range;

  const rgba = new Uint8Array(width * height * 4);
  const map = (options.colormap ?? VIRIDIS).table;
  const columns = Array.from({ length: width }, (_, x) => sourceRange(x, width, nt));
  for (let y = 0; y < height; y++) {
    // The top row shows the highest frequencies.
    const [f0, f1] = sourceRange(height - 1 - y, height, nf);
    for (let x = 0; x < width; x++) {
      const [t0, t1] = columns[x]!;
      let best = 0;
      for (let f = f0; f < f1; f++) for (let t = t0; t < t1; t++) best = Math.max(best, at(f, t));
      const level = silent ? 0 : (factor * Math.log10(Math.max(best, tiny)) - floor) / range;
      const c = 3 * colormapIndex(level);
      const p = 4 * (y * width + x);
      rgba[p] = map[c]!;
      rgba[p + 1] = map[c + 1]!;
      rgba[p + 2] = map[c + 2]!;
      rgba[p + 3] = 255;
    }
  }
  return { width, height, rgba, peakDb: peak, floorDb: floor };
}

/** PNG bytes of an RGBA picture. */
export function encodePng(image: { width: number; height: number; rgba: Uint8Array }): Buffer {
  const png = new PNG({ width: image.width, height: image.height, colorType: 6 });
  png.data.set(image.rgba);
  return PNG.sync.write(png, { colorType: 6 });
}

/** spectrogramImage then encodePng: the PNG bytes and the dB range they show. */
export function spectrogramPng(
  input: SpectrogramInput,
  options: SpectrogramImageOptions = {},
): { png: Buffer; width: number; height: number; peakDb: number; floorDb: number } {
  const image = spectrogramImage(input, options);
  return {
    png: encodePng(image),
    width: image.width,
    height: image.height,
    peakDb: image.peakDb,
    floorDb: image.floorDb,
  };
}
