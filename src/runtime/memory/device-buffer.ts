import { cu } from '../../ffi/checked.js';
import { addressCell, cellAddress, finishLegacyStream, hot } from '../cuda.js';
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { checkAddress } from '../kernel-args.js';
import { checkOffset, type DType, dtypeInfo, type HostArray, hostElements } from './dtype.js';
import { checkDType } from './dtype-check.js';
import { forgetFinishedStreams } from './stream-uses.js';
import { HostBuffer } from './host-buffer.js';
import { MemoryPool } from './memory-pool.js';
import { checkLabel, describeValue, DisposedError, expectResource, isLive, Resource } from '../resource.js';
import { resolveStream, Stream } from '../stream.js';
import { freeNow, streamOrderedFree, type Allocation, type StreamOrderedAllocation } from './allocation.js';
import { copyRange, copyRangeScratch as r, type CopyOptions } from './copy-options.js';
import { memsetDevice, type MemsetOptions } from './device-memset.js';
import { checkHostSide, checkSameDtype, hostPointer, isHostBuffer, newHostArray, type HostSide } from './host-side.js';
import { copyFromPeer } from './peer-copy.js';
import { positiveInteger } from '../value-checks.js';

/** Options of `DeviceBuffer.alloc`: where the memory lives (Placement, or the stream's or pool's context; default device 0), how it is allocated (neither `stream` nor `pool`: cuMemAlloc) and a label. */
export interface DeviceBufferDescriptor extends Placement {
  /**
   * Allocate stream-ordered on this stream (cuMemAllocAsync / the pool's), freed on it when
   * disposed. On the context's default stream (what leaving it out means) the memory comes from
   * cuMemAlloc instead, unless `pool` is given.
   */
  stream?: Stream | undefined;
  /** Allocate from this memory pool (stream-ordered on `stream`, default the context's default stream). */
  pool?: MemoryPool | undefined;
  /** A name for errors, leak warnings and timelines. */
  label?: string | undefined;
}

/** Set by DeviceBuffer's static block: the one way outside the class to reach its protected constructor (see adoptDeviceMemory). */
let adopt: <T extends DType>(dtype: T, length: number, address: number, context: Context) => DeviceBuffer<T>;

/** Device memory holding `length` elements of `dtype`. Views share their parent's memory. */
export class DeviceBuffer<T extends DType = DType> extends Resource {
  readonly dtype: T;
  readonly length: number;
  readonly byteLength: number;
  /** The CUdeviceptr, as a number (device addresses fit a double). */
  readonly address: number;
  readonly context: Context;
  /** The buffer whose memory a view shares; views never free. */
  readonly parent: DeviceBuffer<T> | undefined;
  readonly #allocation: Allocation;
  /** Bytes per element, kept so copies need no dtype lookup per call. */
  readonly #elementBytes: number;

  protected constructor(
    dtype: T,
    length: number,
    address: number,
    context: Context,
    label: string | undefined,
    allocation: Allocation,
    parent?: DeviceBuffer<T>,
  ) {
    super(parent ? 'DeviceBuffer view' : 'DeviceBuffer', label, 'DeviceBuffer');
    this.dtype = dtype;
    this.length = length;
    this.#elementBytes = dtypeInfo(dtype).bytes;
    this.byteLength = length * this.#elementBytes;
    this.address = address;
    this.context = context;
    this.parent = parent;
    this.#allocation = allocation;
    if (allocation.free) this.track(allocation.free);
  }

