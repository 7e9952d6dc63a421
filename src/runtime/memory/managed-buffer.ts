import { cu } from '../../ffi/checked.js';
import { CUmemAttach_flags, CUmemLocationType, CUmem_advise, type CUmemLocation } from '../../ffi/generated/types.js';
import { toAddress } from '../cuda.js';
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { DeviceBuffer } from './device-buffer.js';
import { type DType, dtypeInfo, type HostArray } from './dtype.js';
import { checkDType } from './dtype-check.js';
import { HostPages } from './host-pages.js';
import { checkLabel, describeValue, expectResource } from '../resource.js';
import { Stream } from '../stream.js';
import { Device } from '../device.js';
import { positiveInteger } from '../value-checks.js';

/** The cuMemAdvise hints `advise()` sets (or, with `unset: true`, clears): mostly read (pages are duplicated to readers), where pages should preferably live, and which device accesses them (mapped there to avoid faults). */
export type MemoryAdvice = 'readMostly' | 'preferredLocation' | 'accessedBy';
const ADVICE: Record<MemoryAdvice, [set: number, unset: number]> = {
  readMostly: [CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY, CUmem_advise.CU_MEM_ADVISE_UNSET_READ_MOSTLY],
  preferredLocation: [
    CUmem_advise.CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
    CUmem_advise.CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
  ],
  accessedBy: [CUmem_advise.CU_MEM_ADVISE_SET_ACCESSED_BY, CUmem_advise.CU_MEM_ADVISE_UNSET_ACCESSED_BY],
};

function location(target: Device | 'host'): CUmemLocation {
  return target === 'host'
    ? { type: CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST, id: 0 }
    : { type: CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: target.handle };
}

/**
 * Unified memory (cuMemAllocManaged): one address for host and device, migrated on demand or by
 * prefetch(). Like HostBuffer's, its `array` never outlives the memory: the memory is freed once
 * the buffer is disposed (or collected) and every array read from `array` has been collected.
 */
export class ManagedBuffer<T extends DType = DType> extends DeviceBuffer<T> {
  #array: HostArray<T> | undefined;
  readonly #pages: HostPages;

  private constructor(
    dtype: T,
    length: number,
    address: number,
    context: Context,
    label: string | undefined,
    pages: HostPages,
  ) {
    super(dtype, length, address, context, label, { free: () => pages.drop(), stream: undefined, usedOn: undefined });
    this.#pages = pages;
  }

  static override alloc<T extends DType>(
    dtype: T,
    length: number,
    descriptor: Placement & { label?: string | undefined } = {},
  ): ManagedBuffer<T> {
    checkDType(dtype, 'ManagedBuffer.alloc');
    positiveInteger(length, 'ManagedBuffer length');
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`ManagedBuffer.alloc takes a descriptor object, got ${describeValue(descriptor)}`);
    checkLabel(descriptor.label, 'ManagedBuffer.alloc');
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const bytes = length * dtypeInfo(dtype).bytes;
    const address = toAddress(cu().cuMemAllocManaged(bytes, CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL, descriptor.label));
    const pages = new HostPages(address, bytes, () => cu().cuMemFree(address));
    return new ManagedBuffer(dtype, length, address, context, descriptor.label, pages);
  }

  /**
   * The memory as a host TypedArray (the same array each time). Touch it only when no kernel using
   * it is running. It keeps the memory alive: kept past dispose() it still views memory nothing
   * else is given, freed when the array is collected.
   */
  get array(): HostArray<T> {
    this.checkUsable();
    return (this.#array ??= new (dtypeInfo(this.dtype).array)(this.#pages.buffer()) as HostArray<T>);
  }

  protected override releaseNative(): void {
    this.#array = undefined;
    super.releaseNative();
  }

  /** Migrates the pages to `target` ahead of use, ordered on `stream`. */
  prefetch(target: Device | 'host', stream: Stream): this {
    expectResource(stream, Stream, `prefetch of "${this.label}" stream`);
    this.checkUsable(stream);
    checkTarget(target, `prefetch of "${this.label}"`);
    cu().cuMemPrefetchAsync(this.address, this.byteLength, location(target), 0, stream.use(), labelDuring, this);
    return this;
  }

  /** cuMemAdvise: hints where pages should live or who reads them. */
  advise(advice: MemoryAdvice, target: Device | 'host', options: { unset?: boolean | undefined } = {}): this {
    this.checkUsable();
    if (typeof advice !== 'string' || !Object.hasOwn(ADVICE, advice))
      throw new TypeError(
        `advise on "${this.label}": unknown advice ${JSON.stringify(advice) ?? String(advice)}; expected one of ${Object.keys(ADVICE).join(', ')}`,
      );
    checkTarget(target, `advise on "${this.label}"`);
    const code = ADVICE[advice][options?.unset ? 1 : 0];
    this.context.makeCurrent();
    cu().cuMemAdvise(this.address, this.byteLength, code as never, location(target), adviceDuring, advice, this);
    return this;
  }
}

// What a failed call was doing, built only when it fails (src/ffi/checked-call.ts).
const labelDuring = (buffer: ManagedBuffer): string => `"${buffer.label}"`;
const adviceDuring = (advice: MemoryAdvice, buffer: ManagedBuffer): string => `${advice} on "${buffer.label}"`;

function checkTarget(target: unknown, what: string): void {
  if (target !== 'host' && !(target instanceof Device))
    throw new TypeError(`${what}: the target must be a Device or 'host', got ${describeValue(target)}`);
}
