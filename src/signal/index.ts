/**
 * tscuda/signal: GPU DSP on device buffers with scipy.signal's names, parameters and defaults.
 * float32 and float64; `batch` series of `length` samples, row-major; `{ stream }` on every call
 * (default: the input's context's default stream, `context.defaultStream`, resolved once at the
 * call's entry); enqueue only; no device allocation per call once
 * warm (plans, scratch, window and band tables are cached: see workspace.ts, clearSignalCaches()).
 *
 * ## Primitives (what the job engine calls). Device buffers in, device buffers out.
 *
 * ```ts
 * type RealBuffer = DeviceBuffer<'f32'> | DeviceBuffer<'f64'>;
 * type ComplexBuffer = DeviceBuffer<'c64'> | DeviceBuffer<'c128'>;   // f32 <-> c64, f64 <-> c128
 * interface SeriesOptions { batch: number; length: number; stream?: Stream }
 * halfBins(length: number): number                                   // N/2 + 1
 *
 * // Whole-series detrend + window, fused (one stats reduction + one elementwise pass). In place allowed.
 * detrendWindow(input: RealBuffer, output: RealBuffer,
 *   o: SeriesOptions & { detrend: 'constant' | 'linear' | false; window: WindowSpec | null }): void
 * // Forward real FFT: output B x (N/2+1), unnormalised, e^-2πi.
 * rfft(input: RealBuffer, output: ComplexBuffer, o: SeriesOptions): void
 * // Inverse real FFT: output B x N; normalize (default true) divides by N. OVERWRITES `spectrum` (cuFFT C2R).
 * irfft(spectrum: ComplexBuffer, output: RealBuffer, o: SeriesOptions & { normalize?: boolean }): void
 * // Keep bins with k·fs/N in [lo, hi], zero the rest, times `scale` (default 1; pass 1/N and irfft
 * // with normalize: false to save a pass). In place unless `output`. Returns the buffer written.
 * bandMask(spectrum: ComplexBuffer, o: SeriesOptions & { fs?: number; band: [lo, hi]; output?: ComplexBuffer; scale?: number }): ComplexBuffer
 * // One masked copy per band in one launch: output B x bands x (N/2+1), then one irfft of B·bands rows.
 * bandMaskMany(spectrum: ComplexBuffer, output: ComplexBuffer, o: SeriesOptions & { fs?: number; bands: [lo, hi][]; scale?: number }): void
 * // |X| of the first `bins` bins per series: output B x bins (real), times `scale` (default 1).
 * spectrumMagnitude(spectrum: ComplexBuffer, output: RealBuffer, o: SeriesOptions & { bins: number; scale?: number }): void
 * // Band powers into f64 B x bands: sum over bins in [lo, hi] of c_k |X_k|^2 / N^2, c_k = 2 except DC
 * // and an even N's Nyquist (one-sided Parseval: all bins give mean(x^2); a bin-centred cosine of amplitude A gives A^2/2).
 * bandPowers(spectrum: ComplexBuffer, output: DeviceBuffer<'f64'>, o: SeriesOptions & { fs?: number; bands: [lo, hi][] }): void
 * // Strongest bin per series into f64 B x 4 = (bin, re, im, |X|^2); range default [fs/N, fs/2] (DC excluded).
 * dominantCycleDevice(spectrum: ComplexBuffer, output: DeviceBuffer<'f64'>, o: SeriesOptions & { fs?: number; range?: [lo, hi] }): void
 * // Host finishing (after the D2H copy of those rows): frequency, period, amplitude, phase, bin.
 * // Pass windowSum = windowSum(spec, N) when a window was applied before the FFT (amplitude correction).
 * finishDominantCycles(rows: Float64Array, o: { batch: number; length: number; fs?: number; windowSum?: number }): DominantCycle[]
 * // Morlet CWT by FFT (MNE's morlet convention, see morlet.ts). Returns `into` or a new buffer:
 * // 'complex' B x F x N (c64/c128), 'power' B x F x N, or with bands B x bands x N (power summed over
 * // the freqs inside each band). cwtGeometry(N, o) gives the sizes without running.
 * cwt(x: RealBuffer, o: { fs?: number; freqs?: number[] ; scales?: number[]; nCycles?: number; w0?: number;
 *   wavelet?: 'morlet'; output?: 'complex' | 'power'; bands?: [lo, hi][]; batch?: number; stream?: Stream;
 *   into?: DeviceBuffer<Precision | 'c64' | 'c128'> }): ComplexBuffer | RealBuffer
 * ```
 *
 * signalWorkspace.releaseStream(stream): frees the scratch kept for `stream` (call before disposing it).
 *
 * Pure helpers (no CUDA): getWindow, windowSum, resolveWindow, spectralGeometry, istftGeometry,
 * checkCOLA, checkNOLA, bandBins, bandRanges, finishDominantCycles, morletGeometry, cwtReference.
 *
 * ## scipy-style operations (allocate their outputs unless given `output`)
 * ```ts
 * stft(x, { fs, window, nperseg, noverlap, nfft, detrend, returnOnesided, boundary, padded, scaling, batch, stream, output })
 *   -> { f, t, Zxx: ComplexBuffer (B x freqs x frames), geometry }
 * istft(Zxx, { frames, batch, fs, window, nperseg, noverlap, nfft, inputOnesided, boundary, scaling, stream, output })
 *   -> { t, x: RealBuffer (B x outputLength), geometry }         // NolaError where NOLA fails
 * spectrogram(x, { ...stft options, scaling: "density" | "spectrum", mode: "psd" | "complex" | "magnitude" | "angle" | "phase" })
 *   -> { f, t, Sxx (B x freqs x frames; complex for mode "complex"), geometry }
 * welch(x, { ...same, average: "mean" | "median" }) -> { f, Pxx (B x freqs), geometry }
 * detrend(x, "linear" | "constant", { batch, stream, output }) -> RealBuffer
 * await bandPower(x, bands, { fs, relative, detrend, window, batch, stream }) -> Float64Array (B x bands)
 * await dominantCycle(x, { fs, range, detrend, window, batch, stream }) -> DominantCycle[]
 * ```
 *
 * ## Filtering (scipy names; design on the CPU, filtering on the GPU; see docs/signal.md#filtering)
 * ```ts
 * butter(N, Wn, { btype, fs }) / cheby1(N, rp, Wn, o) / cheby2(N, rs, Wn, o) -> Sos (n x 6)   // output 'sos'
 * firwin(numtaps, cutoff, { width, window: 'hamming', passZero: true, scale: true, fs }) -> Float64Array
 * sosfiltZi(sos) -> n x 2
 * sosfilt(sos, x, { batch, stream, output, zi?, zf? }) -> y | { y, zf }          // zi: (sections, batch, 2)
 * sosfiltfilt(sos, x, { batch, stream, output, padtype: 'odd', padlen })  -> y
 * lfilter(b, a, x, { batch, stream, output, zi?, zf? }) -> y | { y, zf }        // FIR: a is one number
 * filtfilt(b, a, x, { batch, stream, output, padtype: 'odd', padlen })    -> y
 * hilbert(x, { N, batch, stream, output }) -> ComplexBuffer (batch x N)
 * envelope(x, { batch, stream, output }) -> RealBuffer: |hilbert(x)|
 * convolve(x, taps, { mode: 'full' | 'same' | 'valid', method: 'auto' | 'direct' | 'fft', batch, stream, output }) -> y
 * fftconvolve(x, taps, { mode, batch, stream, output }) -> y
 * oaconvolve(x, taps, { mode, batch, stream, output }) -> y                    // as fftconvolve on the GPU
 * fftConvolutionPlan(length, ntaps, window, precision, batch, wholeLength) -> whole length or overlap-save blocks
 * correlate(x, taps, { mode, method, batch, stream, output }) -> y
 * firwin2(numtaps, freq, gain, { nfreqs, window: 'hamming', antisymmetric, fs }) -> Float64Array
 * upfirdn(h, x, up, down, { batch, stream, output }) -> y (batch x upfirdnLength)
 * resamplePoly(x, up, down, { window: ['kaiser', 5], batch, stream, output }) -> y (batch x ceil(n up / down))
 * decimate(x, q, { n, ftype: 'iir' | 'fir', zeroPhase: true, batch, stream, output }) -> y (batch x ceil(n / q))
 * resample(x, num, { batch, stream, output }) -> y (batch x num)              // Fourier method
 * periodogram(x, { fs, window: 'boxcar', nfft, detrend, scaling, batch, stream }) -> { f, Pxx, geometry }
 * csd(x, y, { ...welch's options }) -> { f, Pxy (complex, B x freqs), geometry }
 * coherence(x, y, { fs, window, nperseg, noverlap, nfft, detrend }) -> { f, Cxy, geometry }
 * ```
 *
 * ## Complex (IQ) input (see docs/signal.md#complex-iq-signals)
 * x may be complex in the spectral operations, the convolutions and the filters above: c64/c128
 * (interleaved re, im), or an i8/i16 buffer of interleaved I/Q pairs with `{ iq: true, scale,
 * precision }`. Spectra then come two-sided in fftfreq order; filters and convolutions return
 * c64/c128; taps may be complex (`{ re, im }`). INPUT_KINDS is the table of what an input may hold.
 * ```ts
 * iqToComplex(iq, { scale, precision, output, stream }) -> ComplexBuffer      // the conversion alone
 * istft(Zxx, { inputOnesided: false, returnComplex: true, ... }) -> { t, x: ComplexBuffer, geometry }
 * ```
 */