  /**
   * Allocates device memory: stream-ordered on `stream` (or from `pool`), else (on the context's
   * default stream) cuMemAlloc, which may synchronize the device. The memory is not initialized.
   */
  static alloc<T extends DType>(dtype: T, length: number, descriptor: DeviceBufferDescriptor = {}): DeviceBuffer<T> {
    checkDType(dtype, 'DeviceBuffer.alloc');
    positiveInteger(length, 'DeviceBuffer length');
    checkDescriptor(descriptor, 'DeviceBuffer.alloc');
    if (descriptor.stream !== undefined) expectResource(descriptor.stream, Stream, 'DeviceBuffer.alloc stream');
    if (descriptor.pool !== undefined) expectResource(descriptor.pool, MemoryPool, 'DeviceBuffer.alloc pool');
    if (descriptor.pool && descriptor.stream && descriptor.pool.context !== descriptor.stream.context)
      throw new Error(
        `DeviceBuffer.alloc: pool "${descriptor.pool.label}" belongs to ${descriptor.pool.context.label}, stream "${descriptor.stream.label}" to ${descriptor.stream.context.label}`,
      );
    const bytes = length * dtypeInfo(dtype).bytes;
    const context = resolveContext(descriptor, descriptor.stream ?? descriptor.pool);
    context.makeCurrent();
    const label = descriptor.label;
    const stream = resolveStream(context, descriptor.stream);
    // Stream-ordered on any stream but the default one, where only a pool's memory is.
    const ordered = descriptor.pool !== undefined || !stream.isDefault;
    if (!ordered) {
      hot().memAlloc(addressCell, bytes, allocDuring, bytes, label);
    } else if (descriptor.pool) {
      hot().memAllocFromPoolAsync(addressCell, bytes, descriptor.pool.handle, stream.use(), allocDuring, bytes, label);
    } else {
      hot().memAllocAsync(addressCell, bytes, stream.use(), allocDuring, bytes, label);
    }
    const address = cellAddress();
    if (!ordered)
      return new DeviceBuffer(dtype, length, address, context, label, {
        free: () => freeNow(address, context),
        stream: undefined,
        usedOn: undefined,
      });
    const allocation: StreamOrderedAllocation = { free: undefined, stream, usedOn: undefined };
    allocation.free = streamOrderedFree(address, allocation, context);
    return new DeviceBuffer(dtype, length, address, context, label, allocation);
  }

  /** Allocates and uploads `data` (synchronously, or on `stream`). */
  static from<T extends DType>(dtype: T, data: HostSide<T>, descriptor: DeviceBufferDescriptor = {}): DeviceBuffer<T> {
    checkDType(dtype, 'DeviceBuffer.from');
    checkHostSide(data, 'DeviceBuffer.from data', undefined);
    const n = isHostBuffer(data) ? data.length : hostElements(dtype, data, 'DeviceBuffer.from');
    const buffer = DeviceBuffer.alloc(dtype, n, descriptor);
    buffer.write(data, { stream: descriptor.stream });
    return buffer;
  }

  /**
   * Wraps memory allocated elsewhere (CuPy, PyTorch, another allocator): never freed here
   * unless `free` is given, which dispose() then calls.
   */
  static wrap<T extends DType>(
    dtype: T,
    length: number,
    address: number,
    descriptor: Placement & { label?: string | undefined; free?: (() => void) | undefined } = {},
  ): DeviceBuffer<T> {
    checkDType(dtype, 'DeviceBuffer.wrap');
    positiveInteger(length, 'DeviceBuffer length');
    checkAddress(address, 'DeviceBuffer.wrap address', false);
    checkDescriptor(descriptor, 'DeviceBuffer.wrap');
    if (!Number.isSafeInteger(address + length * dtypeInfo(dtype).bytes))
      throw new RangeError(`DeviceBuffer.wrap: ${length} ${dtype} elements at ${address} run past 2^53`);
    if (descriptor.free !== undefined && typeof descriptor.free !== 'function')
      throw new TypeError(`DeviceBuffer.wrap free must be a function, got ${describeValue(descriptor.free)}`);
    return new DeviceBuffer(dtype, length, address, resolveContext(descriptor), descriptor.label, {
      free: descriptor.free,
      stream: undefined,
      usedOn: undefined,
    });
  }

  /** A sub-range sharing this buffer's memory. */
  /** A sub-range sharing this buffer's memory; its `parent` is the buffer that owns the memory (also for a view of a view). */
  view(offset: number, length = this.length - offset): DeviceBuffer<T> {
    this.checkUsable();
    checkOffset(offset, 'view offset');
    positiveInteger(length, 'view length');
    if (offset + length > this.length)
      throw new RangeError(`view [${offset}, ${offset + length}) is outside "${this.label}" (${this.length} elements)`);
    const bytes = dtypeInfo(this.dtype).bytes;
    return new DeviceBuffer(
      this.dtype,
      length,
      this.address + offset * bytes,
      this.context,
      `${this.label}[${offset}:${offset + length}]`,
      { free: undefined, stream: undefined, usedOn: undefined },
      this.parent ?? this,
    );
  }

  /**
   * Notes that work on `stream` (null: the context's default stream) uses this memory, so a
   * stream-ordered free waits for it (PyTorch's record_stream). tscuda calls it for its own
   * launches, copies and FFTs; call it for work it cannot see (a raw address handed to another library).
   */
  recordUse(stream: Stream | null): void {
    const root = this.parent ?? this;
    const a = root.#allocation;
    if (a.stream === undefined) return;
    // null: the context's default stream, as a `{ stream }` left out means elsewhere.
    const user = resolveStream(this.context, stream ?? undefined);
    if (a.stream === user) return;
    if (!isLive<Stream>(user, 'Stream')) expectResource(user, Stream, `"${this.label}" recordUse(stream)`);
    const used = (a.usedOn ??= new Set());
    if (used.size >= 16 && !used.has(user)) forgetFinishedStreams(used);
    used.add(user);
  }

