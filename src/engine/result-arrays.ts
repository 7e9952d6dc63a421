/**
 * The result arrays a job returns, one place: which of RESULT_ARRAY_FIELDS its flags produce, how
 * many values each holds, and of what element type at an engine precision. The engine checks
 * `into` against it and allocates from it; the queue lays results out on the wire and estimates
 * their size at submit from it.
 */
import type { Precision } from '../runtime/fft/precision.js';
import type { RESULT_ARRAY_FIELDS } from './parameters.js';

/** One of RESULT_ARRAY_FIELDS. */
export type ResultArrayField = (typeof RESULT_ARRAY_FIELDS)[number];

/** Element type of a result array: the engine's precision, float64 (band powers) or raw 16-bit bits (waves asked for in f16/bf16). */
export type ResultElement = Precision | 'u16';

/** One result array of a job. */
export interface ResultArray {
  readonly field: ResultArrayField;
  readonly length: number;
  readonly element: ResultElement;
}

/** What of a validated job decides its result arrays (a NormalizedJob has it all). */
export interface ResultShapeOf {
  readonly batch: number;
  readonly length: number;
  readonly stft: boolean;
  readonly previewBins: number;
  readonly framing: { readonly frames: number } | undefined;
  readonly cycles: boolean;
  readonly bands: readonly unknown[];
  readonly bandWaves: boolean;
  readonly wavelet: boolean;
  readonly waveletBands: boolean;
  readonly freqs: readonly unknown[];
  readonly outputDtype: 'f16' | 'bf16' | undefined;
}

/** The result arrays of `job` at `precision`, in RESULT_ARRAY_FIELDS order. */
export function resultArrays(job: ResultShapeOf, precision: Precision): ResultArray[] {
  const { batch: b, length: n } = job;
  const nb = job.bands.length;
  const wave: ResultElement = job.outputDtype ? 'u16' : precision;
  const out: ResultArray[] = [];
  if (job.stft) {
    out.push({ field: 'filtered', length: b * n, element: wave });
    out.push({ field: 'spectrum', length: b * job.previewBins * (job.framing?.frames ?? 1), element: precision });
  }
  if (job.cycles) out.push({ field: 'bandPowers', length: b * nb, element: 'f64' });
  if (job.cycles && job.bandWaves) out.push({ field: 'bandWaves', length: b * nb * n, element: wave });
  if (job.wavelet)
    out.push({ field: 'waveletPower', length: b * (job.waveletBands ? nb : job.freqs.length) * n, element: precision });
  return out;
}

/** The typed-array class of a result element type. */
export function resultArrayClass(
  element: ResultElement,
): Float32ArrayConstructor | Float64ArrayConstructor | Uint16ArrayConstructor {
  return element === 'u16' ? Uint16Array : element === 'f64' ? Float64Array : Float32Array;
}