export {
  getWindow,
  windowSum,
  resolveWindow,
  windowKey,
  besselI0,
  UnknownWindowError,
  WindowParameterError,
  WINDOW_NAMES,
  type WindowSpec,
  type WindowName,
  type WindowOptions,
  type ResolvedWindow,
} from './window.js';
export {
  spectralGeometry,
  spectralFrequencies,
  spectralTimes,
  stftScale,
  psdScale,
  bandBins,
  rfftFrequencies,
  fftFrequencies,
  isDoubledBin,
  STFT_DEFAULTS,
  SPECTROGRAM_DEFAULTS,
  WELCH_DEFAULTS,
  FramingError,
  type Boundary,
  type DetrendType,
  type StftScaling,
  type PsdScaling,
  type SpectralOptions,
  type SpectralGeometry,
  type SpectralDefaults,
  type FrameLayout,
} from './geometry.js';
export {
  istftGeometry,
  checkCOLA,
  checkNOLA,
  NolaError,
  type InverseOptions,
  type InverseGeometry,
} from './inverse-geometry.js';
export {
  finishDominantCycles,
  bandRanges,
  bandPowersReference,
  type DominantCycle,
  type FinishDominantOptions,
} from './cycles.js';
export {
  morletGeometry,
  morletWavelet,
  morletShape,
  cwtReference,
  fastLength,
  bandMembers,
  type MorletOptions,
  type MorletGeometry,
} from './morlet.js';
export {
  detrendWindow,
  rfft,
  irfft,
  bandMask,
  bandMaskMany,
  spectrumMagnitude,
  bandPowers,
  dominantCycleDevice,
  dominantBins,
  halfBins,
  type RealBuffer,
  type ComplexBuffer,
  type SeriesOptions,
  type DetrendWindowOptions,
  type IrfftOptions,
  type BandMaskOptions,
  type BandMaskManyOptions,
  type MagnitudeOptions,
  type BandPowersOptions,
  type DominantOptions,
} from './primitives.js';
export { cwt, cwtGeometry, type CwtOptions } from './cwt.js';
export {
  narrow,
  inputSeries,
  sampleScale,
  isSampleDType,
  DEFAULT_I16_SCALE,
  SAMPLE_DTYPES,
  HALF_DTYPES,
  type SampleDType,
  type HalfDType,
  type SampleBuffer,
  type SignalInput,
  type SampleOptions,
  type InputSeries,
  type NarrowOptions,
  INPUT_KINDS,
  inputKind,
  type InputKind,
  type InputDomain,
  type IqDType,
  type IqBuffer,
  type ComplexInput,
} from './samples.js';
export { iqToComplex, isComplexInput, type IqToComplexOptions, type ComplexCallOptions } from './iq.js';
export { ComplexInputError } from './input-errors.js';
export {
  isComplexTaps,
  checkComplexTaps,
  correlationTaps,
  type ComplexTaps,
  type Taps,
} from './complex-convolution.js';
export {
  findNonFinite,
  canBeNonFinite,
  ALL_FINITE,
  type FloatSampleDType,
  type NonFiniteOptions,
} from './non-finite.js';
export {
  SignalWorkspace,
  signalWorkspace,
  clearSignalCaches,
  type Precision,
  type SignalWorkspaceOptions,
} from './workspace.js';
export { DEFAULT_MAX_TABLE_BYTES, TableCache } from './table-cache.js';
export {
  stft,
  stftGeometry,
  spectrogram,
  type SpectrogramMode,
  type CallOptions,
  type StftOptions,
  type StftResult,
  type SpectrogramOptions,
  type SpectrogramResult,
} from './stft.js';
export { welch, medianBias, type WelchOptions, type WelchResult } from './welch.js';
export { istft, type IstftOptions, type IstftResult } from './istft.js';
export {
  detrend,
  bandPower,
  dominantCycle,
  type DetrendOptions,
  type BandPowerOptions,
  type DominantCycleOptions,
  type SpectrumPrepOptions,
} from './analysis.js';
export {
  butter,
  cheby1,
  cheby2,
  sosfiltZi,
  checkSos,
  sosfiltfiltPadlen,
  MAX_IIR_ORDER,
  type Sos,
  type SosInput,
  type BandType,
  type CriticalFrequency,
  type IirDesignOptions,
} from './filter-design.js';
export { firwin, kaiserAtten, kaiserBeta, checkTaps, MAX_TAPS, type FirwinOptions } from './firwin.js';
export { zpk2sos, cplxreal } from './zpk2sos.js';
export { buttap, cheb1ap, cheb2ap, lp2lpZpk, lp2hpZpk, lp2bpZpk, lp2bsZpk, bilinearZpk, type Zpk } from './zpk.js';
export type { Complex } from './complex.js';
export { FilterDesignError, FilterCoefficientError, SignalLengthError } from './filter-errors.js';
export { PADTYPE_CODES, resolvePadding, type PadType, type PadOptions } from './filter-padding.js';
export { type FilterCallOptions, type FilteredWithState } from './filter-call.js';
export { sosfilt, sosfiltfilt, MAX_SOS_SECTIONS, type SosfiltOptions, type SosfiltfiltOptions } from './iir.js';
export { lfilter, filtfilt, type LfilterOptions, type FiltfiltOptions } from './fir.js';
export { envelope, hilbert, type HilbertOptions } from './hilbert.js';
export { convolve, fftconvolve, type ConvolveOptions, type ComplexConvolveOptions } from './convolve.js';
export { correlate } from './correlate.js';
export { oaconvolve, overlapAddBlocks, lambertWm1, type OaconvolveOptions } from './oaconvolve.js';
export { firwin2, MAX_FIRWIN2_TERMS, type Firwin2Options } from './firwin2.js';
export { upfirdn, upfirdnLength, type UpfirdnOptions, type UpfirdnWindow } from './upfirdn.js';
export {
  resamplePoly,
  resamplePolyPlan,
  resamplePolyLength,
  RESAMPLE_POLY_WINDOW,
  type ResamplePolyOptions,
} from './resample-poly.js';
export { decimate, decimateLength, type DecimateOptions } from './decimate.js';
export { resample, nyquistFactor, type ResampleOptions } from './resample.js';
export { periodogram, type PeriodogramOptions } from './periodogram.js';
export {
  csd,
  coherence,
  type CsdOptions,
  type CsdResult,
  type CoherenceOptions,
  type CoherenceResult,
} from './cross-spectra.js';
export {
  convolutionWindow,
  convolutionMethod,
  convolutionOps,
  fftConvolutionFaster,
  type ConvolveMode,
  type ConvolveMethod,
} from './convolve-geometry.js';
export {
  fftConvolutionPlan,
  SINGLE_PASS_POINTS,
  type FftConvolutionPlan,
  type BlockFftConvolution,
  type WholeFftConvolution,
} from './convolve-blocks.js';
