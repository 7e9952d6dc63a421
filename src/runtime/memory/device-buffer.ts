import { statusError } from '../../ffi/checked.js';
import type { CUstream } from '../../ffi/generated/types.js';
import { addressCell, cellAddress, driverApi, finishLegacyStream, hot } from '../cuda.js';
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { checkAddress } from '../kernel-args.js';
import { checkOffset, type DType, dtypeInfo, type HostArray, hostElements } from './dtype.js';
import { checkDType } from './dtype-check.js';
import { forgetFinishedStreams } from './stream-uses.js';
import { HostBuffer } from './host-buffer.js';
import { MemoryPool } from './memory-pool.js';
import { checkLabel, describeValue, DisposedError, expectResource, isLive, Resource } from '../resource.js';
import { Stream } from '../stream.js';
import { freeNow, streamOrderedFree, type Allocation } from './allocation.js';
import type { CopyOptions } from './copy-options.js';
import { copyFromPeer } from './peer-copy.js';
import { positiveInteger } from '../value-checks.js';

/** Options of `DeviceBuffer.alloc`: where the memory lives (Placement, or the stream's or pool's context; default device 0), how it is allocated (neither `stream` nor `pool`: cuMemAlloc) and a label. */
export interface DeviceBufferDescriptor extends Placement {
  /** Allocate stream-ordered on this stream (cuMemAllocAsync / the pool's), freed on it when disposed. */
  stream?: Stream | undefined;
  /** Allocate from this memory pool (stream-ordered; needs `stream`, or uses the pool's default stream). */
  pool?: MemoryPool | undefined;
  /** A name for errors, leak warnings and timelines. */
  label?: string | undefined;
}

