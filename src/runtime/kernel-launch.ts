/** What a kernel launch is given: its grid, block, shared memory and stream, and its arguments, typed by the kernel's parameter list. */
import { CUlaunchAttributeID } from '../ffi/generated/types.js';
import type { KernelParamType } from './kernel-args.js';
import { describeValue } from './resource.js';
import type { DeviceBuffer } from './memory/device-buffer.js';
import type { DType } from './memory/dtype.js';
import type { Stream } from './stream.js';

/** Grid or block dimensions: `n` or `[x, y?, z?]`, missing dimensions are 1; each must be a positive integer within the device's limits. */
export type Dim3 = number | readonly [number, number?, number?];
/** Any launch argument, unchecked against a signature: a DeviceBuffer (or raw device address as a number) for a 'ptr' parameter, a number or bigint for a scalar. */
export type KernelArg = DeviceBuffer<DType> | number | bigint;

/** What a launch takes for one parameter type: a buffer (or raw device address) for 'ptr', a number, or a number or bigint for 64-bit integers. */
export type KernelArgFor<P extends KernelParamType> = P extends 'ptr'
  ? DeviceBuffer<DType> | number
  : P extends 'i64' | 'u64'
    ? number | bigint
    : number;

/**
 * The argument tuple of a parameter list: `KernelArgs<['i32', 'f32', 'ptr']>` is
 * `[number, number, DeviceBuffer | number]`, so swapped arguments are a tsc error.
 */
export type KernelArgs<P extends readonly KernelParamType[]> = {
  -readonly [K in keyof P]: P[K] extends KernelParamType ? KernelArgFor<P[K]> : never;
};

/** How a launch runs: `grid` in blocks, `block` in threads per block (at most the kernel's maxThreadsPerBlock in total), `sharedMemBytes` of dynamic shared memory (default 0; above 48 KiB needs setMaxDynamicSharedMemory()), and the stream. */
export interface LaunchConfig {
  grid: Dim3;
  block: Dim3;
  sharedMemBytes?: number | undefined;
  /** Default: the kernel's context's default stream (`context.defaultStream`, resolved by `resolveStream`). */
  stream?: Stream | undefined;
}

/** A LaunchConfig with the cuLaunchKernelEx options: thread-block clusters and cooperative launch. */
export interface ExtendedLaunchConfig extends LaunchConfig {
  /** Thread-block cluster dimensions (sm_90+). */
  cluster?: Dim3 | undefined;
  /** Cooperative launch: grid-wide sync allowed; the grid must fit co-resident on the device. */
  cooperative?: boolean | undefined;
}

/** The dimensions parseDim3() checked last, read right after it: launches stay allocation-free. */
export const dims: Int32Array = new Int32Array(3);

/**
 * Checks grid, block or cluster dimensions `d` against the device's `max` per dimension (errors
 * name kernel `kernel` and `what`) and writes them into `dims`.
 */
export function parseDim3(d: Dim3, what: string, max: readonly number[], kernel: string): void {
  let x: number, y: number, z: number;
  if (typeof d === 'number') {
    x = d;
    y = 1;
    z = 1;
  } else if (Array.isArray(d) && d.length >= 1 && d.length <= 3) {
    x = d[0];
    y = d[1] ?? 1;
    z = d[2] ?? 1;
  } else {
    throw new TypeError(
      `kernel "${kernel}": ${what} must be a number or an array of 1 to 3 numbers, got ${describeValue(d)}`,
    );
  }
  if (!(Number.isInteger(x) && Number.isInteger(y) && Number.isInteger(z) && x > 0 && y > 0 && z > 0)) {
    throw new RangeError(`kernel "${kernel}": ${what} dimensions must be positive integers, got ${JSON.stringify(d)}`);
  }
  if (x > max[0]! || y > max[1]! || z > max[2]!)
    throw new RangeError(`kernel "${kernel}": ${what} (${x}, ${y}, ${z}) exceeds the device limit (${max.join(', ')})`);
  dims[0] = x;
  dims[1] = y;
  dims[2] = z;
}

/** The largest thread-block cluster in each dimension. */
const CLUSTER_MAX: readonly number[] = [8, 8, 8];

/** One cuLaunchKernelEx attribute, as koffi encodes a CUlaunchAttribute. */
export interface LaunchAttribute {
  id: number;
  value: { clusterDim?: { x: number; y: number; z: number } | undefined; cooperative?: number | undefined };
}

/** The cuLaunchKernelEx attributes `config` asks for: a cluster (checked, sm_90+) and cooperative launch. */
export function launchAttributes(config: ExtendedLaunchConfig, kernel: string): LaunchAttribute[] {
  const attrs: LaunchAttribute[] = [];
  if (config.cluster !== undefined) {
    parseDim3(config.cluster, 'cluster', CLUSTER_MAX, kernel);
    attrs.push({
      id: CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
      value: { clusterDim: { x: dims[0]!, y: dims[1]!, z: dims[2]! } },
    });
  }
  if (config.cooperative)
    attrs.push({ id: CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, value: { cooperative: 1 } });
  return attrs;
}
