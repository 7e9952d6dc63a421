/**
 * FIR filtering on the GPU, batched over series: scipy.signal.lfilter(b, a, x) with FIR taps
 * (a a single coefficient), with the state zi in and zf out for chunked filtering, and
 * scipy.signal.filtfilt(b, a, x) with scipy's default padding (odd, 3 × the tap count). Direct
 * convolution, one thread per output sample, float64 arithmetic for f32 and f64 series. Enqueue
 * only; every check runs before any GPU work.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { shownValue } from '../runtime/value-checks.js';
import { resolveStream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { complexCall, planesCall, refuseState, runPlanes, type ComplexCallOptions } from './iq.js';
import type { ComplexInput } from './samples.js';
import { checkTaps } from './firwin.js';
import { FilterCoefficientError } from './filter-errors.js';
import { resolvePadding, type PadOptions } from './filter-padding.js';
import { coefficientTable } from './filter-tables.js';
import { filterOutput, filterSeries, type FilterCallOptions, type FilteredWithState } from './filter-call.js';
import { signalWorkspace as ws } from './workspace.js';
import { elementwise, expectBuffer } from './launch.js';

/** Options of lfilter. */
export interface LfilterOptions extends FilterCallOptions {
  /** Initial state, scipy's layout (batch, ntaps − 1), same dtype as x; default zeros. Giving it makes lfilter return { y, zf }. */
  zi?: RealBuffer | undefined;
  /** Where the final state goes (same layout, not zi itself); default a new buffer. Only with zi. */
  zf?: RealBuffer | undefined;
}

/** Options of filtfilt: the call options and the padding (padtype 'odd', padlen 3 × the tap count by default). */
export interface FiltfiltOptions extends FilterCallOptions, PadOptions {}

/** b / a for an FIR denominator (a number, or an array of one); IIR denominators are sosfilt's. */
function firTaps(b: ArrayLike<number>, a: number | ArrayLike<number>, what: string): Float64Array {
  const taps = checkTaps(b, what);
  const denominator = typeof a === 'number' ? [a] : a;
  if (denominator === null || typeof denominator !== 'object' || denominator.length !== 1)
    throw new FilterCoefficientError(
      `${what}: only FIR filters are filtered here: a must be one number (got ${shownValue(a)}${denominator && typeof denominator === 'object' ? ` of length ${String(denominator.length)}` : ''}); filter IIR designs as second-order sections with sosfilt`,
    );
  const a0 = denominator[0];
  if (typeof a0 !== 'number' || !Number.isFinite(a0) || a0 === 0)
    throw new FilterCoefficientError(`${what}: a[0] must be a finite non-zero number, got ${shownValue(a0)}`);
  if (a0 !== 1) for (let i = 0; i < taps.length; i++) taps[i]! /= a0;
  return taps;
}

/**
 * scipy.signal.lfilter(b, a, x, axis=-1, zi) for FIR taps b (a is one number): y[t] = Σ b[k]·x[t−k] / a.
 * Returns y, or { y, zf } when `zi` is given. y must not be x.
 */
export function lfilter(
  b: ArrayLike<number>,
  a: number | ArrayLike<number>,
  x: ComplexInput,
  options?: ComplexCallOptions,
): ComplexBuffer;
export function lfilter(
  b: ArrayLike<number>,
  a: number | ArrayLike<number>,
  x: RealBuffer,
  options: LfilterOptions & { zi: RealBuffer },
): FilteredWithState;
export function lfilter(
  b: ArrayLike<number>,
  a: number | ArrayLike<number>,
  x: RealBuffer,
  options?: LfilterOptions,
): RealBuffer;
export function lfilter(
  b: ArrayLike<number>,
  a: number | ArrayLike<number>,
  x: RealBuffer | ComplexInput,
  options: LfilterOptions | ComplexCallOptions = {},
): RealBuffer | ComplexBuffer | FilteredWithState {
  const taps = firTaps(b, a, 'lfilter');
  if (complexCall(x, options, 'lfilter')) {
    // Real taps: the real and imaginary parts are filtered as series of their own.
    refuseState(options, 'lfilter');
    const call = planesCall(x as ComplexInput, options, 'lfilter', (n) => n);
    return runPlanes(call, 1, (planes, batch, out) =>
      lfilter(taps, 1, planes, { batch, stream: call.stream, output: out }),
    );
  }
  return lfilterReal(taps, x as RealBuffer, options as LfilterOptions);
}