type HostSide<T extends DType> = HostArray<T> | HostBuffer<T>;

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
   * Allocates device memory: stream-ordered on `stream` (or from `pool`), else cuMemAlloc, which
   * may synchronize the device. The memory is not initialized.
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
    let status: number;
    let call: string;
    let sh: CUstream | null = null;
    if (descriptor.pool) {
      sh = descriptor.stream ? descriptor.stream.use() : null;
      call = 'cuMemAllocFromPoolAsync';
      status = hot().memAllocFromPoolAsync(addressCell, bytes, descriptor.pool.handle, sh);
    } else if (descriptor.stream) {
      sh = descriptor.stream.use();
      call = 'cuMemAllocAsync';
      status = hot().memAllocAsync(addressCell, bytes, sh);
    } else {
      call = 'cuMemAlloc';
      status = hot().memAlloc(addressCell, bytes);
    }
    if (status !== 0)
      throw statusError('driver', status, call, `allocating ${bytes} bytes${label ? ` for "${label}"` : ''}`);
    const address = cellAddress();
    if (!(descriptor.pool || descriptor.stream))
      return new DeviceBuffer(dtype, length, address, context, label, {
        free: () => freeNow(address, context),
        stream: undefined,
        usedOn: undefined,
      });
    const allocation: Allocation = { free: undefined, stream: descriptor.stream ?? null, usedOn: undefined };
    allocation.free = streamOrderedFree(address, allocation, context);
    return new DeviceBuffer(dtype, length, address, context, label, allocation);
  }

  /** Allocates and uploads `data` (synchronously, or on `stream`). */
  static from<T extends DType>(dtype: T, data: HostSide<T>, descriptor: DeviceBufferDescriptor = {}): DeviceBuffer<T> {
    checkDType(dtype, 'DeviceBuffer.from');
    checkHostSide(data, 'DeviceBuffer.from data', undefined);
    const n = isHostBuffer(data) ? data.length : hostElements(dtype, data, 'DeviceBuffer.from');
    const buffer = DeviceBuffer.alloc(dtype, n, descriptor);
    buffer.write(data, descriptor.stream ? { stream: descriptor.stream } : {});
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
   * Notes that work on `stream` uses this memory, so a stream-ordered free waits for it (PyTorch's
   * record_stream). tscuda calls it for its own launches, copies and FFTs; call it for work it
   * cannot see (a raw address handed to another library).
   */
  recordUse(stream: Stream | null): void {
    const root = this.parent ?? this;
    const a = root.#allocation;
    if (a.stream === undefined || a.stream === stream) return;
    if (stream !== null && !isLive<Stream>(stream, 'Stream'))
      expectResource(stream, Stream, `"${this.label}" recordUse(stream)`);
    const used = (a.usedOn ??= new Set());
    if (used.size >= 16 && !used.has(stream)) forgetFinishedStreams(used);
    used.add(stream);
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

  /** Validates a copy range into the module's scratch `r` (copies stay allocation-free). */
  #range(options: CopyOptions, otherLength: number, what: string): void {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`${what} options must be an object, got ${describeValue(options)}`);
    const offset = options.offset ?? 0;
    const sourceOffset = options.otherOffset ?? 0;
    if (offset !== 0) checkOffset(offset, `${what} offset`);
    if (sourceOffset !== 0) checkOffset(sourceOffset, `${what} otherOffset`);
    const length = options.length ?? Math.min(this.length - offset, otherLength - sourceOffset);
    if (!(Number.isSafeInteger(length) && length > 0)) positiveInteger(length, `${what} length`);
    if (offset + length > this.length)
      throw new RangeError(
        `${what}: [${offset}, ${offset + length}) is outside "${this.label}" (${this.length} elements)`,
      );
    if (sourceOffset + length > otherLength)
      throw new RangeError(
        `${what}: [${sourceOffset}, ${sourceOffset + length}) is outside the other side (${otherLength} elements)`,
      );
    r.offset = offset;
    r.sourceOffset = sourceOffset;
    r.length = length;
    r.bytes = length * this.#elementBytes;
  }

  /**
   * Host -> device. From a HostBuffer with a stream the copy is truly asynchronous. Without a
   * stream the bytes are on the device when it returns (see {@link finishLegacyStream}).
   */
  write(source: HostSide<T>, options: CopyOptions = NO_OPTIONS): this {
    this.checkUsable(options?.stream);
    const pinned = isHostBuffer(source);
    if (!pinned) checkHostSide(source, 'write to', this);
    const bytes = this.#elementBytes;
    this.#range(
      options,
      pinned ? checkSameDtype(this, source).length : hostElements(this.dtype, source, 'write'),
      'write',
    );
    const dst = this.address + r.offset * bytes;
    const src = pinned ? source.address + r.sourceOffset * bytes : hostPointer(source, r.sourceOffset * bytes, r.bytes);
    let status: number;
    const stream = options.stream;
    if (stream) {
      status = hot().memcpyHtoDAsync(dst, src, r.bytes, stream.use());
      this.recordUse(stream);
      if (pinned) source.recordUse(stream);
    } else {
      this.context.makeCurrent();
      status = driverApi().cuMemcpyHtoD(dst, src, r.bytes);
      // From pageable memory cuMemcpyHtoD returns once the bytes are staged, before the DMA lands.
      if (status === 0 && !pinned) status = finishLegacyStream();
    }
    if (status !== 0)
      throw statusError(
        'driver',
        status,
        stream ? 'cuMemcpyHtoDAsync' : 'cuMemcpyHtoD',
        `write of ${r.bytes} bytes to "${this.label}"`,
      );
    return this;
  }

  /** Device -> host into `target` (allocated when omitted). With a stream and a HostBuffer, asynchronous. */
  read(): HostArray<T>;
  read<Target extends HostSide<T>>(target: Target, options?: CopyOptions): Target;
  read<Target extends HostSide<T>>(target?: Target, options: CopyOptions = NO_OPTIONS): Target {
    this.checkUsable(options?.stream);
    const pinned = isHostBuffer(target);
    if (target !== undefined && !pinned) checkHostSide(target, 'read from', this);
    const bytes = this.#elementBytes;
    const dst = (target ?? newHostArray(this.dtype, this.length)) as Target;
    this.#range(
      options,
      pinned ? checkSameDtype(this, target).length : hostElements(this.dtype, dst as ArrayBufferView, 'read'),
      'read',
    );
    const src = this.address + r.offset * bytes;
    const hostPtr = pinned
      ? target.address + r.sourceOffset * bytes
      : hostPointer(dst as ArrayBufferView, r.sourceOffset * bytes, r.bytes);
    let status: number;
    const stream = options.stream;
    if (stream) {
      status = hot().memcpyDtoHAsync(hostPtr, src, r.bytes, stream.use());
      this.recordUse(stream);
      if (pinned) target.recordUse(stream);
    } else {
      this.context.makeCurrent();
      status = driverApi().cuMemcpyDtoH(hostPtr, src, r.bytes);
    }
    if (status !== 0)
      throw statusError(
        'driver',
        status,
        stream ? 'cuMemcpyDtoHAsync' : 'cuMemcpyDtoH',
        `read of ${r.bytes} bytes from "${this.label}"`,
      );
    return dst;
  }

  /** Device -> device from `source` (same dtype). Without a stream, done when it returns. */
  copyFrom(source: DeviceBuffer<T>, options: CopyOptions = NO_OPTIONS): this {
    // A buffer of another context (another device): cuMemcpyPeerAsync (memory/peer-copy.ts).
    if (source instanceof DeviceBuffer && source.context !== this.context) return this.copyFromPeer(source, options);
    this.checkUsable(options?.stream);
    if (!isLive<DeviceBuffer>(source, 'DeviceBuffer'))
      expectResource<DeviceBuffer>(source, 'DeviceBuffer', `copy to "${this.label}" source`);
    source.checkUsable(options.stream);
    if (source.dtype !== this.dtype)
      throw new TypeError(
        `copy from "${source.label}" (${source.dtype}) to "${this.label}" (${this.dtype}): element types differ`,
      );
    const info = dtypeInfo(this.dtype);
    this.#range(options, source.length, 'copy');
    const dst = this.address + r.offset * info.bytes;
    const src = source.address + r.sourceOffset * info.bytes;
    // cuMemcpyDtoD has no memmove semantics: overlapping ranges (a view of the same memory) would corrupt the copy.
    if (dst < src + r.bytes && src < dst + r.bytes) {
      throw new RangeError(
        `copy "${source.label}" -> "${this.label}": the source bytes [${src}, ${src + r.bytes}) and destination bytes [${dst}, ${dst + r.bytes}) overlap; copy through a temporary buffer`,
      );
    }
    let status: number;
    if (options.stream) {
      status = driverApi().cuMemcpyDtoDAsync(dst, src, r.bytes, options.stream.use());
      this.recordUse(options.stream);
      source.recordUse(options.stream);
    } else {
      this.context.makeCurrent();
      status = driverApi().cuMemcpyDtoD(dst, src, r.bytes);
      // cuMemcpyDtoD does not wait for the copy: finish it before returning (see finishLegacyStream).
      if (status === 0) status = finishLegacyStream();
    }
    if (status !== 0)
      throw statusError(
        'driver',
        status,
        options.stream ? 'cuMemcpyDtoDAsync' : 'cuMemcpyDtoD',
        `copy of ${r.bytes} bytes "${source.label}" -> "${this.label}"`,
      );
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
  memset(value: number, options: { stream?: Stream | undefined; width?: 8 | 16 | 32 | undefined } = {}): this {
    this.checkUsable(options?.stream);
    const bytes = dtypeInfo(this.dtype).bytes;
    const width = options.width ?? (bytes === 1 ? 8 : bytes === 2 ? 16 : 32);
    if (width !== 8 && width !== 16 && width !== 32)
      throw new RangeError(`memset width must be 8, 16 or 32 bits, got ${width}`);
    if (!Number.isInteger(value) || value < 0 || value >= 2 ** width)
      throw new RangeError(`memset value ${value} does not fit in ${width} bits`);
    if ((this.byteLength * 8) % width !== 0)
      throw new RangeError(`"${this.label}" (${this.byteLength} bytes) is not a whole number of ${width}-bit words`);
    const n = (this.byteLength * 8) / width;
    const s: CUstream | null = options.stream ? options.stream.use() : null;
    if (!options.stream) this.context.makeCurrent();
    const api = driverApi();
    let status =
      width === 8
        ? s
          ? api.cuMemsetD8Async(this.address, value, n, s)
          : api.cuMemsetD8(this.address, value, n)
        : width === 16
          ? s
            ? api.cuMemsetD16Async(this.address, value, n, s)
            : api.cuMemsetD16(this.address, value, n)
          : s
            ? api.cuMemsetD32Async(this.address, value, n, s)
            : api.cuMemsetD32(this.address, value, n);
    if (status === 0 && !s) status = finishLegacyStream();
    if (status !== 0)
      throw statusError(
        'driver',
        status,
        width === 8 ? 'cuMemsetD8' : width === 16 ? 'cuMemsetD16' : 'cuMemsetD32',
        `memset of "${this.label}"`,
      );
    if (options.stream) this.recordUse(options.stream);
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

/** A fresh host array of `length` elements of `dtype` (what read() returns without a target). */
function newHostArray(dtype: DType, length: number): ArrayBufferView {
  const info = dtypeInfo(dtype);
  return new info.array(length * info.components);
}
/** Scratch of #range: the validated copy range, read right after. */
const r = { offset: 0, sourceOffset: 0, length: 0, bytes: 0 };

/** Rejects a descriptor that is not an object (a number where `{ stream }` belongs, say). */
function checkDescriptor(descriptor: unknown, what: string): void {
  if (typeof descriptor !== 'object' || descriptor === null)
    throw new TypeError(`${what} takes a descriptor object, got ${describeValue(descriptor)}`);
  checkLabel((descriptor as { label?: unknown }).label, what);
}

/** A host side is a HostBuffer or a TypedArray: anything else (a plain object with an `address`) is a TypeError. */
/** Checks the host side of a copy; the message (naming `what` and the buffer) is built only when it fails, never per copy. */
function checkHostSide(x: unknown, what: string, buffer: DeviceBuffer<DType> | undefined): void {
  if (isHostBuffer(x)) return;
  if (ArrayBuffer.isView(x) && !(x instanceof DataView)) return;
  throw new TypeError(
    `${what}${buffer ? ` "${buffer.label}"` : ''}: expected a HostBuffer or a TypedArray, got ${describeValue(x)}`,
  );
}

/**
 * True for a real HostBuffer (a brand check: a plain object with `isHostBuffer: true` is not one).
 * The family brand, not `instanceof`: ~1 ns against ~15 ns per copy (bench/probe/ffi-overhead.ts over the stub driver).
 */
export function isHostBuffer<T extends DType>(x: unknown): x is HostBuffer<T> {
  return Resource.isResourceOf(x, 'HostBuffer');
}

function checkSameDtype<T extends DType>(device: DeviceBuffer<T>, host: HostBuffer<DType>): HostBuffer<T> {
  host.checkUsable();
  if (host.dtype !== device.dtype)
    throw new TypeError(`"${device.label}" holds ${device.dtype} but host buffer "${host.label}" holds ${host.dtype}`);
  return host as HostBuffer<T>;
}

/** A pageable TypedArray passed in place (koffi hands its memory to the call). */
function hostPointer(array: ArrayBufferView, byteOffset: number, bytes: number): ArrayBufferView {
  return byteOffset === 0 && bytes === array.byteLength
    ? array
    : new Uint8Array(array.buffer, array.byteOffset + byteOffset, bytes);
}

/** The class's instance type under the name types.ts gives it (see there: why). */
type DeviceBufferInstance = DeviceBuffer;
declare module '../types.js' {
  interface DeviceBuffer extends DeviceBufferInstance {}
}