  /** Guards every use: alive (and its parent too), and belonging to the context the stream runs in. */
  checkUsable(stream?: Stream): void {
    this.assertAlive();
    if (this.parent?.disposed)
      throw new DisposedError(
        `DeviceBuffer view "${this.label}" cannot be used: its buffer "${this.parent.label}" was disposed`,
      );
    if (stream !== undefined) {
      if (!isLive<Stream>(stream, 'Stream')) expectResource(stream, Stream, `stream for "${this.label}"`);
      if (stream.context !== this.context)
        throw new Error(
          `buffer "${this.label}" belongs to ${this.context.label}, not to ${stream.context.label} of stream "${stream.label}"`,
        );
    }
  }

  /**
   * Host -> device. From a HostBuffer with a stream the copy is truly asynchronous. Without a
   * stream the bytes are on the device when it returns (see {@link finishLegacyStream}).
   */
  write(source: HostSide<T>, options: CopyOptions = NO_OPTIONS): this {
    const stream = resolveStream(this.context, options?.stream);
    this.checkUsable(stream);
    const pinned = isHostBuffer(source);
    if (!pinned) checkHostSide(source, 'write to', this);
    const bytes = this.#elementBytes;
    copyRange(
      this,
      bytes,
      options,
      pinned ? checkSameDtype(this, source).length : hostElements(this.dtype, source, 'write'),
      'write',
    );
    const dst = this.address + r.offset * bytes;
    const src = pinned ? source.address + r.sourceOffset * bytes : hostPointer(source, r.sourceOffset * bytes, r.bytes);
    if (stream.isDefault) {
      stream.use();
      cu().cuMemcpyHtoD(dst, src, r.bytes, writeDuring, r.bytes, this);
      // From pageable memory cuMemcpyHtoD returns once the bytes are staged, before the DMA lands.
      if (!pinned) finishLegacyStream(writeDuring, r.bytes, this);
    } else {
      hot().memcpyHtoDAsync(dst, src, r.bytes, stream.use(), writeDuring, r.bytes, this);
      this.recordUse(stream);
      if (pinned) source.recordUse(stream);
    }
    return this;
  }

  /** Device -> host into `target` (allocated when omitted). With a stream and a HostBuffer, asynchronous. */
  read(): HostArray<T>;
  read<Target extends HostSide<T>>(target: Target, options?: CopyOptions): Target;
  read<Target extends HostSide<T>>(target?: Target, options: CopyOptions = NO_OPTIONS): Target {
    const stream = resolveStream(this.context, options?.stream);
    this.checkUsable(stream);
    const pinned = isHostBuffer(target);
    if (target !== undefined && !pinned) checkHostSide(target, 'read from', this);
    const bytes = this.#elementBytes;
    const dst = (target ?? newHostArray(this.dtype, this.length)) as Target;
    copyRange(
      this,
      bytes,
      options,
      pinned ? checkSameDtype(this, target).length : hostElements(this.dtype, dst as ArrayBufferView, 'read'),
      'read',
    );
    const src = this.address + r.offset * bytes;
    const hostPtr = pinned
      ? target.address + r.sourceOffset * bytes
      : hostPointer(dst as ArrayBufferView, r.sourceOffset * bytes, r.bytes);
    if (stream.isDefault) {
      stream.use();
      cu().cuMemcpyDtoH(hostPtr, src, r.bytes, readDuring, r.bytes, this);
    } else {
      hot().memcpyDtoHAsync(hostPtr, src, r.bytes, stream.use(), readDuring, r.bytes, this);
      this.recordUse(stream);
      if (pinned) target.recordUse(stream);
    }
    return dst;
  }

