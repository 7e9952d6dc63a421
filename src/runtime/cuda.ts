import { driver, driverOutPointers } from '../ffi/api.js';
import { checkStatus } from '../ffi/checked.js';
import type { DriverFunctions } from '../ffi/generated/driver.js';
import type { CUmemoryPool, CUresult, CUstream } from '../ffi/generated/types.js';

/**
 * The raw driver API the runtime calls, bound on first use: status codes, each checked by the
 * runtime with `checkStatus` / `statusError` (src/ffi/checked.ts) so a message names what the call
 * was doing without costing anything when it succeeds.
 */
export function driverApi(): DriverFunctions {
  return driver();
}

let initialized = false;
/** cuInit(0), once per process. */
export function initDriver(): void {
  if (initialized) return;
  checkStatus('driver', driverApi().cuInit(0), 'cuInit');
  initialized = true;
}

/** Out-parameter cells. Device addresses fit in a double; the driver may hand them back as bigint. */
export function outValue<T>(cell: (T | null)[], call: string): T {
  const v = cell[0];
  if (v === null || v === undefined) throw new Error(`${call} returned no value`);
  return v;
}

export function toAddress(v: number | bigint | null): number {
  if (v === null) return 0;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new RangeError(`address ${String(v)} does not fit in a safe integer`);
  return n;
}

/**
 * The driver functions on hot paths, captured once into a small fixed-shape object: the
 * bound API object holds ~450 lazily-defined properties (a slow dictionary lookup per call).
 */
export interface HotFunctions {
  eventRecord: DriverFunctions['cuEventRecord'];
  eventQuery: DriverFunctions['cuEventQuery'];
  streamWaitEvent: DriverFunctions['cuStreamWaitEvent'];
  streamQuery: DriverFunctions['cuStreamQuery'];
  launchKernel: DriverFunctions['cuLaunchKernel'];
  memcpyHtoDAsync: DriverFunctions['cuMemcpyHtoDAsync'];
  memcpyDtoHAsync: DriverFunctions['cuMemcpyDtoHAsync'];
  /** cuMemAllocAsync writing the address into `dptr[0]` (out-parameter bound as a pointer: see addressCell). */
  memAllocAsync: (dptr: BigUint64Array, bytesize: number, hStream: CUstream | null) => CUresult;
  /** cuMemAllocFromPoolAsync writing the address into `dptr[0]`. */
  memAllocFromPoolAsync: (
    dptr: BigUint64Array,
    bytesize: number,
    pool: CUmemoryPool,
    hStream: CUstream | null,
  ) => CUresult;
  /** cuMemAlloc writing the address into `dptr[0]`. */
  memAlloc: (dptr: BigUint64Array, bytesize: number) => CUresult;
  memFreeAsync: DriverFunctions['cuMemFreeAsync'];
}

/**
 * The out-parameter of the hot allocations: one CUdeviceptr, read right after the call with
 * cellAddress(). A TypedArray handed to koffi as a plain pointer costs ~0.08 µs a call; a
 * `koffi.out` cell ~0.5 µs, as much as the allocation itself.
 */
export const addressCell = new BigUint64Array(1);
/** The same 8 bytes as two 32-bit words (little-endian), read without making a BigInt per allocation. */
const addressWords = new Uint32Array(addressCell.buffer);

/** The address an allocation just wrote into addressCell, as a number (device addresses fit a double). */
export function cellAddress(): number {
  const high = addressWords[1]!;
  // Above 2^53 a double loses bits: the rare case goes through toAddress, which names the address.
  if (high >= 2 ** 21) return toAddress(addressCell[0]!);
  return high * 2 ** 32 + addressWords[0]!;
}

let hotFunctions: HotFunctions | undefined;

/** The hot driver functions; the check stays tiny so V8 inlines it into every caller (a call here costs ~10 ns, a third of koffi's own). */
export function hot(): HotFunctions {
  return hotFunctions ?? bindHotFunctions();
}

function bindHotFunctions(): HotFunctions {
  const d = driverApi();
  const p = driverOutPointers();
  hotFunctions = {
    eventRecord: d.cuEventRecord,
    eventQuery: d.cuEventQuery,
    streamWaitEvent: d.cuStreamWaitEvent,
    streamQuery: d.cuStreamQuery,
    launchKernel: d.cuLaunchKernel,
    memcpyHtoDAsync: d.cuMemcpyHtoDAsync,
    memcpyDtoHAsync: d.cuMemcpyDtoHAsync,
    memAllocAsync: p.cuMemAllocAsync as HotFunctions['memAllocAsync'],
    memAllocFromPoolAsync: p.cuMemAllocFromPoolAsync as HotFunctions['memAllocFromPoolAsync'],
    memAlloc: p.cuMemAlloc as HotFunctions['memAlloc'],
    memFreeAsync: d.cuMemFreeAsync,
  };
  return hotFunctions;
}

/**
 * Waits for the legacy default stream of the current context. A copy or memset on a default stream is a
 * promise that the bytes are in place when the call returns, but CUDA only half keeps it
 * (pageable host -> device returns once staged; device -> device and memset do not wait), and the
 * library's streams are non-blocking, so later work on them would not be ordered after it.
 */
export function finishLegacyStream(): CUresult {
  return driverApi().cuStreamSynchronize(null);
}
