/**
 * What a collective is given (its stream, count, reduction, root or peer) and the checks every
 * collective makes on it and on its buffers before NCCL sees them.
 */
import type { Context } from '../context.js';
import { DeviceBuffer } from '../memory/device-buffer.js';
import { describeValue } from '../resource.js';
import { Stream } from '../stream.js';
import { NcclRangeError } from './errors.js';
import type { NcclReduceOp } from './types.js';

/** Every collective is enqueued on a stream of the communicator's device. */
export interface CollectiveOptions {
  stream: Stream;
  /** Elements per rank (default: the whole send buffer, or as the collective defines it). */
  count?: number | undefined;
}

/** allReduce, reduce, reduceScatter: also the reduction (default 'sum'). */
export interface ReduceOptions extends CollectiveOptions {
  op?: NcclReduceOp | undefined;
}

/** broadcast and reduce: the rank whose data is sent, or which receives the result. */
export interface RootOptions {
  root: number;
}

/** send and recv: the rank on the other side. */
export interface PeerOptions {
  peer: number;
  stream: Stream;
  count?: number | undefined;
}

/** `value` as an integer from `min` to `max`, else an NcclRangeError naming `what`. */
export function checkInteger(value: unknown, min: number, max: number, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max)
    throw new NcclRangeError(`${what} must be an integer from ${min} to ${max}, got ${String(value)}`);
  return value;
}

/**
 * The stream of a collective's options: required, a live Stream, and of the rank's context (a
 * rank enqueues only on its own device). `ordinal` names that device in messages.
 */
export function collectiveStream(
  options: CollectiveOptions | PeerOptions,
  what: string,
  context: Context,
  ordinal: number,
): Stream {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${what}: options { stream, ... } are required, got ${describeValue(options)}`);
  const stream = options.stream;
  if (!(stream instanceof Stream))
    throw new TypeError(`${what}: options.stream must be a Stream of device ${ordinal}, got ${describeValue(stream)}`);
  stream.checkAlive();
  if (stream.context !== context)
    throw new Error(
      `${what}: stream "${stream.label}" belongs to ${stream.context.label}, not to device ${ordinal} of this rank`,
    );
  return stream;
}

/** Each buffer is device memory usable on `stream`, all of one dtype. */
export function checkBuffers(stream: Stream, what: string, ...buffers: DeviceBuffer[]): void {
  const first = buffers[0]!;
  for (const [i, b] of buffers.entries()) {
    // A brand check, not a shape check: an object with a checkUsable() and an address is not device memory.
    if (!(b instanceof DeviceBuffer)) throw new TypeError(`${what}: expected a DeviceBuffer, got ${describeValue(b)}`);
    b.checkUsable(stream);
    if (i > 0 && b.dtype !== first.dtype)
      throw new TypeError(`${what}: "${first.label}" holds ${first.dtype} but "${b.label}" holds ${b.dtype}`);
  }
}

/** A collective's element count: `fallback` when none is given, else a non-negative safe integer. */
export function checkCount(count: number | undefined, fallback: number, what: string): number {
  if (count === undefined) return fallback;
  return checkInteger(count, 0, Number.MAX_SAFE_INTEGER, `${what} count`);
}

/** `buffer` (the collective's `name` buffer) holds at least `elements` elements. */
export function checkFits(buffer: DeviceBuffer, elements: number, name: string, what: string): void {
  if (buffer.length < elements)
    throw new NcclRangeError(
      `${what}: ${name} buffer "${buffer.label}" holds ${buffer.length} elements, the collective needs ${elements}`,
    );
}
