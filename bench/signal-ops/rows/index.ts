/** Every signal-ops row (issue 41), in the catalogue's order; a new row is one module here and one line below. */
import type { SignalOpRow } from '../row.js';
import { FFTCONVOLVE_ROW } from './fftconvolve.js';
import { HILBERT_ROW } from './hilbert.js';
import { IQ16_SPECTROGRAM_ROW, IQ_SPECTROGRAM_ROW } from './iq-spectrogram.js';
import { RESAMPLE_POLY_ROW } from './resample-poly.js';
import { SOSFILT_ROW } from './sosfilt.js';

export const SIGNAL_OP_ROWS: readonly SignalOpRow[] = [
  FFTCONVOLVE_ROW,
  SOSFILT_ROW,
  RESAMPLE_POLY_ROW,
  HILBERT_ROW,
  IQ_SPECTROGRAM_ROW,
  IQ16_SPECTROGRAM_ROW,
];