  /** Device -> device from `source` (same dtype). Without a stream, done when it returns. */
  copyFrom(source: DeviceBuffer<T>, options: CopyOptions = NO_OPTIONS): this {
    // A buffer of another context (another device): cuMemcpyPeerAsync (memory/peer-copy.ts).
    if (source instanceof DeviceBuffer && source.context !== this.context) return this.copyFromPeer(source, options);
    const stream = resolveStream(this.context, options?.stream);
    this.checkUsable(stream);
    if (!isLive<DeviceBuffer>(source, 'DeviceBuffer'))
      expectResource<DeviceBuffer>(source, 'DeviceBuffer', `copy to "${this.label}" source`);
    source.checkUsable(stream);
    if (source.dtype !== this.dtype)
      throw new TypeError(
        `copy from "${source.label}" (${source.dtype}) to "${this.label}" (${this.dtype}): element types differ`,
      );
    const bytes = this.#elementBytes;
    copyRange(this, bytes, options, source.length, 'copy');
    const dst = this.address + r.offset * bytes;
    const src = source.address + r.sourceOffset * bytes;
    // cuMemcpyDtoD has no memmove semantics: overlapping ranges (a view of the same memory) would corrupt the copy.
    if (dst < src + r.bytes && src < dst + r.bytes) {
      throw new RangeError(
        `copy "${source.label}" -> "${this.label}": the source bytes [${src}, ${src + r.bytes}) and destination bytes [${dst}, ${dst + r.bytes}) overlap; copy through a temporary buffer`,
      );
    }
    if (stream.isDefault) {
      stream.use();
      cu().cuMemcpyDtoD(dst, src, r.bytes, copyDuring, r.bytes, source, this);
      // cuMemcpyDtoD does not wait for the copy: finish it before returning (see finishLegacyStream).
      finishLegacyStream(copyDuring, r.bytes, source, this);
    } else {
      cu().cuMemcpyDtoDAsync(dst, src, r.bytes, stream.use(), copyDuring, r.bytes, source, this);
      this.recordUse(stream);
      source.recordUse(stream);
    }
    return this;
  }

  /**
   * Device -> device from a buffer of any context (same dtype) through cuMemcpyPeerAsync, on
   * `stream` (a stream of either buffer's device), or synchronously without one. Direct when
   * peer access is enabled (`device.enablePeerAccess()`), staged through the host by the driver otherwise.
   */
  copyFromPeer(source: DeviceBuffer<T>, options: CopyOptions = {}): this {
    copyFromPeer(this, source, options);
    return this;
  }

  /**
   * Sets every byte/halfword/word to `value` (8, 16 or 32 bits wide; default: the element size,
   * and for 8-byte elements only values whose two 32-bit halves are equal, such as 0). Without a
   * stream, done when it returns.
   */
  memset(value: number, options: MemsetOptions = {}): this {
    memsetDevice(this, value, resolveStream(this.context, options?.stream), options?.width);
    return this;
  }

  protected releaseNative(): void {
    this.#allocation.free?.();
  }

  static {
    adopt = <T extends DType>(dtype: T, length: number, address: number, context: Context): DeviceBuffer<T> =>
      new DeviceBuffer(dtype, length, address, context, undefined, {
        free: undefined,
        stream: undefined,
        usedOn: undefined,
      });
  }
}

/**
 * Internal (not exported by the package): a buffer over memory an allocator of tscuda owns and
 * has validated (`dtype` known, `length` a positive integer, the range inside its block). It is
 * wrap() without the argument checks, which cost as much as the allocation itself.
 */
export function adoptDeviceMemory<T extends DType>(
  dtype: T,
  length: number,
  address: number,
  context: Context,
): DeviceBuffer<T> {
  return adopt(dtype, length, address, context);
}

const NO_OPTIONS: CopyOptions = Object.freeze({});

// What a failed call was doing, built only when it fails (src/ffi/checked-call.ts).
const allocDuring = (bytes: number, label: string | undefined): string =>
  `allocating ${bytes} bytes${label ? ` for "${label}"` : ''}`;
const writeDuring = (bytes: number, buffer: DeviceBuffer): string => `write of ${bytes} bytes to "${buffer.label}"`;
const readDuring = (bytes: number, buffer: DeviceBuffer): string => `read of ${bytes} bytes from "${buffer.label}"`;
const copyDuring = (bytes: number, source: DeviceBuffer, target: DeviceBuffer): string =>
  `copy of ${bytes} bytes "${source.label}" -> "${target.label}"`;

/** Rejects a descriptor that is not an object (a number where `{ stream }` belongs, say). */
function checkDescriptor(descriptor: unknown, what: string): void {
  if (typeof descriptor !== 'object' || descriptor === null)
    throw new TypeError(`${what} takes a descriptor object, got ${describeValue(descriptor)}`);
  checkLabel((descriptor as { label?: unknown }).label, what);
}

/** The class's instance type under the name types.ts gives it (see there: why). */
type DeviceBufferInstance = DeviceBuffer;
declare module '../types.js' {
  interface DeviceBuffer extends DeviceBufferInstance {}
}
