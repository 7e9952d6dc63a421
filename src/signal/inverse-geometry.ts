/**
 * The inverse STFT's geometry, mirroring scipy.signal.istft, check_COLA and check_NOLA (CUDA-free):
 * the frame length, FFT length and overlap an STFT is inverted with, the output length after the
 * boundary is removed, the gain on each inverse frame, and whether the window and overlap can be
 * inverted at all. nperseg, noverlap and nfft are checked by geometry.ts's rules.
 */
import { positiveInteger } from '../runtime/value-checks.js';
import { checkFs, checkNfft, checkNoverlap, type SpectralGeometry, type StftScaling } from './geometry.js';
import { getWindow, type WindowSpec } from './window.js';

function binsums(window: Float64Array, nperseg: number, noverlap: number, square: boolean): Float64Array {
  const hop = nperseg - noverlap;
  const sums = new Float64Array(hop);
  for (let ii = 0; ii < Math.floor(nperseg / hop); ii++)
    for (let j = 0; j < hop; j++) {
      const v = window[ii * hop + j]!;
      sums[j]! += square ? v * v : v;
    }
  const rem = nperseg % hop;
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

/** scipy.signal.check_COLA: constant overlap-add of the window at this overlap. */
export function checkCOLA(window: WindowSpec | Float64Array, nperseg: number, noverlap: number, tol = 1e-10): boolean {
  const w = windowArray(window, nperseg);
  checkNoverlap(noverlap, nperseg);
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
  checkNoverlap(noverlap, nperseg);
  const sums = binsums(w, nperseg, noverlap, true);
  let min = Infinity;
  for (const s of sums) min = Math.min(min, s);
  return min > tol;
}

/** Thrown by istft when the window and overlap violate NOLA: the STFT cannot be inverted. */
export class NolaError extends RangeError {
  override name = 'NolaError';
}

/** Throws NolaError where `window` (of `spec`) at this overlap cannot be inverted (scipy.signal.check_NOLA). */
export function checkInvertible(spec: WindowSpec, window: Float64Array, nperseg: number, noverlap: number): void {
  if (!checkNOLA(window, nperseg, noverlap))
    throw new NolaError(
      `window ${JSON.stringify(spec)} with nperseg = ${nperseg} and noverlap = ${noverlap} violates NOLA: the STFT cannot be inverted`,
    );
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

/** The resolved geometry of scipy.signal.istft (made by istftGeometry or istftGeometryOf, never changed). */
export interface InverseGeometry {
  readonly fs: number;
  /** Frequency bins per frame in the input. */
  readonly freqs: number;
  /** Frames in the input. */
  readonly frames: number;
  readonly nperseg: number;
  readonly noverlap: number;
  /** Samples from one frame's start to the next one's: nperseg - noverlap. */
  readonly hop: number;
  readonly nfft: number;
  readonly onesided: boolean;
  readonly boundary: boolean;
  /** Samples dropped at the start (nperseg/2 with boundary, else 0). */
  readonly trim: number;
  /** Output samples per series. */
  readonly outputLength: number;
  readonly window: Float64Array;
  readonly windowSpec: WindowSpec;
  /** Gain on the inverse FFT frames: sum(w) ('spectrum') or sqrt(fs sum(w^2)) ('psd'), divided by nfft (cuFFT does not normalize). */
  readonly frameGain: number;
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
  else nfft = checkNfft(options.nfft, nperseg);
  if (nfft < nperseg)
    throw new RangeError(`nfft = ${nfft} (from ${freqs} frequency bins) is less than nperseg = ${nperseg}; give nfft`);
  const noverlap = checkNoverlap(options.noverlap ?? Math.floor(nperseg / 2), nperseg);
  const windowSpec = options.window ?? 'hann';
  const window = getWindow(windowSpec, nperseg);
  checkInvertible(windowSpec, window, nperseg, noverlap);
  const boundary = options.boundary ?? true;
  if (typeof boundary !== 'boolean')
    throw new TypeError(`boundary must be a boolean (istft), got ${JSON.stringify(boundary)}`);
  const sums = { windowSum: window.reduce((a, b) => a + b, 0), windowSquareSum: window.reduce((a, b) => a + b * b, 0) };
  const scaling = options.scaling ?? 'spectrum';
  return inverseLayout(
    { fs, freqs, frames, nperseg, noverlap, nfft, onesided, boundary, window, windowSpec },
    scaling,
    sums,
  );
}

/**
 * The istft of the frames `g` made (its window, nperseg, noverlap, nfft and sidedness), with or
 * without removing the boundary. NOLA is not checked again: for a caller that checked it once for
 * this window and overlap (checkInvertible; a framed job at submit) and inverts run after run of
 * frames (framesGeometry).
 */
export function istftGeometryOf(
  g: SpectralGeometry,
  options: { boundary: boolean; scaling: StftScaling },
): InverseGeometry {
  const { fs, freqs, frames, nperseg, noverlap, nfft, onesided, window, windowSpec } = g;
  const boundary = options.boundary;
  return inverseLayout(
    { fs, freqs, frames, nperseg, noverlap, nfft, onesided, boundary, window, windowSpec },
    options.scaling,
    g,
  );
}

/** An inverse geometry of checked parameters completed: the hop, the output length and the gain of `scaling`. */
function inverseLayout(
  p: Omit<InverseGeometry, 'hop' | 'trim' | 'outputLength' | 'frameGain'>,
  scaling: StftScaling,
  sums: { readonly windowSum: number; readonly windowSquareSum: number },
): InverseGeometry {
  const hop = p.nperseg - p.noverlap;
  const trim = p.boundary ? Math.floor(p.nperseg / 2) : 0;
  const outputLength = p.nperseg + (p.frames - 1) * hop - 2 * trim;
  if (outputLength < 1)
    throw new RangeError(
      `istft of ${p.frames} frames of ${p.nperseg} samples leaves no output after removing the boundary`,
    );
  let gain: number;
  if (scaling === 'spectrum') gain = sums.windowSum;
  else if (scaling === 'psd') gain = Math.sqrt(p.fs * sums.windowSquareSum);
  else throw new TypeError(`scaling must be 'spectrum' or 'psd', got ${JSON.stringify(scaling)}`);
  return Object.freeze({ ...p, hop, trim, outputLength, frameGain: gain / p.nfft });
}
