/**
 * What the driver says about a compiled kernel: its attributes (registers, memory, limits,
 * versions) and its occupancy at a block size, with the arguments checked against the device's
 * limits before the driver sees them.
 */
import { cu } from '../ffi/checked.js';
import { CUfunction_attribute as FA, type CUfunction } from '../ffi/generated/types.js';

/** The device limits occupancy queries are checked against: threads per block and opt-in dynamic shared memory in bytes. */
export interface OccupancyLimits {
  readonly maxThreads: number;
  readonly maxShared: number;
}
/** A compiled kernel's resources, from cuFuncGetAttribute: registers per thread, static shared, local (per thread) and constant memory in bytes, its thread and dynamic shared memory limits, and the PTX and binary versions (each major*10 + minor: 87 for 8.7). */
export interface KernelAttributes {
  registers: number;
  staticSharedBytes: number;
  localBytes: number;
  constBytes: number;
  maxThreadsPerBlock: number;
  maxDynamicSharedBytes: number;
  ptxVersion: number;
  binaryVersion: number;
}

/** One attribute of kernel `fn` (cuFuncGetAttribute); `name` names the kernel in errors. */
export function kernelAttribute(fn: CUfunction, name: string, attr: number): number {
  return cu().cuFuncGetAttribute(attr as never, fn, `kernel "${name}"`);
}

/** Every KernelAttributes field of kernel `fn`. */
export function kernelAttributes(fn: CUfunction, name: string): KernelAttributes {
  return {
    registers: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_NUM_REGS),
    staticSharedBytes: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
    localBytes: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
    constBytes: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES),
    maxThreadsPerBlock: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
    maxDynamicSharedBytes: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
    ptxVersion: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_PTX_VERSION),
    binaryVersion: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_BINARY_VERSION),
  };
}

/** Resident blocks per multiprocessor of kernel `fn` at this block size (Kernel.maxActiveBlocksPerMultiprocessor). */
export function activeBlocksPerMultiprocessor(
  fn: CUfunction,
  name: string,
  limits: OccupancyLimits,
  blockSize: number,
  dynamicSharedBytes: number,
): number {
  if (!Number.isInteger(blockSize) || blockSize < 1 || blockSize > limits.maxThreads)
    throw new RangeError(`kernel "${name}": block size ${String(blockSize)} is outside 1..${limits.maxThreads}`);
  if (!Number.isInteger(dynamicSharedBytes) || dynamicSharedBytes < 0 || dynamicSharedBytes > limits.maxShared)
    throw new RangeError(
      `kernel "${name}": dynamic shared memory ${String(dynamicSharedBytes)} is outside 0..${limits.maxShared} bytes`,
    );
  return cu().cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, blockSize, dynamicSharedBytes, name);
}

/** The block size that maximizes kernel `fn`'s occupancy, and the smallest grid that fills the device with it (Kernel.suggestedLaunch). */
export function occupancyLaunch(
  fn: CUfunction,
  name: string,
  limits: OccupancyLimits,
  dynamicSharedBytes: number,
  blockSizeLimit: number,
): { minGridSize: number; blockSize: number } {
  if (!Number.isInteger(dynamicSharedBytes) || dynamicSharedBytes < 0 || dynamicSharedBytes > limits.maxShared)
    throw new RangeError(
      `kernel "${name}": dynamic shared memory ${String(dynamicSharedBytes)} is outside 0..${limits.maxShared} bytes`,
    );
  if (!Number.isInteger(blockSizeLimit) || blockSizeLimit < 0)
    throw new RangeError(
      `kernel "${name}": blockSizeLimit ${String(blockSizeLimit)} must be a non-negative integer (0: no limit)`,
    );
  return cu().cuOccupancyMaxPotentialBlockSize(fn, null, dynamicSharedBytes, blockSizeLimit, name);
}
