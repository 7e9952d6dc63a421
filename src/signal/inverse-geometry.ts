/**
 * The inverse STFT's geometry, mirroring scipy.signal.istft, check_COLA and check_NOLA (CUDA-free):
 * the frame length, FFT length and overlap an STFT is inverted with, the output length after the
 * boundary is removed, the gain on each inverse frame, and whether the window and overlap can be
 * inverted at all.
 */
import { positiveInteger } from '../runtime/value-checks.js';
import { checkFs, type StftScaling } from './geometry.js';
import { getWindow, type WindowSpec } from './window.js';

function binsums(window: Float64Array, nperseg: number, noverlap: number, square: boolean): Float64Array {
  const step = nperseg - noverlap;
  const sums = new Float64Array(step);
  for (let ii = 0; ii < Math.floor(nperseg / step); ii++)
    for (let j = 0; j < step; j++) {
      const v = window[ii * step + j]!;
      sums[j]! += square ? v * v : v;
    }
  const rem = nperseg % step;
  for (let j = 0; j < rem; j++) {
    const v = window[nperseg - rem + j]!;
    sums[j]! += square ? v * v : v;
  }
  return sums;
}

function windowArray(window: WindowSpec | Float64Array, nperseg: number): Float64Array {
  positiveInteger(nperseg, 'nperseg');
  if (window instanceof Float64Array) {
    if (window.length !== nperseg) throw new RangeError(`window has ${window.length} points, nperseg is ${nperseg}`);
    return window;
  }
  return getWindow(window, nperseg);
}

function checkOverlap(nperseg: number, noverlap: number): void {
  if (!Number.isSafeInteger(noverlap) || noverlap < 0)
    throw new RangeError(`noverlap must be a non-negative integer, got ${noverlap}`);
  if (noverlap >= nperseg) throw new RangeError(`noverlap = ${noverlap} must be less than nperseg = ${nperseg}`);
}

/** scipy.signal.check_COLA: constant overlap-add of the window at this overlap. */
export function checkCOLA(window: WindowSpec | Float64Array, nperseg: number, noverlap: number, tol = 1e-10): boolean {
  const w = windowArray(window, nperseg);
  checkOverlap(nperseg, noverlap);
  const sums = binsums(w, nperseg, noverlap, false);
  const sorted = [...sums].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  let worst = 0;
  for (const s of sums) worst = Math.max(worst, Math.abs(s - median));
  return worst < tol;
}

/** scipy.signal.check_NOLA: the overlap-added squared window never vanishes (istft can invert). */
export function checkNOLA(window: WindowSpec | Float64Array, nperseg: number, noverlap: number, tol = 1e-10): boolean {
  const w = windowArray(window, nperseg);
  checkOverlap(nperseg, noverlap);
  const sums = binsums(w, nperseg, noverlap, true);
  let min = Infinity;
  for (const s of sums) min = Math.min(min, s);
  return min > tol;
}

/** Thrown by istft when the window and overlap violate NOLA: the STFT cannot be inverted. */
export class NolaError extends RangeError {
  override name = 'NolaError';
}

/** What istft takes (scipy names, camelCase). */
export interface InverseOptions {
  fs?: number | undefined;
  window?: WindowSpec | undefined;
  nperseg?: number | undefined;
  noverlap?: number | undefined;
  nfft?: number | undefined;
  inputOnesided?: boolean | undefined;
  /** The STFT was computed with a boundary extension: drop nperseg/2 samples at each end (default true). */
  boundary?: boolean | undefined;
  scaling?: StftScaling | undefined;
}

/** The resolved geometry of scipy.signal.istft. */
export interface InverseGeometry {
  fs: number;
  /** Frequency bins per frame in the input. */
  freqs: number;
  /** Frames in the input. */
  frames: number;
  nperseg: number;
  noverlap: number;
  step: number;
  nfft: number;
  onesided: boolean;
  boundary: boolean;
  /** Samples dropped at the start (nperseg/2 with boundary, else 0). */
  trim: number;
  /** Output samples per series. */
  outputLength: number;
  window: Float64Array;
  /** Gain on the inverse FFT frames: sum(w) ('spectrum') or sqrt(fs sum(w^2)) ('psd'), divided by nfft (cuFFT does not normalize). */
  frameGain: number;
}

/** scipy.signal.istft's geometry; throws NolaError where the window and overlap cannot be inverted. */
export function istftGeometry(freqs: number, frames: number, options: InverseOptions = {}): InverseGeometry {
  positiveInteger(freqs, 'frequency bins');
  positiveInteger(frames, 'frames');
  const fs = checkFs(options.fs ?? 1);
  const onesided = options.inputOnesided ?? true;
  if (typeof onesided !== 'boolean')
    throw new TypeError(`inputOnesided must be a boolean, got ${JSON.stringify(onesided)}`);
  const nDefault = onesided ? 2 * (freqs - 1) : freqs;
  const nperseg = options.nperseg === undefined ? nDefault : positiveInteger(options.nperseg, 'nperseg');
  if (nperseg < 1)
    throw new RangeError(`nperseg must be a positive integer (from ${freqs} frequency bins), got ${nperseg}`);
  let nfft: number;
  if (options.nfft === undefined) nfft = onesided && nperseg === nDefault + 1 ? nperseg : nDefault;
  else {
    nfft = positiveInteger(options.nfft, 'nfft');
    if (nfft < nperseg) throw new RangeError(`nfft = ${nfft} must be greater than or equal to nperseg = ${nperseg}`);
  }
  if (nfft < nperseg)
    throw new RangeError(`nfft = ${nfft} (from ${freqs} frequency bins) is less than nperseg = ${nperseg}; give nfft`);
  const noverlap = options.noverlap ?? Math.floor(nperseg / 2);
  checkOverlap(nperseg, noverlap);
  const step = nperseg - noverlap;
  const window = getWindow(options.window ?? 'hann', nperseg);
  if (!checkNOLA(window, nperseg, noverlap)) {
    throw new NolaError(
      `window ${JSON.stringify(options.window ?? 'hann')} with nperseg = ${nperseg} and noverlap = ${noverlap} violates NOLA: the STFT cannot be inverted`,
    );
  }
  const boundary = options.boundary ?? true;
  if (typeof boundary !== 'boolean')
    throw new TypeError(`boundary must be a boolean (istft), got ${JSON.stringify(boundary)}`);
  const trim = boundary ? Math.floor(nperseg / 2) : 0;
  const full = nperseg + (frames - 1) * step;
  const outputLength = full - 2 * trim;
  if (outputLength < 1)
    throw new RangeError(
      `istft of ${frames} frames of ${nperseg} samples leaves no output after removing the boundary`,
    );
  const scaling = options.scaling ?? 'spectrum';
  let gain: number;
  if (scaling === 'spectrum') gain = window.reduce((a, b) => a + b, 0);
  else if (scaling === 'psd') gain = Math.sqrt(fs * window.reduce((a, b) => a + b * b, 0));
  else throw new TypeError(`scaling must be 'spectrum' or 'psd', got ${JSON.stringify(scaling)}`);
  return {
    fs,
    freqs,
    frames,
    nperseg,
    noverlap,
    step,
    nfft,
    onesided,
    boundary,
    trim,
    outputLength,
    window,
    frameGain: gain / nfft,
  };
}
