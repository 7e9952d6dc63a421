/**
 * scipy.signal.decimate on the GPU, batched over series: an anti-aliasing low-pass, then every
 * q-th sample. ftype 'iir' (default): cheby1(n = 8, 0.05 dB, 0.8 / q) as sections, run forward and
 * backward (sosfiltfilt) or forward only (sosfilt). ftype 'fir': firwin(n + 1, 1 / q) with n = 20·q,
 * through resample_poly (zero phase) or upfirdn. The filters are designed on the CPU as scipy
 * designs them; the keeping of every q-th sample is upfirdn's kernel with the one tap [1].
 */
import { resolveStream, type Stream } from '../runtime/stream.js';
import { positiveInteger, shownValue } from '../runtime/value-checks.js';
import type { RealBuffer } from './buffers.js';
import { filterSeries } from './filter-call.js';
import { cheby1, sosfiltfiltPadlen } from './filter-design.js';
import { resolvePadding } from './filter-padding.js';
import { firwin } from './firwin.js';
import { sosfilt, sosfiltfilt } from './iir.js';
import { resamplePolyPlan } from './resample-poly.js';
import { enqueueUpfirdn, resampledOutput, type UpfirdnWindow } from './upfirdn.js';
import { signalWorkspace as ws } from './workspace.js';

/** Options of decimate (scipy's keyword arguments). */
export interface DecimateOptions {
  /** Filter order: default 8 for 'iir', 20·q for 'fir' (n + 1 taps). */
  n?: number | undefined;
  /** 'iir' (default: Chebyshev type I) or 'fir' (Hamming-windowed). */
  ftype?: 'iir' | 'fir' | undefined;
  /** Filter forward and backward (default true: no phase shift) or forward only. */
  zeroPhase?: boolean | undefined;
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (x's dtype, batch × ceil(length / q)); default a new buffer. Must not be x. */
  output?: RealBuffer | undefined;
}

/** Samples per series after decimating by q: ceil(length / q). */
export function decimateLength(length: number, q: number): number {
  return Math.ceil(length / q);
}

/**
 * scipy.signal.decimate(x, q, n=None, ftype='iir', zero_phase=True) for each series of x:
 * batch × ceil(length / q) samples.
 */
export function decimate(x: RealBuffer, q: number, options: DecimateOptions = {}): RealBuffer {
  positiveInteger(q, 'decimate: q');
  const ftype = options.ftype ?? 'iir';
  if (ftype !== 'iir' && ftype !== 'fir')
    throw new TypeError(`decimate: ftype must be 'iir' or 'fir', got ${shownValue(ftype)}`);
  const zeroPhase = options.zeroPhase ?? true;
  if (typeof zeroPhase !== 'boolean')
    throw new TypeError(`decimate: zeroPhase must be a boolean, got ${shownValue(zeroPhase)}`);
  const n = options.n === undefined ? (ftype === 'iir' ? 8 : 20 * q) : positiveInteger(options.n, 'decimate: n');
  const { p, batch, length } = filterSeries(x, options.batch, 'decimate');
  const outLength = decimateLength(length, q);
  const stream = resolveStream(x.context, options.stream);
  if (ftype === 'fir') {
    const taps = firwin(n + 1, 1 / q, { window: 'hamming' });
    const plan: UpfirdnWindow = zeroPhase
      ? resamplePolyPlan(length, 1, q, taps)
      : { taps, up: 1, down: q, start: 0, outLength };
    const y = resampledOutput(x, batch * outLength, options.output, stream, 'decimate');
    enqueueUpfirdn(x, y, plan, batch, length, stream);
    return y;
  }
  const sos = cheby1(n, 0.05, 0.8 / q);
  // Every check before any allocation: sosfiltfilt's pad length, then the output.
  if (zeroPhase) resolvePadding(length, {}, sosfiltfiltPadlen(sos), 'decimate');
  const y = resampledOutput(x, batch * outLength, options.output, stream, 'decimate');
  const filtered = ws.scratch(x.context, stream, 'decimate-filtered', p, batch * length) as RealBuffer;
  const call = { batch, stream, output: filtered };
  if (zeroPhase) sosfiltfilt(sos, x, call);
  else sosfilt(sos, x, call);
  enqueueUpfirdn(filtered, y, { taps: Float64Array.of(1), up: 1, down: q, start: 0, outLength }, batch, length, stream);
  return y;
}
