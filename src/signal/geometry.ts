/**
 * STFT, spectrogram and Welch geometry, mirroring scipy.signal's _spectral_helper, stft,
 * spectrogram and welch (CUDA-free): defaults, frame counts, extension, padding, the frequency and
 * time axes, and the scale factors. The one place the framing is computed and checked: stft(),
 * the engine's framed jobs and `tscuda stft` take the geometry made here (the public names
 * nperseg and noverlap; `hop` = nperseg - noverlap inside), and a run of its frames
 * (framesGeometry) is what one chunk of a long STFT runs. The GPU code only executes what this
 * decides; the inverse's geometry is inverse-geometry.ts's.
 */
import { positiveInteger, shownValue } from '../runtime/value-checks.js';
import { getWindow, type WindowSpec } from './window.js';

/** Boundary extension before framing (scipy: 'zeros' | 'even' | 'odd' | 'constant' | None). */
export type Boundary = 'zeros' | 'even' | 'odd' | 'constant' | null;
/** Per-frame (or per-series) detrending before the window. */
export type DetrendType = 'constant' | 'linear' | false;
/** STFT scaling (scipy.signal.stft): 'spectrum' (1/sum(w)) or 'psd' (1/sqrt(fs sum(w^2))). */
export type StftScaling = 'spectrum' | 'psd';
/** Spectrogram/Welch scaling: 'density' (V^2/Hz) or 'spectrum' (V^2). */
export type PsdScaling = 'density' | 'spectrum';

/** Codes the signal kernels take for a boundary. */
export const BOUNDARY_CODES: Readonly<Record<'none' | 'zeros' | 'even' | 'odd' | 'constant', number>> = {
  none: 0,
  zeros: 1,
  even: 2,
  odd: 3,
  constant: 4,
};
/** Codes the signal kernels take for a detrend type. */
export const DETREND_CODES = { none: 0, constant: 1, linear: 2 } as const;

export function boundaryCode(b: Boundary): number {
  return b === null ? BOUNDARY_CODES.none : BOUNDARY_CODES[b];
}

export function detrendCode(d: DetrendType): number {
  return d === false ? DETREND_CODES.none : DETREND_CODES[d];
}

export function checkFs(fs: unknown): number {
  if (typeof fs !== 'number' || !Number.isFinite(fs) || fs <= 0)
    throw new RangeError(`fs must be a positive finite number, got ${String(fs)}`);
  return fs;
}

export function checkDetrend(d: unknown, what = 'detrend'): DetrendType {
  if (d === false || d === 'constant' || d === 'linear') return d;
  // shownValue, not JSON.stringify: a BigInt or a cyclic object must not turn the message itself into a TypeError.
  throw new TypeError(`${what} must be 'constant', 'linear' or false, got ${shownValue(d)}`);
}

/**
 * A framing parameter refused against another (nperseg against the signal length, noverlap or nfft
 * against nperseg): `field` names it, `detail` says what is wrong with its value without the field
 * (a job's refusal names the field itself: JobValidationError(field, detail)).
 */
export class FramingError extends RangeError {
  override readonly name: string = 'FramingError';
  /** The parameter at fault: nperseg, noverlap or nfft. */
  readonly field: string;
  /** Its value and what is wrong with it, e.g. `65 is greater than the signal length 64`. */
  readonly detail: string;

  constructor(field: string, value: number, problem: string) {
    super(`${field} = ${value} ${problem}`);
    this.field = field;
    this.detail = `${value} ${problem}`;
  }
}

/** noverlap checked against nperseg (scipy: 0 <= noverlap < nperseg); returns it. */
export function checkNoverlap(noverlap: unknown, nperseg: number): number {
  if (typeof noverlap !== 'number' || !Number.isSafeInteger(noverlap) || noverlap < 0)
    throw new RangeError(`noverlap must be a non-negative integer, got ${shownValue(noverlap)}`);
  if (noverlap >= nperseg) throw new FramingError('noverlap', noverlap, `must be less than nperseg = ${nperseg}`);
  return noverlap;
}

/** nfft checked against nperseg (scipy: nfft >= nperseg); returns it. */
export function checkNfft(nfft: unknown, nperseg: number): number {
  const n = positiveInteger(nfft, 'nfft');
  if (n < nperseg) throw new FramingError('nfft', n, `must be greater than or equal to nperseg = ${nperseg}`);
  return n;
}

