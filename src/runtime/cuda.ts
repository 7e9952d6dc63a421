import { type CudaError, driver, statusError } from '../ffi/index.js';
import type { DriverFunctions } from '../ffi/generated/driver.js';
import { noteSticky, RESTART_HINT } from './lost.js';

/** The raw driver API the runtime calls (status codes, not exceptions; `tscuda/ffi`'s `cu()` is the checked form); bound on first use. */
export function driverApi(): DriverFunctions {
  return driver();
}

/** What driverError needs of the context a call ran in (Context, without importing it). */
export interface ErrorOwner {
  readonly label: string;
  fail(error: CudaError): void;
}

let currentOwner: () => ErrorOwner | null = () => null;
/** The Context module says which context is current, so an error names the context it happened in. */
export function setCurrentContextSource(source: () => ErrorOwner | null): void {
  currentOwner = source;
}

/**
 * The CudaError of a failed driver call (through ffi's one status path), naming the context it ran
 * in: `owner` when the caller knows it (the completion poller queries events of its own context,
 * whichever is current), else the current one. A sticky error fails that context only.
 */
export function driverError(status: number, call: string, during?: string, owner?: ErrorOwner): CudaError {
  const context = owner ?? currentOwner();
  const error = statusError('driver', status, call, context ? (during === undefined ? context.label : `${during}; ${context.label}`) : during);
  if (error.sticky) {
    error.message += ` — ${RESTART_HINT}`;
    noteSticky(error);
    context?.fail(error);
  }
  return error;
}

/** Throws a CudaError for a failed CUresult. Cheap on success: one comparison. */
export function check(status: number, call: string, during?: string): void {
  if (status !== 0) throw driverError(status, call, during);
}

let initialized = false;
export function initDriver(): void {
  if (initialized) return;
  check(driverApi().cuInit(0), 'cuInit');
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
  const d = driverApi();
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
