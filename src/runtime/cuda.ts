import { CudaError, driver } from '../ffi/index.js';
import type { DriverFunctions } from '../ffi/generated/driver.js';

/** The raw driver API the runtime calls; bound on first use. */
export function cu(): DriverFunctions {
  return driver();
}

let stickyListener: ((error: CudaError) => void) | undefined;
/** The Context module hears of sticky errors from any call, so it can fail all in-flight work at once. */
export function onStickyError(listener: (error: CudaError) => void): void {
  stickyListener = listener;
}

export function driverError(status: number, call: string, during?: string): CudaError {
  const error = new CudaError('driver', status, call, during === undefined ? {} : { during });
  if (error.sticky) stickyListener?.(error);
  return error;
}

/** Throws a CudaError for a failed CUresult. Cheap on success: one comparison. */
export function check(status: number, call: string, during?: string): void {
  if (status !== 0) throw driverError(status, call, during);
}

let initialized = false;
export function initDriver(): void {
  if (initialized) return;
  check(cu().cuInit(0), 'cuInit');
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
  memAllocAsync: DriverFunctions['cuMemAllocAsync'];
  memFreeAsync: DriverFunctions['cuMemFreeAsync'];
}

let hotFunctions: HotFunctions | undefined;
export function hot(): HotFunctions {
  if (hotFunctions) return hotFunctions;
  const d = cu();
  hotFunctions = {
    eventRecord: d.cuEventRecord,
    eventQuery: d.cuEventQuery,
    streamWaitEvent: d.cuStreamWaitEvent,
    streamQuery: d.cuStreamQuery,
    launchKernel: d.cuLaunchKernel,
    memcpyHtoDAsync: d.cuMemcpyHtoDAsync,
    memcpyDtoHAsync: d.cuMemcpyDtoHAsync,
    memAllocAsync: d.cuMemAllocAsync,
    memFreeAsync: d.cuMemFreeAsync,
  };
  return hotFunctions;
}
