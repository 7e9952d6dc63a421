/**
 * Peer access between devices, added to Device and DeviceBuffer's prototypes (so device.ts and
 * device-buffer.ts import nothing of it; the runtime's entry point loads this file):
 *
 * - `device.canAccessPeer(other)`: cuDeviceCanAccessPeer (false for the device itself: there is
 *   nothing to enable).
 * - `device.enablePeerAccess(other)`: this device's kernels and copies may then read and write
 *   `other`'s memory: cuCtxEnablePeerAccess for memory from cuMemAlloc, and cuMemPoolSetAccess
 *   on `other`'s default and current memory pools (and any pools given) for stream-ordered memory,
 *   which cuCtxEnablePeerAccess does not cover.
 * - `buffer.copyFromPeer(source, { stream })`: cuMemcpyPeerAsync between the buffers' contexts.
 *   With peer access enabled the copy goes over NVLink/PCIe directly; without it, the driver
 *   stages it through host memory (correct, slower): the same call works on every machine.
 */
import { checkStatus, statusError } from '../ffi/checked.js';
import { CUmemAccess_flags, CUmemLocationType, CUresult, type CUmemoryPool } from '../ffi/generated/types.js';
import { driverApi, finishLegacyStream, hot, outValue } from './cuda.js';
import type { Context } from './context.js';
import { Device } from './device.js';
import { DeviceBuffer, type CopyOptions } from './memory/device-buffer.js';
import { dtypeInfo, type DType } from './memory/dtype.js';
import { MemoryPool } from './memory/memory-pool.js';
import { describeValue, expectResource } from './resource.js';
import { Stream } from './stream.js';

/** What enablePeerAccess is told. */
export interface PeerAccessOptions {
  /** Memory pools of `other` to open to this device as well (its default and current pools always are). */
  pools?: readonly MemoryPool[] | undefined;
}

/** The driver says these two devices cannot reach each other's memory directly (copies still work, staged through the host). */
export class PeerAccessUnsupportedError extends Error {
  override readonly name = 'PeerAccessUnsupportedError';
}

declare module './device.js' {
  interface Device {
    /** Whether this device can access `other`'s memory directly (cuDeviceCanAccessPeer); false for itself. */
    canAccessPeer(other: Device | number): boolean;
    /**
     * Lets this device access `other`'s memory: cuCtxEnablePeerAccess (idempotent) and
     * cuMemPoolSetAccess(read-write for this device) on `other`'s default and current pools and
     * `options.pools`. Throws PeerAccessUnsupportedError where canAccessPeer is false; a no-op for itself.
     */
    enablePeerAccess(other: Device | number, options?: PeerAccessOptions): void;
    /** Undoes cuCtxEnablePeerAccess (pools keep their access). Idempotent. */
    disablePeerAccess(other: Device | number): void;
  }
}

declare module './memory/device-buffer.js' {
  interface DeviceBuffer<T extends DType> {
    /**
     * Device -> device from a buffer of any context (same dtype) through cuMemcpyPeerAsync, on
     * `stream` (a stream of either buffer's device), or synchronously without one. Direct when
     * peer access is enabled, staged through the host by the driver otherwise.
     */
    copyFromPeer(source: DeviceBuffer<T>, options?: CopyOptions): this;
  }
}

function toDevice(d: Device | number, what: string): Device {
  if (typeof d === 'number') return Device.get(d);
  if (!(d instanceof Device)) throw new TypeError(`${what} must be a Device or an ordinal, got ${describeValue(d)}`);
  return d;
}

Device.prototype.canAccessPeer = function (this: Device, other: Device | number): boolean {
  const peer = toDevice(other, 'canAccessPeer(other)');
  if (peer === this) return false;
  const cell: [number | null] = [0];
  checkStatus('driver', driverApi().cuDeviceCanAccessPeer(cell, this.handle, peer.handle), 'cuDeviceCanAccessPeer', `device ${this.ordinal} -> ${peer.ordinal}`);
  return outValue(cell, 'cuDeviceCanAccessPeer') === 1;
};

