/**
 * `tscuda info [--json]`: every CUDA library tscuda uses, found (with its path and version) or
 * missing (with where it looked and how to get it), then the driver and every device. The
 * library list is printed also when there is no driver or no device, and `--json` is JSON in
 * every case, errors included.
 */
import { parseArgs } from 'node:util';
import { CudaError, CudaUnavailableError } from '../ffi/errors.js';
import { cufft, nccl, nvrtc, runtime } from '../ffi/index.js';
import { LIBRARY_NAMES, libraryStatus, type LibraryName, type LibraryStatus } from '../ffi/libraries.js';
import { Device, driverVersion } from '../runtime/device.js';
import type { DeviceProperties } from '../runtime/device.js';
import type { CliCommand } from './command.js';

/** One library as `info` reports it: the search result plus the version the library itself reports. */
export type LibraryReport = LibraryStatus & { readonly version: string | null };

/** What `tscuda info --json` prints. `error` is set (and the exit code is 1) when no device can be used. */
export interface InfoReport {
  ok: boolean;
  libraries: LibraryReport[];
  driverVersion: string | null;
  runtimeVersion: string | null;
  cufftVersion: string | null;
  nvrtcVersion: string | null;
  devices: (DeviceProperties & { ordinal: number; copyEngines: number })[];
  error?: { name: string; message: string; status?: string | undefined } | undefined;
}

function cudaVersionString(v: number): string {
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

function attempt<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}

const VERSION_READERS: Record<LibraryName, () => string | null> = {
  driver: () => cudaVersionString(driverVersion()),
  runtime: () => {
    const v: [number | null] = [0];
    return runtime().cudaRuntimeGetVersion(v) === 0 ? cudaVersionString(v[0]!) : null;
  },
  cufft: () => {
    const v: [number | null] = [0];
    return cufft().cufftGetVersion(v) === 0 ? String(v[0]) : null;
  },
  nvrtc: () => {
    const major: [number | null] = [0];
    const minor: [number | null] = [0];
    return nvrtc().nvrtcVersion(major, minor) === 0 ? `${major[0]}.${minor[0]}` : null;
  },
  nccl: () => {
    const v: [number | null] = [0];
    if (nccl().ncclGetVersion(v) !== 0 || !v[0]) return null;
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
    return `${Math.floor(v[0] / 10000)}.${Math.floor((v[0] % 10000) / 100)}.${v[0] % 100}`;
  },
};

/** The libraries, each found or missing; never throws (no driver needed). */
export function collectLibraries(): LibraryReport[] {
  return LIBRARY_NAMES.map((name) => {
    const status = libraryStatus(name);
    return { ...status, version: status.found ? attempt(VERSION_READERS[name]) : null };
  });
}

function describeError(e: unknown): { name: string; message: string; status?: string | undefined } {
  if (e instanceof CudaUnavailableError) return { name: e.name, message: 'no NVIDIA driver found (libcuda.so.1); install the NVIDIA driver to use a GPU' };
  if (e instanceof CudaError) return { name: e.name, status: e.status, message: e.status === 'CUDA_ERROR_NO_DEVICE' ? 'no CUDA device is visible' : e.message };
  return { name: e instanceof Error ? e.name : 'Error', message: e instanceof Error ? e.message : String(e) };
}

/** Libraries, versions and devices. Never throws: a missing driver or device is in `error`. */
export function collectInfo(): InfoReport {
  const libraries = collectLibraries();
  const version = (name: LibraryName): string | null => libraries.find((l) => l.name === name)?.version ?? null;
  const report: InfoReport = {
    ok: false,
    libraries,
    driverVersion: version('driver'),
    runtimeVersion: version('runtime'),
    cufftVersion: version('cufft'),
    nvrtcVersion: version('nvrtc'),
    devices: [],
  };
  try {
    report.devices = Device.all().map((d) => ({ ordinal: d.ordinal, ...d.properties, copyEngines: d.properties.asyncEngineCount }));
    if (report.devices.length === 0) report.error = { name: 'NoDevice', message: 'the NVIDIA driver is installed but no CUDA device is visible' };
  } catch (e) {
    report.error = describeError(e);
  }
  report.ok = report.error === undefined;
  return report;
}

function formatLibrary(l: LibraryReport): string {
  const label = { driver: 'libcuda', runtime: 'libcudart', cufft: 'cuFFT', nvrtc: 'NVRTC', nccl: 'NCCL' }[l.name];
  if (l.found) return `  ${label.padEnd(9)} ${(l.version ?? '').padEnd(6)} ${l.path}`;
  return `  ${label.padEnd(9)} ${'missing'.padEnd(6)} ${l.hint}`;
}

/** The human-readable form of a report. */
export function formatInfo(r: InfoReport): string {
  const gib = (b: number): string => `${(b / 2 ** 30).toFixed(1)} GiB`;
  const lines = [
    `CUDA driver ${r.driverVersion ?? 'not found'}, runtime ${r.runtimeVersion ?? 'not found'}, cuFFT ${r.cufftVersion ?? 'not found'}, NVRTC ${r.nvrtcVersion ?? 'not found'}`,
    'libraries:',
    ...r.libraries.map(formatLibrary),
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

/** `tscuda info`: exit code 0 with a device, 1 (and one line on stderr, no stack trace) without. */
export const infoCommand: CliCommand = {
  name: 'info',
  summary: 'CUDA libraries found or missing (with paths), driver, runtime, cuFFT and NVRTC versions, every device',
  usage: [
    'usage: tscuda info [--json]',
    '',
    'Lists libcuda, libcudart, cuFFT, NVRTC and NCCL, each with the path it was loaded from or how to',
    'install it, then every CUDA device with its properties. Works without a driver (exit code 1).',
    '',
    'options:',
    '  --json      print one JSON object (also when there is no driver or device)',
    '  -h, --help  this text',
    '',
    'example: tscuda info --json | jq .devices[0].name',
  ].join('\n'),
  async run(args) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } }, strict: true, allowPositionals: false });
    const report = collectInfo();
    if (values.json) console.log(JSON.stringify(report, null, 2));
    else console.log(formatInfo(report));
    if (report.error) {
      if (!values.json) console.error(`tscuda: ${report.error.message}`);
      return 1;
    }
    return 0;
  },
};
