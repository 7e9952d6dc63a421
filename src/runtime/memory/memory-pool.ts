import { cu } from '../../ffi/checked.js';
import {
  CUmemAllocationType,
  CUmemLocationType,
  CUmemPool_attribute as Attr,
  type CUmemoryPool,
} from '../../ffi/generated/types.js';
import type { Context } from '../context.js';
import { isDevice, resolveContext } from '../defaults.js';
import type { Device } from '../types.js';
import { describeValue, Resource } from '../resource.js';

/** A byte count the driver takes as a size_t: a non-negative safe integer (Infinity where `infinity` allows it). */
function checkBytes(bytes: unknown, what: string, infinity = false): void {
  if (infinity && bytes === Infinity) return;
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0)
    throw new RangeError(
      `${what} must be a non-negative integer number of bytes${infinity ? ' (or Infinity)' : ''}, got ${String(bytes)}`,
    );
}

/** Options of `new MemoryPool()`: the device whose memory it holds (default device 0), how much it keeps and may grow to, and a label. */
export interface MemoryPoolDescriptor {
  /** The device whose memory the pool holds (a Device or its ordinal); default device 0, as every placement of tscuda. */
  device?: Device | number | undefined;
  /** Bytes the pool keeps reserved across synchronizations instead of returning to the OS (default 0; Infinity keeps all). */
  releaseThreshold?: number | undefined;
  /** Upper bound of the pool's size in bytes (0: no limit). */
  maxSize?: number | undefined;
  label?: string | undefined;
}

/** A pool's memory in bytes: reserved from the driver and handed out to live allocations, each now and at its high-water mark. */
export interface MemoryPoolUsage {
  reservedBytes: number;
  reservedHighBytes: number;
  usedBytes: number;
  usedHighBytes: number;
}

/** A driver memory pool (cuMemPoolCreate) for stream-ordered allocation: `DeviceBuffer.alloc(dtype, n, { pool, stream })`. */
export class MemoryPool extends Resource {
  readonly device: Device;
  readonly context: Context;
  readonly handle: CUmemoryPool;
  readonly #owned: boolean;

  /** Creates a pool (cuMemPoolCreate: well under a millisecond; reserves nothing until the first allocation). */
  constructor(descriptor: MemoryPoolDescriptor = {}) {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`new MemoryPool() takes a descriptor object, got ${describeValue(descriptor)}`);
    super('MemoryPool', descriptor.label);
    if (descriptor.device !== undefined && typeof descriptor.device !== 'number' && !isDevice(descriptor.device))
      throw new TypeError(`MemoryPool device must be a Device or an ordinal, got ${describeValue(descriptor.device)}`);
    if (descriptor.maxSize !== undefined) checkBytes(descriptor.maxSize, 'MemoryPool maxSize');
    if (descriptor.releaseThreshold !== undefined)
      checkBytes(descriptor.releaseThreshold, 'MemoryPool releaseThreshold', true);
    // The one placement rule (defaults.ts), not a hard-wired device 0: an ordinal the machine lacks is refused.
    this.context = resolveContext({ device: descriptor.device });
    this.device = this.context.device;
    this.context.makeCurrent();
    const props = {
      allocType: CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED,
      handleTypes: 0,
      location: { type: CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: this.device.handle },
      win32SecurityAttributes: null,
      maxSize: descriptor.maxSize ?? 0,
      usage: 0,
    };
    this.handle = cu().cuMemPoolCreate(props as never, this.label);
    this.#owned = true;
    const h = this.handle;
    this.track(() => cu().cuMemPoolDestroy(h));
    if (descriptor.releaseThreshold !== undefined) this.releaseThreshold = descriptor.releaseThreshold;
  }

  #get(attr: number): number {
    this.context.makeCurrent();
    const v = new BigUint64Array(1);
    cu().cuMemPoolGetAttribute(this.handle, attr as never, v, this.label);
    return Number(v[0]);
  }

  get releaseThreshold(): number {
    this.assertAlive();
    return this.#get(Attr.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
  }

  set releaseThreshold(bytes: number) {
    this.assertAlive();
    checkBytes(bytes, `MemoryPool "${this.label}" releaseThreshold`, true);
    this.context.makeCurrent();
    const v = new BigUint64Array([bytes === Infinity ? 0xffffffffffffffffn : BigInt(bytes)]);
    cu().cuMemPoolSetAttribute(this.handle, Attr.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, v, this.label);
  }

  /** Returns reserved memory above `keepBytes` to the OS (after the frees it holds have completed). */
  trim(keepBytes = 0): void {
    this.assertAlive();
    checkBytes(keepBytes, `MemoryPool "${this.label}" trim(keepBytes)`);
    this.context.makeCurrent();
    cu().cuMemPoolTrimTo(this.handle, keepBytes, this.label);
  }

  /** The pool's reserved and used bytes, current and peak (four cuMemPoolGetAttribute calls); throws DisposedError once disposed. */
  usage(): MemoryPoolUsage {
    this.assertAlive();
    return {
      reservedBytes: this.#get(Attr.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
      reservedHighBytes: this.#get(Attr.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH),
      usedBytes: this.#get(Attr.CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
      usedHighBytes: this.#get(Attr.CU_MEMPOOL_ATTR_USED_MEM_HIGH),
    };
  }

  protected releaseNative(): void {
    if (!this.#owned) return;
    this.context.makeCurrent();
    cu().cuMemPoolDestroy(this.handle, this.label);
  }
}
