/**
 * scipy.signal.resample_poly on the GPU, batched over series: the rate changed by up/down through
 * upfirdn with a zero-phase low-pass FIR (by default firwin(20·max(up, down) + 1, 1 / max(up, down),
 * window=('kaiser', 5.0)) times up), the output delayed so its samples line up with the input's.
 * padtype 'constant' (zeros) only. The plan (taps, output window) is pure; the kernel is upfirdn's.
 */
import { resolveStream, type Stream } from '../runtime/stream.js';
import { shownValue } from '../runtime/value-checks.js';
import type { RealBuffer } from './buffers.js';
import { filterSeries } from './filter-call.js';
import { checkTaps, firwin } from './firwin.js';
import { enqueueUpfirdn, rateFactors, resampledOutput, upfirdnLength, type UpfirdnWindow } from './upfirdn.js';
import type { WindowSpec } from './window.js';

/** scipy's default window of resample_poly's low-pass filter. */
export const RESAMPLE_POLY_WINDOW: WindowSpec = ['kaiser', 5.0];

/** Options of resamplePoly. */
export interface ResamplePolyOptions {
  /** The low-pass filter's window (getWindow's specs; default ('kaiser', 5.0)), or the FIR taps themselves (scipy's array window). */
  window?: WindowSpec | ArrayLike<number> | undefined;
  /** How the signal is extended: 'constant' (default, the only one supported here). */
  padtype?: 'constant' | undefined;
  /** The constant of padtype 'constant': 0 (default, the only one supported here). */
  cval?: number | undefined;
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (x's dtype, batch × resamplePolyLength(length, up, down)); default a new buffer. Must not be x. */
  output?: RealBuffer | undefined;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Samples per series after resample_poly: ceil(length · up / down) with up/down reduced. */
export function resamplePolyLength(length: number, up: number, down: number): number {
  const g = gcd(up, down);
  return Math.ceil((length * (up / g)) / (down / g));
}

function isWindowSpec(window: WindowSpec | ArrayLike<number>): window is WindowSpec {
  return typeof window === 'string' || (Array.isArray(window) && typeof window[0] === 'string');
}

/**
 * What scipy's resample_poly computes for series of `length` samples: the factors reduced by
 * their gcd, the taps (designed, or the given ones, times up, zero-padded in front so that output
 * samples sit at the filter's centre), and the output window of upfirdn's result kept. When
 * up = down after reduction the plan copies (the one tap [1]), as scipy returns a copy.
 */
export function resamplePolyPlan(
  length: number,
  up: number,
  down: number,
  window: WindowSpec | ArrayLike<number> = RESAMPLE_POLY_WINDOW,
): UpfirdnWindow {
  const g = gcd(up, down);
  [up, down] = [up / g, down / g];
  if (up === 1 && down === 1) return { taps: Float64Array.of(1), up, down, start: 0, outLength: length };
  const outLength = resamplePolyLength(length, up, down);
  let h: Float64Array;
  let halfLen: number;
  if (isWindowSpec(window)) {
    const maxRate = Math.max(up, down);
    halfLen = 10 * maxRate;
    h = firwin(2 * halfLen + 1, 1 / maxRate, { window });
  } else {
    h = checkTaps(window, 'resamplePoly');
    halfLen = Math.floor((h.length - 1) / 2);
  }
  const prePad = down - (halfLen % down);
  const start = Math.floor((halfLen + prePad) / down);
  let postPad = 0;
  while (upfirdnLength(h.length + prePad + postPad, length, up, down) < outLength + start) postPad++;
  const taps = new Float64Array(prePad + h.length + postPad);
  for (let i = 0; i < h.length; i++) taps[prePad + i] = h[i]! * up;
  return { taps, up, down, start, outLength };
}

/**
 * scipy.signal.resample_poly(x, up, down, window=('kaiser', 5.0), padtype='constant') for each
 * series of x: batch × ceil(length · up / down) samples. With up = down (after reduction) the
 * output is a copy of x.
 */
export function resamplePoly(x: RealBuffer, up: number, down: number, options: ResamplePolyOptions = {}): RealBuffer {
  const factors = rateFactors(up, down, 'resamplePoly');
  if (options.padtype !== undefined && options.padtype !== 'constant')
    throw new TypeError(
      `resamplePoly: padtype ${shownValue(options.padtype)} is not supported; only 'constant' (zeros) is`,
    );
  if (options.cval !== undefined && options.cval !== 0)
    throw new TypeError(`resamplePoly: cval must be 0 (the only constant supported), got ${shownValue(options.cval)}`);
  const window = options.window ?? RESAMPLE_POLY_WINDOW;
  if (window === null || (typeof window !== 'string' && typeof window !== 'object'))
    throw new TypeError(`resamplePoly: window must be a window spec or an array of taps, got ${shownValue(window)}`);
  const { batch, length } = filterSeries(x, options.batch, 'resamplePoly');
  const plan = resamplePolyPlan(length, factors.up, factors.down, window);
  const stream = resolveStream(x.context, options.stream);
  const y = resampledOutput(x, batch * plan.outLength, options.output, stream, 'resamplePoly');
  enqueueUpfirdn(x, y, plan, batch, length, stream);
  return y;
}