function checkBoundary(b: unknown): Boundary {
  if (b === null || b === 'zeros' || b === 'even' || b === 'odd' || b === 'constant') return b;
  throw new TypeError(`boundary must be 'zeros', 'even', 'odd', 'constant' or null, got ${JSON.stringify(b)}`);
}

/** numpy.fft.rfftfreq(n, 1/fs). */
export function rfftFrequencies(n: number, fs: number): Float64Array {
  positiveInteger(n, 'rfftFrequencies: n');
  checkFs(fs);
  const out = new Float64Array(Math.floor(n / 2) + 1);
  const val = 1 / (n * (1 / fs));
  for (let k = 0; k < out.length; k++) out[k] = k * val;
  return out;
}

/** numpy.fft.fftfreq(n, 1/fs): 0, 1, ..., then the negative frequencies. */
export function fftFrequencies(n: number, fs: number): Float64Array {
  positiveInteger(n, 'fftFrequencies: n');
  checkFs(fs);
  const out = new Float64Array(n);
  const val = 1 / (n * (1 / fs));
  const positive = Math.floor((n - 1) / 2) + 1;
  for (let k = 0; k < positive; k++) out[k] = k * val;
  for (let k = positive; k < n; k++) out[k] = (k - n) * val;
  return out;
}

/** What stft/spectrogram/welch take (scipy names, camelCase). */
export interface SpectralOptions {
  fs?: number | undefined;
  window?: WindowSpec | undefined;
  nperseg?: number | undefined;
  noverlap?: number | undefined;
  nfft?: number | undefined;
  detrend?: DetrendType | undefined;
  returnOnesided?: boolean | undefined;
  boundary?: Boundary | undefined;
  padded?: boolean | undefined;
}

/** How frames tile a series: `frames` frames of `nperseg` samples, one every `hop` samples. */
export interface FrameLayout {
  /** Samples per frame (segment). */
  readonly nperseg: number;
  /** Samples from one frame's start to the next one's: nperseg - noverlap. */
  readonly hop: number;
  /** Frames (segments). */
  readonly frames: number;
}

/** The resolved framing of one STFT-like call over series of `length` samples (made by spectralGeometry, never changed). */
export interface SpectralGeometry extends FrameLayout {
  /** Samples per input series. */
  readonly length: number;
  readonly fs: number;
  /** Samples shared by consecutive frames. */
  readonly noverlap: number;
  readonly nfft: number;
  /** Samples added on each side by the boundary extension (nperseg/2, or 0 without a boundary). */
  readonly extension: number;
  readonly boundary: Boundary;
  /** Zeros appended after the extension so the frames tile the signal (padded). */
  readonly padding: number;
  /** Length after extension and padding. */
  readonly extendedLength: number;
  readonly onesided: boolean;
  /** Complex input: a complex-to-complex FFT per frame, the spectrum two-sided (scipy forces return_onesided False). */
  readonly complex: boolean;
  /** Frequency bins in the output: nfft/2+1 one-sided, nfft two-sided. */
  readonly freqs: number;
  /** Bins the FFT produces per frame: nfft/2+1 for real input (R2C), nfft for complex input (C2C). */
  readonly halfBins: number;
  readonly detrend: DetrendType;
  /** The window, float64, nperseg points. */
  readonly window: Float64Array;
  readonly windowSpec: WindowSpec;
  /** sum(w) and sum(w^2). */
  readonly windowSum: number;
  readonly windowSquareSum: number;
}

/** What stft, spectrogram and welch default to where scipy's defaults differ. */
export interface SpectralDefaults {
  window: WindowSpec;
  detrend: DetrendType;
  boundary: Boundary;
  padded: boolean;
  /** noverlap = nperseg / this (default 2). */
  noverlapDivisor?: number | undefined;
}

/**
 * scipy's _spectral_helper geometry. `defaults` carries the caller's own defaults (stft, spectrogram
 * and welch differ). A default nperseg (256) is clamped to the input length as scipy does (it warns);
 * an explicit nperseg larger than the input is a RangeError here. `complex` input gives a two-sided
 * spectrum in fftfreq order (scipy switches return_onesided to False for complex x, with a warning;
 * here an explicit `returnOnesided: true` is a TypeError instead).
 */
