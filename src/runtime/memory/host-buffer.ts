import koffi from 'koffi';
import { check, driverApi, outValue, toAddress } from '../cuda.js';
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { checkLength, type DType, dtypeInfo, type HostArray, hostElements } from './dtype.js';
import { Resource } from '../resource.js';

/** cuMemHostAlloc flags (CU_MEMHOSTALLOC_*; macros, so not in the generated enums). */
const PORTABLE = 0x01;
const DEVICEMAP = 0x02;
const WRITECOMBINED = 0x04;
/** cuMemHostRegister flags (CU_MEMHOSTREGISTER_*). */
const REGISTER_PORTABLE = 0x01;
const REGISTER_DEVICEMAP = 0x02;

export interface HostBufferDescriptor extends Placement {
  /** Pinned for every context, not only the allocating one. */
  portable?: boolean;
  /** Mapped into the device address space (`devicePointer`). */
  mapped?: boolean;
  /** Write-combined: fast host writes and H2D copies, very slow host reads. */
  writeCombined?: boolean;
  label?: string;
}

/** Page-locked host memory whose contents are a zero-copy TypedArray (`array`). */
export class HostBuffer<T extends DType = DType> extends Resource {
  readonly isHostBuffer = true;
  readonly dtype: T;
  readonly length: number;
  readonly byteLength: number;
  /** Host address, as a number. */
  readonly address: number;
  readonly context: Context;
  readonly #array: HostArray<T>;
  readonly registered: boolean;
  readonly #mapped: boolean;

  private constructor(dtype: T, length: number, address: number, array: HostArray<T>, context: Context, registered: boolean, mapped: boolean, label: string | undefined) {
    super(registered ? 'HostBuffer (registered)' : 'HostBuffer', label);
    this.dtype = dtype;
    this.length = length;
    this.byteLength = length * dtypeInfo(dtype).bytes;
    this.address = address;
    this.#array = array;
    this.context = context;
    this.registered = registered;
    this.#mapped = mapped;
    this.track(registered ? () => driverApi().cuMemHostUnregister(address) : () => driverApi().cuMemFreeHost(address));
  }

  static alloc<T extends DType>(dtype: T, length: number, descriptor: HostBufferDescriptor = {}): HostBuffer<T> {
    checkLength(length, 'HostBuffer length');
    const info = dtypeInfo(dtype);
    const bytes = length * info.bytes;
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const flags = (descriptor.portable ? PORTABLE : 0) | (descriptor.mapped ? DEVICEMAP : 0) | (descriptor.writeCombined ? WRITECOMBINED : 0);
    const cell: [bigint | null] = [null];
    check(driverApi().cuMemHostAlloc(cell, bytes, flags), 'cuMemHostAlloc', `pinning ${bytes} bytes${descriptor.label ? ` for "${descriptor.label}"` : ''}`);
    const ptr = outValue(cell, 'cuMemHostAlloc');
    const array = new info.array(koffi.view(ptr, bytes)) as HostArray<T>;
    return new HostBuffer(dtype, length, toAddress(ptr), array, context, false, !!descriptor.mapped, descriptor.label);
  }

  /**
   * Pins memory the caller already has (cuMemHostRegister), so copies from it run at pinned speed.
   * The array must stay reachable while registered; dispose() unregisters it.
   */
  static register<T extends DType>(dtype: T, array: HostArray<T>, descriptor: Omit<HostBufferDescriptor, 'writeCombined'> = {}): HostBuffer<T> {
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
   * The memory itself, viewed as the dtype's TypedArray (no copy). Do not keep it past dispose():
   * the pages are freed then and the view would dangle.
   */
  get array(): HostArray<T> {
    this.assertAlive();
    return this.#array;
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
    this.context.makeCurrent();
    if (this.registered) check(driverApi().cuMemHostUnregister(this.address), 'cuMemHostUnregister', this.label);
    else check(driverApi().cuMemFreeHost(this.address), 'cuMemFreeHost', this.label);
  }
}
