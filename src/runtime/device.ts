import { cu } from '../ffi/checked.js';
import { CUdevice_attribute as A, type CUdevice_attribute } from '../ffi/generated/types.js';
import { CUDA_MAJOR, MINIMUM_DRIVER } from '../ffi/cuda-version.js';
import { CudaError, CudaUnavailableError } from '../ffi/errors.js';
import { libraryStatus } from '../ffi/libraries.js';
import { initDriver } from './cuda.js';
import { Context } from './context.js';
import { registerDeviceClass } from './defaults.js';
import { Event, type EventDescriptor } from './event.js';
import type { FftPlanDescriptor, FftType } from './fft/geometry.js';
import { FftPlan } from './fft/plan.js';
import { DeviceBuffer, type DeviceBufferDescriptor } from './memory/device-buffer.js';
import type { DType } from './memory/dtype.js';
import { HostBuffer, type HostBufferDescriptor } from './memory/host-buffer.js';
import { Module, type ModuleDescriptor } from './module.js';
import { Stream, type StreamDescriptor } from './stream.js';
import { canAccessPeer, disablePeerAccess, enablePeerAccess, type PeerAccessOptions } from './peer.js';
import { describeValue } from './resource.js';

/** A device's compute capability: 9.0 (`{ major: 9, minor: 0 }`) for an H100; `Device.arch` spells it `sm_90`. */
export interface ComputeCapability {
  major: number;
  minor: number;
}

/** The properties users ask for first, typed; `attribute()` reaches every other CUdevice_attribute. */
export interface DeviceProperties {
  name: string;
  computeCapability: ComputeCapability;
  totalMemoryBytes: number;
  multiprocessorCount: number;
  clockRateKHz: number;
  memoryClockRateKHz: number;
  memoryBusWidthBits: number;
  l2CacheBytes: number;
  pciBusId: string;
  eccEnabled: boolean;
  asyncEngineCount: number;
  concurrentKernels: boolean;
  warpSize: number;
  maxThreadsPerBlock: number;
  maxBlockDim: [number, number, number];
  maxGridDim: [number, number, number];
  maxSharedMemoryPerBlockBytes: number;
  maxSharedMemoryPerBlockOptinBytes: number;
  unifiedAddressing: boolean;
  managedMemory: boolean;
  memoryPoolsSupported: boolean;
  cooperativeLaunch: boolean;
  clusterLaunch: boolean;
}

const devices = new Map<number, Device>();

export class Device {
  readonly ordinal: number;
  /** The CUdevice ordinal handle the driver uses. */
  readonly handle: number;
  #properties: DeviceProperties | undefined;
  #context: Context | undefined;

  private constructor(ordinal: number, handle: number) {
    this.ordinal = ordinal;
    this.handle = handle;
  }

  /**
   * How many CUDA devices the driver sees: 0 where there is no driver or no device, as
   * `torch.cuda.device_count()` answers, so `if (Device.count() > 0)` is a safe probe. A driver
   * that is present but fails (too old for this CUDA release, broken) still throws its CudaError; for the
   * reason in words, use `available()`.
   */
  static count(): number {
    try {
      return probeCount();
    } catch (e) {
      if (e instanceof CudaUnavailableError || (e instanceof CudaError && e.status === 'CUDA_ERROR_NO_DEVICE'))
        return 0;
      throw e;
    }
  }

  /**
   * Whether CUDA work can run here, without throwing: `{ ok: true, count }`, or `{ ok: false, reason }`
   * with a reason a user can act on, in one line (no driver library, a driver too old for this CUDA release,
   * no device visible — in a container, `--gpus all` —, a device in use exclusively by another process).
   * `needs` adds the libraries the program uses beyond the driver: `'nvrtc'` for kernels compiled at
   * run time (`Program`, `elementwise()`, `reduction()`), `'cufft'` for FFTs and `tscuda/signal`,
   * `'nccl'` for collectives; a missing one is the reason, with how to install it.
   */
  static available(options: { needs?: readonly OptionalLibrary[] | undefined } = {}): DeviceAvailability {
    let count: number;
    try {
      count = probeCount();
    } catch (e) {
      return { ok: false, reason: availabilityReason(e) };
    }
    if (count === 0)
      return {
        ok: false,
        reason:
          'the NVIDIA driver sees no CUDA device (in a container, run it with --gpus all and the NVIDIA Container Toolkit)',
      };
    for (const library of options.needs ?? []) {
      const status = libraryStatus(library);
      if (!status.found)
        return {
          ok: false,
          reason: `${LIBRARY_LABELS[library]} was not found: ${status.hint} (tscuda info lists where it looked)`,
        };
    }
    return { ok: true, count };
  }