export function spectralGeometry(
  length: number,
  options: SpectralOptions,
  defaults: SpectralDefaults,
  complex = false,
): SpectralGeometry {
  positiveInteger(length, 'signal length');
  const fs = checkFs(options.fs ?? 1);
  const windowSpec = options.window ?? defaults.window;
  let nperseg: number;
  if (options.nperseg === undefined) nperseg = Math.min(256, length);
  else {
    nperseg = positiveInteger(options.nperseg, 'nperseg');
    if (nperseg > length) throw new FramingError('nperseg', nperseg, `is greater than the signal length ${length}`);
  }
  const nfft = options.nfft === undefined ? nperseg : checkNfft(options.nfft, nperseg);
  const noverlap =
    options.noverlap === undefined
      ? Math.floor(nperseg / (defaults.noverlapDivisor ?? 2))
      : checkNoverlap(options.noverlap, nperseg);
  const hop = nperseg - noverlap;
  const boundary = checkBoundary(options.boundary === undefined ? defaults.boundary : options.boundary);
  const padded = options.padded ?? defaults.padded;
  if (typeof padded !== 'boolean') throw new TypeError(`padded must be a boolean, got ${JSON.stringify(padded)}`);
  const detrend = checkDetrend(options.detrend === undefined ? defaults.detrend : options.detrend);
  if (typeof complex !== 'boolean') throw new TypeError(`complex must be a boolean, got ${shownValue(complex)}`);
  const returnOnesided = options.returnOnesided ?? !complex;
  if (typeof returnOnesided !== 'boolean')
    throw new TypeError(`returnOnesided must be a boolean, got ${JSON.stringify(returnOnesided)}`);
  if (complex && returnOnesided)
    throw new TypeError(
      'returnOnesided: true needs real input: the spectrum of complex input is two-sided (scipy switches to return_onesided=False)',
    );
  // nperseg <= length, so an even or odd extension (nperseg/2 samples) always fits in length - 1: scipy's check of it cannot fail here.
  const extension = boundary === null ? 0 : Math.floor(nperseg / 2);
  let extendedLength = length + 2 * extension;
  const mod = (a: number, m: number): number => ((a % m) + m) % m;
  const padding = padded ? mod(mod(-(extendedLength - nperseg), hop), nperseg) : 0;
  extendedLength += padding;
  const frames = Math.floor((extendedLength - noverlap) / hop);
  if (frames < 1)
    throw new RangeError(
      `no complete segment: ${extendedLength} samples after extension and padding, nperseg = ${nperseg}`,
    );
  const window = getWindow(windowSpec, nperseg);
  let windowSum = 0;
  let windowSquareSum = 0;
  for (const v of window) {
    windowSum += v;
    windowSquareSum += v * v;
  }
  const halfBins = complex ? nfft : Math.floor(nfft / 2) + 1;
  return Object.freeze({
    length,
    fs,
    nperseg,
    noverlap,
    hop,
    nfft,
    extension,
    boundary,
    padding,
    extendedLength,
    frames,
    onesided: returnOnesided,
    complex,
    freqs: returnOnesided ? halfBins : nfft,
    halfBins,
    detrend,
    window,
    windowSpec,
    windowSum,
    windowSquareSum,
  });
}

/** stft's defaults: hann, no detrend, zeros boundary, padded. */
export const STFT_DEFAULTS = { window: 'hann', detrend: false, boundary: 'zeros', padded: true } as const;
/** spectrogram's defaults: tukey(0.25), constant detrend, nperseg/8 overlap, no boundary, not padded. */
export const SPECTROGRAM_DEFAULTS = {
  window: ['tukey', 0.25] as const,
  detrend: 'constant',
  boundary: null,
  padded: false,
  noverlapDivisor: 8,
} as const;
/** welch's defaults: hann, constant detrend, half overlap, no boundary, not padded. */
export const WELCH_DEFAULTS = { window: 'hann', detrend: 'constant', boundary: null, padded: false } as const;

/** The frequency axis of a geometry (rfftfreq one-sided, fftfreq two-sided). */
export function spectralFrequencies(g: SpectralGeometry): Float64Array {
  return g.onesided ? rfftFrequencies(g.nfft, g.fs) : fftFrequencies(g.nfft, g.fs);
}

