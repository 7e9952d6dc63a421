import type { CUstream } from '../../ffi/generated/types.js';
import { check, driverApi, driverError, toAddress, hot } from '../cuda.js';
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { checkLength, checkOffset, type DType, dtypeInfo, type HostArray, hostElements } from './dtype.js';
import type { HostBuffer } from './host-buffer.js';
import type { MemoryPool } from './memory-pool.js';
import { Resource } from '../resource.js';
import type { Stream } from '../stream.js';

export interface DeviceBufferDescriptor extends Placement {
  /** Allocate stream-ordered on this stream (cuMemAllocAsync / the pool's), freed on it when disposed. */
  stream?: Stream;
  /** Allocate from this memory pool (stream-ordered; needs `stream`, or uses the pool's default stream). */
  pool?: MemoryPool;
  /** cuMemAllocManaged: the memory is reachable from host and device (see ManagedBuffer). */
  label?: string;
}

export interface CopyOptions {
  /** Enqueue on this stream and return at once; without it the copy is synchronous. */
  stream?: Stream;
  /** First element of this buffer. */
  offset?: number;
  /** First element of the other side (the host array or buffer read into or written from, or the source buffer). */
  otherOffset?: number;
  /** Elements to copy; default: all that fit. */
  length?: number;
}

type HostSide<T extends DType> = HostArray<T> | HostBuffer<T>;

/**
 * How a buffer's memory goes back. Stream-ordered memory (cuMemAllocAsync, pools) is freed on
 * `stream`, after every other stream that used it reaches the point of its last use
 * (PyTorch's record_stream, automated): `usedOn` collects those streams.
 */