/** cuMemPoolSetAccess: `device` may read and write what `pool` allocates. */
function openPool(pool: CUmemoryPool, device: Device, during: string): void {
  const desc = { location: { type: CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: device.handle }, flags: CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
  checkStatus('driver', driverApi().cuMemPoolSetAccess(pool, desc as never, 1), 'cuMemPoolSetAccess', during);
}

Device.prototype.enablePeerAccess = function (this: Device, other: Device | number, options: PeerAccessOptions = {}): void {
  const peer = toDevice(other, 'enablePeerAccess(other)');
  if (peer === this) return;
  if (!this.canAccessPeer(peer)) {
    throw new PeerAccessUnsupportedError(
      `device ${this.ordinal} cannot access device ${peer.ordinal}'s memory directly (cuDeviceCanAccessPeer is 0): peer copies still work, staged through the host`,
    );
  }
  const pools = options.pools ?? [];
  for (const [i, p] of pools.entries()) {
    expectResource(p, MemoryPool, `enablePeerAccess pools[${i}]`);
    if (p.device !== peer) throw new Error(`enablePeerAccess(${peer.ordinal}): pool "${p.label}" belongs to device ${p.device.ordinal}`);
  }
  const during = `device ${this.ordinal} -> device ${peer.ordinal}`;
  const peerContext = peer.context;
  this.context.makeCurrent();
  const status = driverApi().cuCtxEnablePeerAccess(peerContext.handle, 0);
  if (status !== 0 && status !== CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) throw statusError('driver', status, 'cuCtxEnablePeerAccess', during);
  const api = driverApi();
  const cell: [CUmemoryPool | null] = [null];
  checkStatus('driver', api.cuDeviceGetDefaultMemPool(cell, peer.handle), 'cuDeviceGetDefaultMemPool', during);
  const handles = new Set<CUmemoryPool>([outValue(cell, 'cuDeviceGetDefaultMemPool')]);
  checkStatus('driver', api.cuDeviceGetMemPool(cell, peer.handle), 'cuDeviceGetMemPool', during);
  handles.add(outValue(cell, 'cuDeviceGetMemPool'));
  for (const p of pools) handles.add(p.handle);
  for (const h of handles) openPool(h, this, during);
};

Device.prototype.disablePeerAccess = function (this: Device, other: Device | number): void {
  const peer = toDevice(other, 'disablePeerAccess(other)');
  if (peer === this) return;
  this.context.makeCurrent();
  const status = driverApi().cuCtxDisablePeerAccess(peer.context.handle);
  if (status !== 0 && status !== CUresult.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
    throw statusError('driver', status, 'cuCtxDisablePeerAccess', `device ${this.ordinal} -> device ${peer.ordinal}`);
};

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
    checkStatus('driver', api.eventRecord(event, copyStream.handle), 'cuEventRecord', `ordering the free of "${buffer.label}" after a peer copy`);
    checkStatus('driver', api.streamWaitEvent(fence.use(), event, 0), 'cuStreamWaitEvent', `ordering the free of "${buffer.label}" after a peer copy`);
  } finally {
    events.recycle(event);
  }
  buffer.recordUse(fence);
}

DeviceBuffer.prototype.copyFromPeer = function <T extends DType>(this: DeviceBuffer<T>, source: DeviceBuffer<T>, options: CopyOptions = {}): DeviceBuffer<T> {
  this.checkUsable();
  expectResource<DeviceBuffer>(source, 'DeviceBuffer', `peer copy to "${this.label}" source`);
  source.checkUsable();
  if (typeof options !== 'object' || options === null) throw new TypeError(`peer copy options must be an object, got ${describeValue(options)}`);
  if (source.dtype !== this.dtype) throw new TypeError(`copy from "${source.label}" (${source.dtype}) to "${this.label}" (${this.dtype}): element types differ`);
  const stream = options.stream;
  if (stream !== undefined) {
    expectResource(stream, Stream, `peer copy to "${this.label}" stream`);
    stream.checkAlive();
    if (stream.context !== this.context && stream.context !== source.context) {
      throw new Error(`peer copy "${source.label}" -> "${this.label}": stream "${stream.label}" belongs to ${stream.context.label}, neither buffer's device`);
    }
  }
  const bytesPer = dtypeInfo(this.dtype).bytes;
  const offset = options.offset ?? 0;
  const sourceOffset = options.otherOffset ?? 0;
  for (const [v, name] of [
    [offset, 'offset'],
    [sourceOffset, 'otherOffset'],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`peer copy ${name} must be a non-negative integer, got ${String(v)}`);
  }
  const length = options.length ?? Math.min(this.length - offset, source.length - sourceOffset);
  if (!Number.isSafeInteger(length) || length <= 0) throw new RangeError(`peer copy length must be a positive integer, got ${String(length)}`);
  if (offset + length > this.length) throw new RangeError(`peer copy: [${offset}, ${offset + length}) is outside "${this.label}" (${this.length} elements)`);
  if (sourceOffset + length > source.length)
    throw new RangeError(`peer copy: [${sourceOffset}, ${sourceOffset + length}) is outside "${source.label}" (${source.length} elements)`);
  const bytes = length * bytesPer;
  const dst = this.address + offset * bytesPer;
  const src = source.address + sourceOffset * bytesPer;
  const same = this.context === source.context;
  if (same && dst < src + bytes && src < dst + bytes) {
    throw new RangeError(
      `copy "${source.label}" -> "${this.label}": the source bytes [${src}, ${src + bytes}) and destination bytes [${dst}, ${dst + bytes}) overlap; copy through a temporary buffer`,
    );
  }
  const during = `peer copy of ${bytes} bytes "${source.label}" (${source.context.label}) -> "${this.label}" (${this.context.label})`;
  const api = driverApi();
  if (stream) {
    const status = api.cuMemcpyPeerAsync(dst, this.context.handle, src, source.context.handle, bytes, stream.use());
    if (status !== 0) throw statusError('driver', status, 'cuMemcpyPeerAsync', during);
    for (const b of [this, source] as DeviceBuffer[]) {
      if (b.context === stream.context) b.recordUse(stream);
      else fenceForeignBuffer(b, stream);
    }
  } else {
    this.context.makeCurrent();
    let status = api.cuMemcpyPeer(dst, this.context.handle, src, source.context.handle, bytes);
    // Like every stream-less copy: done when it returns (cuMemcpyPeer need not wait for the DMA).
    if (status === 0) status = finishLegacyStream();
    if (status !== 0) throw statusError('driver', status, 'cuMemcpyPeer', during);
  }
  return this;
};