/** The frame-centre times of a geometry (scipy's `t`). */
export function spectralTimes(g: SpectralGeometry): Float64Array {
  const t = new Float64Array(g.frames);
  const shift = g.boundary === null ? 0 : g.nperseg / 2 / g.fs;
  for (let i = 0; i < g.frames; i++) t[i] = (g.nperseg / 2 + i * g.hop) / g.fs - shift;
  return t;
}

/** Samples [start, start + length) of the extended, padded series that frames [first, first + frames) read. */
export function frameSpan(layout: FrameLayout, first: number, frames: number): { start: number; length: number } {
  return { start: first * layout.hop, length: (frames - 1) * layout.hop + layout.nperseg };
}

/**
 * Frames [first, first + frames) of `g` as a series of their own (frameSpan's samples of the
 * extended, padded series, whatever `first`), framed without boundary or padding: what one chunk of
 * a long STFT runs (the engine's framed jobs, `tscuda stft`). The parameters were checked when `g`
 * was made; only the count is checked here.
 */
export function framesGeometry(g: SpectralGeometry, frames: number): SpectralGeometry {
  if (!Number.isSafeInteger(frames) || frames < 1 || frames > g.frames)
    throw new RangeError(`frames must be an integer in [1, ${g.frames}] (the geometry's frames), got ${frames}`);
  const length = frameSpan(g, 0, frames).length;
  return Object.freeze({ ...g, length, extension: 0, boundary: null, padding: 0, extendedLength: length, frames });
}

/** stft's factor on each FFT bin: 1/sum(w) ('spectrum') or 1/sqrt(fs sum(w^2)) ('psd'). */
export function stftScale(g: SpectralGeometry, scaling: StftScaling): number {
  if (scaling === 'spectrum') return 1 / g.windowSum;
  if (scaling === 'psd') return Math.sqrt(1 / (g.fs * g.windowSquareSum));
  throw new TypeError(`scaling must be 'spectrum' or 'psd', got ${JSON.stringify(scaling)}`);
}

/** The factor on |X|^2 of spectrogram and welch: 1/(fs sum(w^2)) ('density') or 1/sum(w)^2 ('spectrum'). */
export function psdScale(g: SpectralGeometry, scaling: PsdScaling): number {
  if (scaling === 'density') return 1 / (g.fs * g.windowSquareSum);
  if (scaling === 'spectrum') return 1 / (g.windowSum * g.windowSum);
  throw new TypeError(`scaling must be 'density' or 'spectrum', got ${JSON.stringify(scaling)}`);
}

/** Whether bin k of a one-sided spectrum of an nfft-point transform is doubled in a PSD (not DC, not an even nfft's Nyquist). */
export function isDoubledBin(k: number, nfft: number): boolean {
  return k > 0 && !(nfft % 2 === 0 && k === nfft / 2);
}

/**
 * The inclusive bin range [k0, k1] of a one-sided spectrum of an n-point transform whose
 * frequencies k·fs/n lie in [lo, hi] (a relative 1e-9 slack absorbs rounding at the edges).
 * Empty bands give k0 > k1. Throws RangeError for bands outside [0, fs/2] or lo > hi.
 */
export function bandBins(band: readonly [number, number], fs: number, n: number, what = 'band'): [number, number] {
  if (!Array.isArray(band) || band.length !== 2)
    throw new TypeError(`${what} must be [lo, hi], got ${JSON.stringify(band)}`);
  const [lo, hi] = band;
  if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isFinite(lo) || !Number.isFinite(hi))
    throw new RangeError(`${what} edges must be finite numbers, got [${String(lo)}, ${String(hi)}]`);
  checkFs(fs);
  positiveInteger(n, `${what}: transform length`);
  const nyquist = fs / 2;
  const slack = 1e-9 * nyquist;
  if (lo < -slack || hi > nyquist + slack || lo > hi)
    throw new RangeError(`${what} [${lo}, ${hi}] must satisfy 0 <= lo <= hi <= fs/2 = ${nyquist}`);
  const half = Math.floor(n / 2);
  const k0 = Math.max(0, Math.ceil((lo * n) / fs - 1e-9));
  const k1 = Math.min(half, Math.floor((hi * n) / fs + 1e-9));
  return [k0, k1];
}