interface Allocation {
  free: (() => void) | undefined;
  /** The stream a stream-ordered allocation was made on (null: the legacy stream), or undefined for cuMemAlloc. */
  stream: Stream | null | undefined;
  /** Streams other than `stream` that enqueued work on this memory (launches, copies, FFTs). */
  usedOn: Set<Stream> | undefined;
}

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

  protected constructor(dtype: T, length: number, address: number, context: Context, label: string | undefined, allocation: Allocation, parent?: DeviceBuffer<T>) {
    super(parent ? 'DeviceBuffer view' : 'DeviceBuffer', label);
    this.dtype = dtype;
    this.length = length;
    this.byteLength = length * dtypeInfo(dtype).bytes;
    this.address = address;
    this.context = context;
    this.parent = parent;
    this.#allocation = allocation;
    if (allocation.free) this.track(allocation.free);
  }

  static alloc<T extends DType>(dtype: T, length: number, descriptor: DeviceBufferDescriptor = {}): DeviceBuffer<T> {
    checkLength(length, 'DeviceBuffer length');
    const bytes = length * dtypeInfo(dtype).bytes;
    const context = resolveContext(descriptor, descriptor.stream ?? descriptor.pool);
    context.makeCurrent();
    const label = descriptor.label;
    const during = (): string => `allocating ${bytes} bytes${label ? ` for "${label}"` : ''}`;
    let status: number;
    let call: string;
    let sh: CUstream | null = null;
    if (descriptor.pool) {
      sh = descriptor.stream ? descriptor.stream.use() : null;
      call = 'cuMemAllocFromPoolAsync';
      status = driverApi().cuMemAllocFromPoolAsync(cell, bytes, descriptor.pool.handle, sh);
    } else if (descriptor.stream) {
      sh = descriptor.stream.use();
      call = 'cuMemAllocAsync';
      status = hot().memAllocAsync(cell, bytes, sh);
    } else {
      call = 'cuMemAlloc';
      status = driverApi().cuMemAlloc(cell, bytes);
    }
    if (status !== 0) throw driverError(status, call, during());
    const address = toAddress(cell[0]!);
    if (!(descriptor.pool || descriptor.stream)) return new DeviceBuffer(dtype, length, address, context, label, { free: () => check(driverApi().cuMemFree(address), 'cuMemFree'), stream: undefined, usedOn: undefined });
    const allocation: Allocation = { free: undefined, stream: descriptor.stream ?? null, usedOn: undefined };
    allocation.free = streamOrderedFree(address, sh, allocation, context);
    return new DeviceBuffer(dtype, length, address, context, label, allocation);
  }

  /** Allocates and uploads `data` (synchronously, or on `stream`). */
  static from<T extends DType>(dtype: T, data: HostSide<T>, descriptor: DeviceBufferDescriptor = {}): DeviceBuffer<T> {
    const n = isHostBuffer(data) ? data.length : hostElements(dtype, data, 'DeviceBuffer.from');
    const buffer = DeviceBuffer.alloc(dtype, n, descriptor);
    buffer.write(data, descriptor.stream ? { stream: descriptor.stream } : {});
    return buffer;
  }

  /**
   * Wraps memory allocated elsewhere (CuPy, PyTorch, another allocator): never freed here
   * unless `free` is given, which dispose() then calls.
   */
  static wrap<T extends DType>(dtype: T, length: number, address: number, descriptor: Placement & { label?: string; free?: () => void } = {}): DeviceBuffer<T> {
    checkLength(length, 'DeviceBuffer length');
    return new DeviceBuffer(dtype, length, address, resolveContext(descriptor), descriptor.label, { free: descriptor.free, stream: undefined, usedOn: undefined });
  }

  /** A sub-range sharing this buffer's memory. */
  view(offset: number, length = this.length - offset): DeviceBuffer<T> {
    this.assertAlive();
    checkOffset(offset, 'view offset');
    checkLength(length, 'view length');
    if (offset + length > this.length) throw new RangeError(`view [${offset}, ${offset + length}) is outside "${this.label}" (${this.length} elements)`);
    const bytes = dtypeInfo(this.dtype).bytes;
    return new DeviceBuffer(this.dtype, length, this.address + offset * bytes, this.context, `${this.label}[${offset}:${offset + length}]`, { free: undefined, stream: undefined, usedOn: undefined }, this);
  }

  /**
   * Notes that work on `stream` uses this memory, so a stream-ordered free waits for it (PyTorch's
   * record_stream). tscuda calls it for its own launches, copies and FFTs; call it for work it
   * cannot see (a raw address handed to another library).
   */
  recordUse(stream: Stream): void {
    const root = this.parent ?? this;
    const a = root.#allocation;
    if (a.stream === undefined || a.stream === stream) return;
    (a.usedOn ??= new Set()).add(stream);
  }

  /** Guards every use: alive (and its parent too), and belonging to the context the stream runs in. */
  checkUsable(stream?: Stream): void {
    this.assertAlive();
    if (this.parent?.disposed) throw new Error(`view "${this.label}" outlived its buffer "${this.parent.label}"`);
    if (stream && stream.context !== this.context) throw new Error(`buffer "${this.label}" belongs to ${this.context.label}, not to ${stream.context.label} of stream "${stream.label}"`);
  }

  /** Validates a copy range into the module's scratch `r` (copies stay allocation-free). */
  #range(options: CopyOptions, otherLength: number, what: string): void {
    const offset = options.offset ?? 0;
    const sourceOffset = options.otherOffset ?? 0;
    if (offset !== 0) checkOffset(offset, `${what} offset`);
    if (sourceOffset !== 0) checkOffset(sourceOffset, `${what} otherOffset`);
    const length = options.length ?? Math.min(this.length - offset, otherLength - sourceOffset);
    if (!(Number.isSafeInteger(length) && length > 0)) checkLength(length, `${what} length`);
    if (offset + length > this.length) throw new RangeError(`${what}: [${offset}, ${offset + length}) is outside "${this.label}" (${this.length} elements)`);
    if (sourceOffset + length > otherLength) throw new RangeError(`${what}: [${sourceOffset}, ${sourceOffset + length}) is outside the other side (${otherLength} elements)`);
    r.offset = offset;
    r.sourceOffset = sourceOffset;
    r.length = length;
    r.bytes = length * dtypeInfo(this.dtype).bytes;
  }

  /** Host -> device. From a HostBuffer with a stream the copy is truly asynchronous. */
  write(source: HostSide<T>, options: CopyOptions = NO_OPTIONS): this {
    this.checkUsable(options.stream);
    const info = dtypeInfo(this.dtype);
    this.#range(options, isHostBuffer(source) ? checkSameDtype(this, source).length : hostElements(this.dtype, source, 'write'), 'write');
    const dst = this.address + r.offset * info.bytes;
    const src = isHostBuffer(source) ? source.address + r.sourceOffset * info.bytes : hostPointer(source, r.sourceOffset * info.bytes, r.bytes);
    let status: number;
    if (options.stream) {
      status = hot().memcpyHtoDAsync(dst, src, r.bytes, options.stream.use());
      this.recordUse(options.stream);
    } else {
      this.context.makeCurrent();
      status = driverApi().cuMemcpyHtoD(dst, src, r.bytes);
    }
    if (status !== 0) throw driverError(status, options.stream ? 'cuMemcpyHtoDAsync' : 'cuMemcpyHtoD', `write of ${r.bytes} bytes to "${this.label}"`);
    return this;
  }

  /** Device -> host into `target` (allocated when omitted). With a stream and a HostBuffer, asynchronous. */
  read(): HostArray<T>;
  read<Target extends HostSide<T>>(target: Target, options?: CopyOptions): Target;
  read<Target extends HostSide<T>>(target?: Target, options: CopyOptions = NO_OPTIONS): Target {
    this.checkUsable(options.stream);
    const info = dtypeInfo(this.dtype);
    const dst = (target ?? new info.array(this.length * info.components)) as Target;
    const otherLength = isHostBuffer(dst) ? checkSameDtype(this, dst).length : hostElements(this.dtype, dst, 'read');
    this.#range(options, otherLength, 'read');
    const src = this.address + r.offset * info.bytes;
    const hostPtr = isHostBuffer(dst) ? dst.address + r.sourceOffset * info.bytes : hostPointer(dst, r.sourceOffset * info.bytes, r.bytes);
    let status: number;
    if (options.stream) {
      status = hot().memcpyDtoHAsync(hostPtr, src, r.bytes, options.stream.use());
      this.recordUse(options.stream);
    } else {
      this.context.makeCurrent();
      status = driverApi().cuMemcpyDtoH(hostPtr, src, r.bytes);
    }
    if (status !== 0) throw driverError(status, options.stream ? 'cuMemcpyDtoHAsync' : 'cuMemcpyDtoH', `read of ${r.bytes} bytes from "${this.label}"`);
    return dst;
  }

  /** Device -> device from `source` (same dtype). */
  copyFrom(source: DeviceBuffer<T>, options: CopyOptions = NO_OPTIONS): this {
    this.checkUsable(options.stream);
    source.checkUsable(options.stream);
    if (source.dtype !== this.dtype) throw new TypeError(`copy from "${source.label}" (${source.dtype}) to "${this.label}" (${this.dtype}): element types differ`);
    const info = dtypeInfo(this.dtype);
    this.#range(options, source.length, 'copy');
    const dst = this.address + r.offset * info.bytes;
    const src = source.address + r.sourceOffset * info.bytes;
    let status: number;
    if (options.stream) {
      status = driverApi().cuMemcpyDtoDAsync(dst, src, r.bytes, options.stream.use());
      this.recordUse(options.stream);
      source.recordUse(options.stream);
    } else {
      this.context.makeCurrent();
      status = driverApi().cuMemcpyDtoD(dst, src, r.bytes);
    }
    if (status !== 0) throw driverError(status, options.stream ? 'cuMemcpyDtoDAsync' : 'cuMemcpyDtoD', `copy of ${r.bytes} bytes "${source.label}" -> "${this.label}"`);
    return this;
  }

  /**
   * Sets every byte/halfword/word to `value` (8, 16 or 32 bits wide; default: the element size,
   * and for 8-byte elements only values whose two 32-bit halves are equal, such as 0).
   */
  memset(value: number, options: { stream?: Stream; width?: 8 | 16 | 32 } = {}): this {
    this.checkUsable(options.stream);
    const bytes = dtypeInfo(this.dtype).bytes;
    const width = options.width ?? (bytes === 1 ? 8 : bytes === 2 ? 16 : 32);
    if (![8, 16, 32].includes(width)) throw new RangeError(`memset width must be 8, 16 or 32 bits, got ${width}`);
    if (!Number.isInteger(value) || value < 0 || value >= 2 ** width) throw new RangeError(`memset value ${value} does not fit in ${width} bits`);
    if ((this.byteLength * 8) % width !== 0) throw new RangeError(`"${this.label}" (${this.byteLength} bytes) is not a whole number of ${width}-bit words`);
    const n = (this.byteLength * 8) / width;
    const s: CUstream | null = options.stream ? options.stream.use() : null;
    if (!options.stream) this.context.makeCurrent();
    const during = `memset of "${this.label}"`;
    const api = driverApi();
    const status =
      width === 8 ? (s ? api.cuMemsetD8Async(this.address, value, n, s) : api.cuMemsetD8(this.address, value, n))
      : width === 16 ? (s ? api.cuMemsetD16Async(this.address, value, n, s) : api.cuMemsetD16(this.address, value, n))
      : s ? api.cuMemsetD32Async(this.address, value, n, s) : api.cuMemsetD32(this.address, value, n);
    if (status !== 0) throw driverError(status, width === 8 ? 'cuMemsetD8' : width === 16 ? 'cuMemsetD16' : 'cuMemsetD32', during);
    return this;
  }

  protected releaseNative(): void {
    this.#allocation.free?.();
  }
}