  /** The device of this ordinal (0 first); RangeError when there is no such device. */
  static get(ordinal = 0): Device {
    const cached = devices.get(ordinal);
    if (cached) return cached;
    if (!Number.isInteger(ordinal) || ordinal < 0)
      throw new RangeError(`device ordinal must be a non-negative integer, got ${ordinal}`);
    const count = probeCount();
    if (ordinal >= count)
      throw new RangeError(`device ${ordinal} does not exist: this machine has ${count} CUDA device(s)`);
    const device = new Device(ordinal, cu().cuDeviceGet(ordinal));
    devices.set(ordinal, device);
    return device;
  }

  /** Every device, by ordinal. */
  static all(): Device[] {
    return Array.from({ length: Device.count() }, (_, i) => Device.get(i));
  }

  /** The raw value of any CUdevice_attribute for this device (booleans come back as 0 or 1); throws CudaError when the driver rejects the attribute. */
  attribute(attribute: CUdevice_attribute): number {
    return cu().cuDeviceGetAttribute(attribute, this.handle, `device ${this.ordinal}`);
  }

  get name(): string {
    const buf = Buffer.alloc(256);
    cu().cuDeviceGetName(buf, buf.length, this.handle);
    return buf.toString('utf8', 0, buf.indexOf(0));
  }

  get computeCapability(): ComputeCapability {
    return {
      major: this.attribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
      minor: this.attribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
    };
  }

  /** `sm_90` for an H100: the architecture NVRTC and fatbins are chosen by. */
  get arch(): string {
    const cc = this.computeCapability;
    return `sm_${cc.major}${cc.minor}`;
  }

  get totalMemoryBytes(): number {
    return Number(cu().cuDeviceTotalMem(this.handle));
  }

  get pciBusId(): string {
    const buf = Buffer.alloc(64);
    cu().cuDeviceGetPCIBusId(buf, buf.length, this.handle);
    return buf.toString('utf8', 0, buf.indexOf(0));
  }

