/**
 * What the filtering operations (iir.ts, fir.ts, hilbert.ts) share: the call options, the result
 * with a filter state, and how the input's series and the output buffer are resolved.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { Stream } from '../runtime/stream.js';
import type { RealBuffer } from './buffers.js';
import { SignalLengthError } from './filter-errors.js';
import { expectBuffer, realSeries } from './launch.js';

/** What every filtering call takes: the series count, the stream, and where the output goes. */
export interface FilterCallOptions {
  /** Series in x (default 1), each x.length / batch samples. */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write y here (same dtype and length as x); default a new buffer. */
  output?: RealBuffer | undefined;
}

/** A filtered signal and the filter's final state (scipy's `(y, zf)`). */
export interface FilteredWithState {
  y: RealBuffer;
  zf: RealBuffer;
}

/** The output buffer: `options.output` checked, or a new one for work on `stream` (the call's, resolved at its entry). */
export function filterOutput(x: RealBuffer, options: FilterCallOptions, stream: Stream, what: string): RealBuffer {
  if (options.output !== undefined) {
    expectBuffer(options.output, x.dtype, x.length, `${what} output`);
    return options.output;
  }
  return DeviceBuffer.alloc(x.dtype, x.length, { stream, label: `${what} output` }) as RealBuffer;
}

/** The series of x, refusing an empty one (scipy filters nothing there; a zero-length launch is a mistake here). */
export function filterSeries(x: RealBuffer, batch: number | undefined, what: string): ReturnType<typeof realSeries> {
  const series = realSeries(x, batch, what);
  if (series.length === 0) throw new SignalLengthError(`${what}: x is empty`);
  return series;
}