const NO_OPTIONS: CopyOptions = Object.freeze({});
/** Scratch of #range: the validated copy range, read right after. */
const r = { offset: 0, sourceOffset: 0, length: 0, bytes: 0 };
/** The out-parameter cell of allocations, reused. */
const cell: [number | bigint | null] = [0];

/**
 * Frees stream-ordered memory on its stream, after an event of each other live stream that used
 * it: the allocator can then not hand the memory out while that work still runs.
 */
function streamOrderedFree(address: number, stream: CUstream | null, allocation: Allocation, context: Context): () => void {
  return () => {
    if (context.stickyError) return; // a lost context frees nothing; the driver refuses every call
    const used = allocation.usedOn;
    if (used && used.size > 0) {
      const api = hot();
      for (const other of used) {
        if (other.disposed) continue; // destroying a stream waits for nothing, but its work is ordered before later frees on the device
        const event = context.completionEvents.acquire();
        check(api.eventRecord(event, other.use()), 'cuEventRecord', 'ordering a free after its last use');
        check(api.streamWaitEvent(stream, event, 0), 'cuStreamWaitEvent', 'ordering a free after its last use');
        context.completionEvents.recycle(event);
      }
      used.clear();
    }
    check(hot().memFreeAsync(address, stream), 'cuMemFreeAsync');
  };
}

export function isHostBuffer<T extends DType>(x: unknown): x is HostBuffer<T> {
  return typeof x === 'object' && x !== null && (x as { isHostBuffer?: boolean }).isHostBuffer === true;
}

function checkSameDtype<T extends DType>(device: DeviceBuffer<T>, host: HostBuffer<DType>): HostBuffer<T> {
  host.checkUsable();
  if (host.dtype !== device.dtype) throw new TypeError(`"${device.label}" holds ${device.dtype} but host buffer "${host.label}" holds ${host.dtype}`);
  return host as HostBuffer<T>;
}

/** A pageable TypedArray passed in place (koffi hands its memory to the call). */
function hostPointer(array: ArrayBufferView, byteOffset: number, bytes: number): ArrayBufferView {
  return byteOffset === 0 && bytes === array.byteLength ? array : new Uint8Array(array.buffer, array.byteOffset + byteOffset, bytes);
}
