import koffi from 'koffi';
import { check, driverApi, outValue, toAddress } from '../cuda.js';
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { checkLength, type DType, dtypeInfo, type HostArray, hostElements } from './dtype.js';
import { checkDType } from './dtype-check.js';
import { HostPages } from './host-pages.js';
import { describeValue, Resource } from '../resource.js';

/** cuMemHostAlloc flags (CU_MEMHOSTALLOC_*; macros, so not in the generated enums). */
const PORTABLE = 0x01;
const DEVICEMAP = 0x02;
const WRITECOMBINED = 0x04;
/** cuMemHostRegister flags (CU_MEMHOSTREGISTER_*). */
const REGISTER_PORTABLE = 0x01;
const REGISTER_DEVICEMAP = 0x02;

export interface HostBufferDescriptor extends Placement {
  /** Pinned for every context, not only the allocating one. */
  portable?: boolean | undefined;
  /** Mapped into the device address space (`devicePointer`). */
  mapped?: boolean | undefined;
  /** Write-combined: fast host writes and H2D copies, very slow host reads. */
  writeCombined?: boolean | undefined;
  label?: string | undefined;
}

/**
 * Page-locked host memory whose contents are a zero-copy TypedArray (`array`).
 *
 * The array never outlives its memory: the pages are freed once the HostBuffer is disposed (or
 * collected) and every array read from `array` has been collected. An array kept after dispose()
 * stays a valid window onto pages that nothing else is given; dispose() frees at once when
 * `array` was never read, else when the last array is collected.
 */
export class HostBuffer<T extends DType = DType> extends Resource {
  readonly isHostBuffer = true;
  readonly dtype: T;
  readonly length: number;
  readonly byteLength: number;
  /** Host address, as a number. */
  readonly address: number;
  readonly context: Context;
  /** The array handed out (a registered buffer's is the caller's own array). */
  #array: HostArray<T> | undefined;
  /** Pinned pages of an allocated buffer, freed when this buffer and its arrays are gone; undefined when registered. */
  readonly #pages: HostPages | undefined;
  readonly registered: boolean;
  readonly #mapped: boolean;

  private constructor(dtype: T, length: number, address: number, array: HostArray<T> | undefined, context: Context, registered: boolean, mapped: boolean, label: string | undefined) {
    super(registered ? 'HostBuffer (registered)' : 'HostBuffer', label, 'HostBuffer');
    this.dtype = dtype;
    this.length = length;
    this.byteLength = length * dtypeInfo(dtype).bytes;
    this.address = address;
    this.#array = array;
    this.context = context;
    this.registered = registered;
    this.#mapped = mapped;
    if (registered) {
      this.#pages = undefined;
      this.track(() => check(driverApi().cuMemHostUnregister(address), 'cuMemHostUnregister'));
    } else {
      const pages = new HostPages(address, this.byteLength, () => check(driverApi().cuMemFreeHost(address), 'cuMemFreeHost', label));
      this.#pages = pages;
      this.track(() => pages.drop());
    }
  }

  /** Allocates pinned memory (cuMemHostAlloc: blocks for about 1 ms per 10–100 MB while the OS pins the pages; keep and reuse these buffers). */
  static alloc<T extends DType>(dtype: T, length: number, descriptor: HostBufferDescriptor = {}): HostBuffer<T> {
    checkDType(dtype, 'HostBuffer.alloc');
    checkLength(length, 'HostBuffer length');
    if (typeof descriptor !== 'object' || descriptor === null) throw new TypeError(`HostBuffer.alloc takes a descriptor object, got ${describeValue(descriptor)}`);
    const info = dtypeInfo(dtype);
    const bytes = length * info.bytes;
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const flags = (descriptor.portable ? PORTABLE : 0) | (descriptor.mapped ? DEVICEMAP : 0) | (descriptor.writeCombined ? WRITECOMBINED : 0);
    const cell: [bigint | null] = [null];
    check(driverApi().cuMemHostAlloc(cell, bytes, flags), 'cuMemHostAlloc', `pinning ${bytes} bytes${descriptor.label ? ` for "${descriptor.label}"` : ''}`);
    const ptr = outValue(cell, 'cuMemHostAlloc');
    return new HostBuffer(dtype, length, toAddress(ptr), undefined, context, false, !!descriptor.mapped, descriptor.label);
  }

  /**
   * Pins memory the caller already has (cuMemHostRegister), so copies from it run at pinned speed.
   * The array must stay reachable while registered; dispose() unregisters it.
   */
  static register<T extends DType>(dtype: T, array: HostArray<T>, descriptor: Omit<HostBufferDescriptor, 'writeCombined'> = {}): HostBuffer<T> {
    checkDType(dtype, 'HostBuffer.register');
    if (!ArrayBuffer.isView(array) || array instanceof DataView) throw new TypeError(`HostBuffer.register: expected a TypedArray, got ${describeValue(array)}`);
    if (typeof descriptor !== 'object' || descriptor === null) throw new TypeError(`HostBuffer.register takes a descriptor object, got ${describeValue(descriptor)}`);
    const length = hostElements(dtype, array, 'HostBuffer.register');
    checkLength(length, 'registered array length');
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const flags = (descriptor.portable ? REGISTER_PORTABLE : 0) | (descriptor.mapped ? REGISTER_DEVICEMAP : 0);
    check(driverApi().cuMemHostRegister(array, array.byteLength, flags), 'cuMemHostRegister', descriptor.label);
    const address = toAddress(koffi.address(array) as bigint | number);
    const buffer = new HostBuffer(dtype, length, address, array, context, true, !!descriptor.mapped, descriptor.label);
    return buffer;
  }

  /**
   * The memory itself, viewed as the dtype's TypedArray (no copy; the same array each time). It
   * keeps the pages alive: kept past dispose() (or past this buffer becoming unreachable) it still
   * views pinned memory that nothing else is given, freed when the array is collected.
   */
  get array(): HostArray<T> {
    this.assertAlive();
    if (this.#array) return this.#array;
    return (this.#array = new (dtypeInfo(this.dtype).array)(this.#pages!.buffer()) as HostArray<T>);
  }

  /** The device address of mapped memory (`mapped: true`). */
  get devicePointer(): number {
    this.checkUsable();
    if (!this.#mapped) throw new Error(`host buffer "${this.label}" is not mapped; allocate it with mapped: true`);
    const cell: [number | bigint | null] = [0];
    check(driverApi().cuMemHostGetDevicePointer(cell, this.address, 0), 'cuMemHostGetDevicePointer');
    return toAddress(outValue(cell, 'cuMemHostGetDevicePointer'));
  }

  checkUsable(): void {
    this.assertAlive();
  }

  protected releaseNative(): void {
    this.#array = undefined;
    if (this.registered) {
      this.context.makeCurrent();
      check(driverApi().cuMemHostUnregister(this.address), 'cuMemHostUnregister', this.label);
    } else {
      if (!this.context.disposed) this.context.makeCurrent();
      this.#pages!.drop();
    }
  }
}
