import koffi from 'koffi';
import { CUmemAttach_flags, CUmemLocationType, CUmem_advise, type CUmemLocation } from '../../ffi/generated/types.js';
import { check, driverApi, outValue, toAddress } from '../cuda.js';
import type { Context } from '../context.js';
import type { Device } from '../device.js';
import { resolveContext, type Placement } from '../defaults.js';
import { DeviceBuffer } from './device-buffer.js';
import { checkLength, type DType, dtypeInfo, type HostArray } from './dtype.js';
import type { Stream } from '../stream.js';

export type MemoryAdvice = 'readMostly' | 'preferredLocation' | 'accessedBy';
const ADVICE: Record<MemoryAdvice, [set: number, unset: number]> = {
  readMostly: [CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY, CUmem_advise.CU_MEM_ADVISE_UNSET_READ_MOSTLY],
  preferredLocation: [CUmem_advise.CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CUmem_advise.CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION],
  accessedBy: [CUmem_advise.CU_MEM_ADVISE_SET_ACCESSED_BY, CUmem_advise.CU_MEM_ADVISE_UNSET_ACCESSED_BY],
};

function location(target: Device | 'host'): CUmemLocation {
  return target === 'host' ? { type: CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST, id: 0 } : { type: CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: target.handle };
}

/** Unified memory (cuMemAllocManaged): one address for host and device, migrated on demand or by prefetch(). */
export class ManagedBuffer<T extends DType = DType> extends DeviceBuffer<T> {
  readonly #array: HostArray<T>;

  private constructor(dtype: T, length: number, address: number, context: Context, label: string | undefined) {
    super(dtype, length, address, context, label, { free: () => check(driverApi().cuMemFree(address), 'cuMemFree'), stream: undefined, usedOn: undefined });
    const info = dtypeInfo(dtype);
    this.#array = new info.array(koffi.view(BigInt(address), length * info.bytes)) as HostArray<T>;
  }

  static override alloc<T extends DType>(dtype: T, length: number, descriptor: Placement & { label?: string } = {}): ManagedBuffer<T> {
    checkLength(length, 'ManagedBuffer length');
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const bytes = length * dtypeInfo(dtype).bytes;
    const cell: [number | bigint | null] = [0];
    check(driverApi().cuMemAllocManaged(cell, bytes, CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL), 'cuMemAllocManaged', descriptor.label);
    return new ManagedBuffer(dtype, length, toAddress(outValue(cell, 'cuMemAllocManaged')), context, descriptor.label);
  }

  /** The memory as a host TypedArray. Touch it only when no kernel using it is running. */
  get array(): HostArray<T> {
    this.checkUsable();
    return this.#array;
  }

  /** Migrates the pages to `target` ahead of use, ordered on `stream`. */
  prefetch(target: Device | 'host', stream: Stream): this {
    this.checkUsable(stream);
    check(driverApi().cuMemPrefetchAsync(this.address, this.byteLength, location(target), 0, stream.use()), 'cuMemPrefetchAsync', `"${this.label}"`);
    return this;
  }

  /** cuMemAdvise: hints where pages should live or who reads them. */
  advise(advice: MemoryAdvice, target: Device | 'host', options: { unset?: boolean } = {}): this {
    this.checkUsable();
    const code = ADVICE[advice][options.unset ? 1 : 0];
    this.context.makeCurrent();
    check(driverApi().cuMemAdvise(this.address, this.byteLength, code as never, location(target)), 'cuMemAdvise', `${advice} on "${this.label}"`);
    return this;
  }
}
