/**
 * Copies between buffers of different contexts (devices): what `buffer.copyFromPeer()` (and
 * `copyFrom()` given a buffer of another context) does. cuMemcpyPeerAsync between the buffers'
 * contexts: with peer access enabled (`device.enablePeerAccess()`, runtime/peer.ts) the copy goes
 * over NVLink/PCIe directly; without it, the driver stages it through host memory (correct,
 * slower): the same call works on every machine.
 */
import { cu } from '../../ffi/checked.js';
import { finishLegacyStream, hot } from '../cuda.js';
import { describeValue, expectResource } from '../resource.js';
import { resolveStream, Stream } from '../stream.js';
import type { Context, DeviceBuffer } from '../types.js';
import type { CopyOptions } from './copy-options.js';
import { dtypeInfo } from './dtype.js';

/**
 * One stream per context that only waits: a buffer of the other context than the copy's stream
 * records its use on it (recordUse takes streams of the buffer's own context), so a
 * stream-ordered free of that buffer waits for the copy.
 */
const fences = new WeakMap<Context, Stream>();
function fenceStream(context: Context): Stream {
  let s = fences.get(context);
  if (!s || s.disposed) {
    s = new Stream({ context, label: `peer-copy fence (${context.label})` });
    fences.set(context, s);
  }
  return s;
}

/** `buffer` (of another context than `copyStream`'s) must not be freed before the work on `copyStream` so far. */
function fenceForeignBuffer(buffer: DeviceBuffer, copyStream: Stream): void {
  const fence = fenceStream(buffer.context);
  const copyContext = copyStream.context;
  copyContext.makeCurrent();
  const events = copyContext.completionEvents;
  const event = events.acquire();
  const api = hot();
  try {
    api.eventRecord(event, copyStream.handle, fenceDuring, buffer);
    api.streamWaitEvent(fence.use(), event, 0, fenceDuring, buffer);
  } finally {
    events.recycle(event);
  }
  buffer.recordUse(fence);
}

/**
 * Device -> device from `source` (any context, same dtype) into `target` through
 * cuMemcpyPeerAsync, on `options.stream` (a stream of either buffer's device), or synchronously
 * on a default stream (the target's without one). Direct when peer access is enabled, staged through the host by the driver otherwise.
 */
export function copyFromPeer(target: DeviceBuffer, source: DeviceBuffer, options: CopyOptions = {}): void {
  target.checkUsable();
  expectResource<DeviceBuffer>(source, 'DeviceBuffer', `peer copy to "${target.label}" source`);
  source.checkUsable();
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`peer copy options must be an object, got ${describeValue(options)}`);
  if (source.dtype !== target.dtype)
    throw new TypeError(
      `copy from "${source.label}" (${source.dtype}) to "${target.label}" (${target.dtype}): element types differ`,
    );
  // Without a stream: the target's default stream, where the copy is synchronous.
  const stream = resolveStream(target.context, options.stream);
  if (!stream.isDefault) {
    expectResource(stream, Stream, `peer copy to "${target.label}" stream`);
    stream.checkAlive();
    if (stream.context !== target.context && stream.context !== source.context) {
      throw new Error(
        `peer copy "${source.label}" -> "${target.label}": stream "${stream.label}" belongs to ${stream.context.label}, neither buffer's device`,
      );
    }
  }
  const bytesPer = dtypeInfo(target.dtype).bytes;
  const offset = options.offset ?? 0;
  const sourceOffset = options.otherOffset ?? 0;
  for (const [v, name] of [
    [offset, 'offset'],
    [sourceOffset, 'otherOffset'],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0)
      throw new RangeError(`peer copy ${name} must be a non-negative integer, got ${String(v)}`);
  }
  const length = options.length ?? Math.min(target.length - offset, source.length - sourceOffset);
  if (!Number.isSafeInteger(length) || length <= 0)
    throw new RangeError(`peer copy length must be a positive integer, got ${String(length)}`);
  if (offset + length > target.length)
    throw new RangeError(
      `peer copy: [${offset}, ${offset + length}) is outside "${target.label}" (${target.length} elements)`,
    );
  if (sourceOffset + length > source.length)
    throw new RangeError(
      `peer copy: [${sourceOffset}, ${sourceOffset + length}) is outside "${source.label}" (${source.length} elements)`,
    );
  const bytes = length * bytesPer;
  const dst = target.address + offset * bytesPer;
  const src = source.address + sourceOffset * bytesPer;
  const same = target.context === source.context;
  if (same && dst < src + bytes && src < dst + bytes) {
    throw new RangeError(
      `copy "${source.label}" -> "${target.label}": the source bytes [${src}, ${src + bytes}) and destination bytes [${dst}, ${dst + bytes}) overlap; copy through a temporary buffer`,
    );
  }
  const during = `peer copy of ${bytes} bytes "${source.label}" (${source.context.label}) -> "${target.label}" (${target.context.label})`;
  const api = cu();
  if (!stream.isDefault) {
    api.cuMemcpyPeerAsync(dst, target.context.handle, src, source.context.handle, bytes, stream.use(), during);
    for (const b of [target, source]) {
      if (b.context === stream.context) b.recordUse(stream);
      else fenceForeignBuffer(b, stream);
    }
  } else {
    stream.use();
    api.cuMemcpyPeer(dst, target.context.handle, src, source.context.handle, bytes, during);
    // Like every copy on a default stream: done when it returns (cuMemcpyPeer need not wait for the DMA).
    finishLegacyStream(during);
  }
}

/** What a failed fence was doing, built only when it fails (src/ffi/checked-call.ts). */
const fenceDuring = (buffer: DeviceBuffer): string => `ordering the free of "${buffer.label}" after a peer copy`;