  get properties(): DeviceProperties {
    if (this.#properties) return this.#properties;
    const a = (x: CUdevice_attribute): number => this.attribute(x);
    this.#properties = {
      name: this.name,
      computeCapability: this.computeCapability,
      totalMemoryBytes: this.totalMemoryBytes,
      multiprocessorCount: a(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
      clockRateKHz: a(A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
      memoryClockRateKHz: a(A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
      memoryBusWidthBits: a(A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
      l2CacheBytes: a(A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
      pciBusId: this.pciBusId,
      eccEnabled: a(A.CU_DEVICE_ATTRIBUTE_ECC_ENABLED) === 1,
      asyncEngineCount: a(A.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT),
      concurrentKernels: a(A.CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS) === 1,
      warpSize: a(A.CU_DEVICE_ATTRIBUTE_WARP_SIZE),
      maxThreadsPerBlock: a(A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
      maxBlockDim: [
        a(A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
        a(A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
        a(A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z),
      ],
      maxGridDim: [
        a(A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
        a(A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
        a(A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z),
      ],
      maxSharedMemoryPerBlockBytes: a(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
      maxSharedMemoryPerBlockOptinBytes: a(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
      unifiedAddressing: a(A.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) === 1,
      managedMemory: a(A.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) === 1,
      memoryPoolsSupported: a(A.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) === 1,
      cooperativeLaunch: a(A.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) === 1,
      clusterLaunch: a(A.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) === 1,
    };
    return this.#properties;
  }

  /** The device's primary context (retained once, shared with the runtime API and CuPy/PyTorch in the same process). */
  get context(): Context {
    if (!this.#context || this.#context.disposed) this.#context = Context.retainPrimary(this);
    return this.#context;
  }

  // Device-rooted factories, as cuda.core and WebGPU have them: each is the class's own
  // constructor with `{ device: this }` filled in.

  /** A new stream on this device (`new Stream({ ...descriptor, device: this })`). */
  createStream(descriptor: Omit<StreamDescriptor, 'device' | 'context'> = {}): Stream {
    return new Stream({ ...descriptor, device: this });
  }

  /** A new event on this device. */
  createEvent(descriptor: Omit<EventDescriptor, 'device' | 'context'> = {}): Event {
    return new Event({ ...descriptor, device: this });
  }

  /** Device memory of `length` elements on this device (stream-ordered when `stream` is given). */
  alloc<T extends DType>(
    dtype: T,
    length: number,
    descriptor: Omit<DeviceBufferDescriptor, 'device' | 'context'> = {},
  ): DeviceBuffer<T> {
    return DeviceBuffer.alloc(dtype, length, { ...descriptor, device: this });
  }

  /** Pinned host memory registered with this device's context. */
  allocHost<T extends DType>(
    dtype: T,
    length: number,
    descriptor: Omit<HostBufferDescriptor, 'device' | 'context'> = {},
  ): HostBuffer<T> {
    return HostBuffer.alloc(dtype, length, { ...descriptor, device: this });
  }

  /** A cuFFT plan on this device. */
  createFftPlan<T extends FftType>(descriptor: Omit<FftPlanDescriptor<T>, 'device' | 'context'>): FftPlan<T> {
    return FftPlan.create<T>({ ...descriptor, device: this } as FftPlanDescriptor<T>);
  }

  /** Loads a fatbin, cubin or PTX image into this device's context. */
  loadModule(descriptor: Omit<ModuleDescriptor, 'device' | 'context'>): Module {
    return Module.load({ ...descriptor, device: this });
  }

  // Peer access (runtime/peer.ts does the driver calls, on devices resolved here).

  /** Whether this device can access `other`'s memory directly (cuDeviceCanAccessPeer); false for itself. */
  canAccessPeer(other: Device | number): boolean {
    return canAccessPeer(this, peerDevice(other, 'canAccessPeer(other)'));
  }

  /**
   * Lets this device access `other`'s memory: cuCtxEnablePeerAccess (idempotent) and
   * cuMemPoolSetAccess(read-write for this device) on `other`'s default and current pools and
   * `options.pools`. Throws PeerAccessUnsupportedError where canAccessPeer is false; a no-op for itself.
   */
  enablePeerAccess(other: Device | number, options: PeerAccessOptions = {}): void {
    enablePeerAccess(this, peerDevice(other, 'enablePeerAccess(other)'), options);
  }

  /** Undoes cuCtxEnablePeerAccess (pools keep their access). Idempotent. */
  disablePeerAccess(other: Device | number): void {
    disablePeerAccess(this, peerDevice(other, 'disablePeerAccess(other)'));
  }

  /** `Device(0: NVIDIA H100 80GB HBM3)`: the ordinal and name, for logs (queries the driver for the name). */
  toString(): string {
    return `Device(${this.ordinal}: ${this.name})`;
  }
}

/** The other device of a peer-access call: a Device, or the ordinal of one. */
function peerDevice(other: Device | number, what: string): Device {
  if (typeof other === 'number') return Device.get(other);
  if (!(other instanceof Device))
    throw new TypeError(`${what} must be a Device or an ordinal, got ${describeValue(other)}`);
  return other;
}

/** cuDeviceGetCount after cuInit; throws what they throw (count() and available() each decide what that means). */
function probeCount(): number {
  initDriver();
  return cu().cuDeviceGetCount();
}

/** A library beyond the driver that `Device.available({ needs })` can check for. */
export type OptionalLibrary = 'nvrtc' | 'cufft' | 'nccl';

const LIBRARY_LABELS: Record<OptionalLibrary, string> = {
  nvrtc: 'NVRTC (libnvrtc, for kernels compiled at run time)',
  cufft: 'cuFFT (libcufft)',
  nccl: 'NCCL (libnccl)',
};

/** The result of `Device.available()`. */
export type DeviceAvailability = { ok: true; count: number } | { ok: false; reason: string };

function availabilityReason(e: unknown): string {
  if (e instanceof CudaUnavailableError)
    return `no NVIDIA driver: ${e.library === 'driver' ? 'libcuda.so.1' : e.library} was not found (install the NVIDIA driver; in a container, run it with --gpus all and the NVIDIA Container Toolkit)`;
  if (e instanceof CudaError) {
    if (e.status === 'CUDA_ERROR_NO_DEVICE')
      return 'the NVIDIA driver found no CUDA-capable device (check nvidia-smi; in a container, --gpus all)';
    if (e.status === 'CUDA_ERROR_INSUFFICIENT_DRIVER' || e.status === 'CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE')
      return `the NVIDIA driver is too old for CUDA ${CUDA_MAJOR} (${e.status}): install driver ${MINIMUM_DRIVER} or newer`;
    return `CUDA initialisation failed: ${e.message}`;
  }
  return `CUDA initialisation failed: ${e instanceof Error ? e.message : String(e)}`;
}

/** The CUDA version the driver supports, as the driver reports it (`CUDA_DRIVER_API_VERSION`, 13000, for 13.0). */
export function driverVersion(): number {
  initDriver();
  return cu().cuDriverGetVersion();
}

// The runtime's default placement (defaults.ts) reaches Device through this registration: it is
// imported by the classes Device's factories create, so it cannot import this file.
registerDeviceClass({
  get: (ordinal) => Device.get(ordinal),
  is: (value): value is Device => value instanceof Device,
  count: () => Device.count(),
  unavailableReason: () => {
    const availability = Device.available();
    return availability.ok ? undefined : availability.reason;
  },
});

/** The class's instance type under the name types.ts gives it (see there: why). */
type DeviceInstance = Device;
declare module './types.js' {
  interface Device extends DeviceInstance {}
}