function lfilterReal(taps: Float64Array, x: RealBuffer, options: LfilterOptions): RealBuffer | FilteredWithState {
  const { p, batch, length } = filterSeries(x, options.batch, 'lfilter');
  if (options.output === x)
    throw new TypeError('lfilter: output must not be x (each output sample reads earlier input samples)');
  const ntaps = taps.length;
  const zi = options.zi;
  if (zi !== undefined) {
    if (ntaps === 1) throw new TypeError('lfilter: a 1-tap filter has no state; leave zi out');
    expectBuffer(zi, p, batch * (ntaps - 1), 'lfilter zi');
  }
  if (options.zf !== undefined) {
    if (zi === undefined) throw new TypeError('lfilter: zf (where the final state goes) needs zi (the initial state)');
    if (options.zf === zi)
      throw new TypeError('lfilter: zf must not be zi (the final state is computed from it); alternate two buffers');
    expectBuffer(options.zf, p, batch * (ntaps - 1), 'lfilter zf');
  }
  const stream = resolveStream(x.context, options.stream);
  const y = filterOutput(x, options, stream, 'lfilter');
  const ctx = x.context;
  const table = coefficientTable(ctx, 'taps', taps, stream);
  ws.filterKernel(ctx, `fir_${p}`)(
    elementwise(batch * length, stream),
    x,
    y,
    table,
    zi ?? x,
    batch,
    length,
    ntaps,
    zi ? 1 : 0,
  );
  if (zi === undefined) return y;
  const zf = options.zf ?? (DeviceBuffer.alloc(p, batch * (ntaps - 1), { stream, label: 'lfilter zf' }) as RealBuffer);
  ws.filterKernel(ctx, `fir_state_${p}`)(
    elementwise(batch * (ntaps - 1), stream),
    x,
    table,
    zi,
    zf,
    batch,
    length,
    ntaps,
    1,
  );
  return { y, zf };
}

/**
 * scipy.signal.filtfilt(b, a, x, axis=-1, padtype='odd', padlen=None) for FIR taps (method 'pad'):
 * each series extended by padlen samples at both ends (default 3 × the tap count), filtered
 * forward and backward from steady state, the middle kept. SignalLengthError when a series is
 * not longer than padlen. y may be x.
 */
export function filtfilt(
  b: ArrayLike<number>,
  a: number | ArrayLike<number>,
  x: ComplexInput,
  options?: ComplexCallOptions & PadOptions,
): ComplexBuffer;
export function filtfilt(
  b: ArrayLike<number>,
  a: number | ArrayLike<number>,
  x: RealBuffer,
  options?: FiltfiltOptions,
): RealBuffer;
export function filtfilt(
  b: ArrayLike<number>,
  a: number | ArrayLike<number>,
  x: RealBuffer | ComplexInput,
  options: FiltfiltOptions | (ComplexCallOptions & PadOptions) = {},
): RealBuffer | ComplexBuffer {
  const taps = firTaps(b, a, 'filtfilt');
  if (complexCall(x, options, 'filtfilt')) {
    const call = planesCall(x as ComplexInput, options, 'filtfilt', (n) => n);
    // The padding is checked against the series before anything is enqueued.
    resolvePadding(call.input.length, options, 3 * taps.length, 'filtfilt');
    const pad = { padtype: options.padtype, padlen: options.padlen };
    return runPlanes(call, 1, (planes, batch, out) =>
      filtfilt(taps, 1, planes, { ...pad, batch, stream: call.stream, output: out }),
    );
  }
  return filtfiltReal(taps, x as RealBuffer, options as FiltfiltOptions);
}

function filtfiltReal(taps: Float64Array, x: RealBuffer, options: FiltfiltOptions): RealBuffer {
  const { p, batch, length } = filterSeries(x, options.batch, 'filtfilt');
  const { edge, code } = resolvePadding(length, options, 3 * taps.length, 'filtfilt');
  const stream = resolveStream(x.context, options.stream);
  const y = filterOutput(x, options, stream, 'filtfilt');
  const ctx = x.context;
  const extended = length + 2 * edge;
  const work = ws.scratch(ctx, stream, 'filtfilt', 'f64', batch * extended);
  const table = coefficientTable(ctx, 'taps', taps, stream);
  ws.filterKernel(ctx, `fir_forward_${p}`)(
    elementwise(batch * extended, stream),
    x,
    work,
    table,
    batch,
    length,
    taps.length,
    edge,
    code,
  );
  ws.filterKernel(ctx, `fir_backward_${p}`)(
    elementwise(batch * length, stream),
    work,
    y,
    table,
    batch,
    length,
    taps.length,
    edge,
  );
  return y;
}
