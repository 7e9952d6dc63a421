import type { CheckedCall } from '../ffi/checked-call.js';
import { cu, cuOutPointers, type DriverPointerOutFunctions } from '../ffi/checked.js';

/** The checked driver API, as cu() gives it. */
type Driver = ReturnType<typeof cu>;

let initialized = false;
/** cuInit(0), once per process. */
export function initDriver(): void {
  if (initialized) return;
  cu().cuInit(0);
  initialized = true;
}

/** A device or host address the driver handed back (a number, or a bigint above 2^53), as a number. */
export function toAddress(v: number | bigint | null): number {
  if (v === null) return 0;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new RangeError(`address ${String(v)} does not fit in a safe integer`);
  return n;
}

/**
 * The checked driver functions on hot paths, captured once into a small fixed-shape object: the
 * checked API object holds ~450 lazily-defined properties (a slow dictionary lookup per call).
 * Each throws the call's CudaError (src/ffi/checked.ts) and takes what it is doing after its
 * arguments: a module-level describer and its values, so a call that succeeds builds nothing.
 */
export interface HotFunctions {
  eventRecord: Driver['cuEventRecord'];
  /** True when the event's work is done, false while it is not; throws the query's error. */
  eventQuery: Driver['cuEventQuery'];
  streamWaitEvent: Driver['cuStreamWaitEvent'];
  /** True when the stream's work is done, false while it is not; throws the query's error. */
  streamQuery: Driver['cuStreamQuery'];
  launchKernel: Driver['cuLaunchKernel'];
  memcpyHtoDAsync: Driver['cuMemcpyHtoDAsync'];
  memcpyDtoHAsync: Driver['cuMemcpyDtoHAsync'];
  /** cuMemAllocAsync writing the address into `dptr[0]` (out-parameter as a pointer: see addressCell). */
  memAllocAsync: DriverPointerOutFunctions['cuMemAllocAsync'];
  /** cuMemAllocFromPoolAsync writing the address into `dptr[0]`. */
  memAllocFromPoolAsync: DriverPointerOutFunctions['cuMemAllocFromPoolAsync'];
  /** cuMemAlloc writing the address into `dptr[0]`. */
  memAlloc: DriverPointerOutFunctions['cuMemAlloc'];
  memFreeAsync: Driver['cuMemFreeAsync'];
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
  const d = cu();
  const p = cuOutPointers();
  hotFunctions = {
    eventRecord: d.cuEventRecord,
    eventQuery: d.cuEventQuery,
    streamWaitEvent: d.cuStreamWaitEvent,
    streamQuery: d.cuStreamQuery,
    launchKernel: d.cuLaunchKernel,
    memcpyHtoDAsync: d.cuMemcpyHtoDAsync,
    memcpyDtoHAsync: d.cuMemcpyDtoHAsync,
    memAllocAsync: p.cuMemAllocAsync,
    memAllocFromPoolAsync: p.cuMemAllocFromPoolAsync,
    memAlloc: p.cuMemAlloc,
    memFreeAsync: d.cuMemFreeAsync,
  };
  return hotFunctions;
}

/**
 * Waits for the legacy default stream of the current context. A copy or memset on a default stream is a
 * promise that the bytes are in place when the call returns, but CUDA only half keeps it
 * (pageable host -> device returns once staged; device -> device and memset do not wait), and the
 * library's streams are non-blocking, so later work on them would not be ordered after it.
 * `during` and its values say what the copy was, as the copy's own call does.
 */
export const finishLegacyStream = ((during?: unknown, a?: unknown, b?: unknown, c?: unknown): void =>
  (cu().cuStreamSynchronize as (...args: unknown[]) => void)(null, during, a, b, c)) as CheckedCall<[], void>;
