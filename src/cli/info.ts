import { CudaError, CudaUnavailableError } from '../ffi/errors.js';
import { cufft, isLibraryAvailable, nvrtc, runtime } from '../ffi/index.js';
import { Device, driverVersion } from '../runtime/device.js';
import type { DeviceProperties } from '../runtime/device.js';

export interface InfoReport {
  driverVersion: string;
  runtimeVersion: string | null;
  cufftVersion: string | null;
  nvrtcVersion: string | null;
  devices: (DeviceProperties & { ordinal: number; copyEngines: number })[];
}

function cudaVersionString(v: number): string {
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

function optional<T>(library: 'runtime' | 'cufft' | 'nvrtc', read: () => T): T | null {
  if (!isLibraryAvailable(library)) return null;
  try {
    return read();
  } catch {
    return null;
  }
}

export function collectInfo(): InfoReport {
  const driver = driverVersion();
  const runtimeVersion = optional('runtime', () => {
    const v: [number | null] = [0];
    return runtime().cudaRuntimeGetVersion(v) === 0 ? cudaVersionString(v[0]!) : null;
  });
  const cufftVersion = optional('cufft', () => {
    const v: [number | null] = [0];
    return cufft().cufftGetVersion(v) === 0 ? String(v[0]) : null;
  });
  const nvrtcVersion = optional('nvrtc', () => {
    const major: [number | null] = [0];
    const minor: [number | null] = [0];
    return nvrtc().nvrtcVersion(major, minor) === 0 ? `${major[0]}.${minor[0]}` : null;
  });
  const devices = Device.all().map((d) => ({ ordinal: d.ordinal, ...d.properties, copyEngines: d.properties.asyncEngineCount }));
  return { driverVersion: cudaVersionString(driver), runtimeVersion, cufftVersion, nvrtcVersion, devices };
}

export function formatInfo(r: InfoReport): string {
  const gib = (b: number): string => `${(b / 2 ** 30).toFixed(1)} GiB`;
  const lines = [
    `CUDA driver ${r.driverVersion}, runtime ${r.runtimeVersion ?? 'not found'}, cuFFT ${r.cufftVersion ?? 'not found'}, NVRTC ${r.nvrtcVersion ?? 'not found'}`,
    `${r.devices.length} device(s)`,
  ];
  for (const d of r.devices) {
    lines.push(
      `  [${d.ordinal}] ${d.name}  sm_${d.computeCapability.major}${d.computeCapability.minor}  ${d.multiprocessorCount} SMs  ${gib(d.totalMemoryBytes)}`,
      `      clocks: SM ${(d.clockRateKHz / 1000).toFixed(0)} MHz, memory ${(d.memoryClockRateKHz / 1000).toFixed(0)} MHz, ${d.memoryBusWidthBits}-bit bus, L2 ${(d.l2CacheBytes / 2 ** 20).toFixed(0)} MiB`,
      `      PCI ${d.pciBusId}  ECC ${d.eccEnabled ? 'on' : 'off'}  copy engines ${d.copyEngines}  concurrent kernels ${d.concurrentKernels ? 'yes' : 'no'}`,
      `      limits: ${d.maxThreadsPerBlock} threads/block, ${(d.maxSharedMemoryPerBlockOptinBytes / 1024).toFixed(0)} KiB shared/block (opt-in), clusters ${d.clusterLaunch ? 'yes' : 'no'}, memory pools ${d.memoryPoolsSupported ? 'yes' : 'no'}`,
    );
  }
  return lines.join('\n');
}

/** `tscuda info [--json]`: exit code 1 and one line, no stack trace, when there is no driver or device. */
export function infoCommand(args: string[]): number {
  try {
    const report = collectInfo();
    if (report.devices.length === 0) {
      console.error('tscuda: the NVIDIA driver is installed but no CUDA device is visible');
      return 1;
    }
    console.log(args.includes('--json') ? JSON.stringify(report, null, 2) : formatInfo(report));
    return 0;
  } catch (e) {
    if (e instanceof CudaUnavailableError) console.error('tscuda: no NVIDIA driver found (libcuda.so.1); install the NVIDIA driver to use a GPU');
    else if (e instanceof CudaError) console.error(`tscuda: ${e.status === 'CUDA_ERROR_NO_DEVICE' ? 'no CUDA device is visible' : e.message}`);
    else throw e;
    return 1;
  }
}
