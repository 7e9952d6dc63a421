/**
 * `tscuda info [--json]`: every CUDA library tscuda uses, found (with its path and version) or
 * missing (with where it looked and how to get it), then the driver and every device. The
 * library list is printed also when there is no driver or no device, and `--json` is JSON in
 * every case, errors included.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CudaError, CudaUnavailableError } from '../ffi/errors.js';
import { cudart, cufftChecked, ncclChecked, nvrtcChecked } from '../ffi/checked.js';
import {
  LIBRARY_NAMES,
  libraryFiles,
  libraryStatus,
  searchFolders,
  type LibraryName,
  type LibraryStatus,
} from '../ffi/libraries.js';
import { Device, driverVersion } from '../runtime/device.js';
import type { DeviceProperties } from '../runtime/device.js';
import type { CliCommand } from './command.js';
import { parseCommandLine } from './options.js';

/** One place the library search tried, in its order, and why it was tried. */
export interface SearchPlace {
  /** A folder, or `ld.so` for the system loader's own search (LD_LIBRARY_PATH, /etc/ld.so.cache, /lib, /usr/lib). */
  readonly folder: string;
  /** Where the place comes from: `TSCUDA_CUDA_PATH`, `CUDA_HOME`, `CUDA_PATH`, `system loader`, `/usr/local/cuda*`, `CONDA_PREFIX`, `pip wheel`. */
  readonly from: string;
  /** Whether the folder exists (always true for the system loader). */
  readonly exists: boolean;
  /** The library file present there, if any (the system loader: not known before loading). */
  readonly file?: string | undefined;
}

/** One library as `info` reports it: the search result, the version the library itself reports, and every place it looked. */
export type LibraryReport = LibraryStatus & {
  readonly version: string | null;
  readonly searchPaths: readonly SearchPlace[];
};

const ROOT_VARIABLES = ['TSCUDA_CUDA_PATH', 'CUDA_HOME', 'CUDA_PATH'] as const;

/** The places the search for `library` tries, in order, each with its origin (the environment variable that named it, if any). */
export function searchPlaces(
  library: LibraryName,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SearchPlace[] {
  const files = libraryFiles(library);
  return searchFolders(library).map((folder): SearchPlace => {
    if (folder === undefined) return { folder: 'ld.so', from: 'system loader', exists: true };
    const root = ROOT_VARIABLES.find((v) => env[v] && (folder === env[v] || folder.startsWith(`${env[v]}/`)));
    const from =
      root ??
      (folder.startsWith('/usr/local/cuda')
        ? '/usr/local/cuda*'
        : env.CONDA_PREFIX && folder === join(env.CONDA_PREFIX, 'lib')
          ? 'CONDA_PREFIX'
          : 'pip wheel');
    return { folder, from, exists: existsSync(folder), file: files.find((f) => existsSync(join(folder, f))) };
  });
}

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
  runtime: () => cudaVersionString(cudart().cudaRuntimeGetVersion()),
  cufft: () => String(cufftChecked().cufftGetVersion()),
  nvrtc: () => {
    const major: [number | null] = [0];
    const minor: [number | null] = [0];
    nvrtcChecked().nvrtcVersion(major, minor);
    return `${major[0]}.${minor[0]}`;
  },
  nccl: () => {
    const v = ncclChecked().ncclGetVersion();
    if (!v) return null;
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
    return `${Math.floor(v / 10000)}.${Math.floor((v % 10000) / 100)}.${v % 100}`;
  },
};

/** The libraries, each found or missing; never throws (no driver needed). */
export function collectLibraries(): LibraryReport[] {
  return LIBRARY_NAMES.map((name) => {
    const status = libraryStatus(name);
    return {
      ...status,
      version: status.found ? attempt(VERSION_READERS[name]) : null,
      searchPaths: searchPlaces(name),
    };
  });
}

function describeError(e: unknown): { name: string; message: string; status?: string | undefined } {
  if (e instanceof CudaUnavailableError)
    return { name: e.name, message: 'no NVIDIA driver found (libcuda.so.1); install the NVIDIA driver to use a GPU' };
  if (e instanceof CudaError)
    return {
      name: e.name,
      status: e.status,
      message: e.status === 'CUDA_ERROR_NO_DEVICE' ? 'no CUDA device is visible' : e.message,
    };
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
    // Device.get() rather than all(): without a driver all() is [] (count() is 0), and the error saying why is the point here.
    const first = Device.get(0);
    report.devices = [first, ...Device.all().slice(1)].map((d) => ({
      ordinal: d.ordinal,
      ...d.properties,
      copyEngines: d.properties.asyncEngineCount,
    }));
  } catch (e) {
    if (e instanceof RangeError)
      report.error = { name: 'NoDevice', message: 'the NVIDIA driver is installed but no CUDA device is visible' };
    else report.error = describeError(e);
  }
  report.ok = report.error === undefined;
  return report;
}

/** `CUDA_HOME=/opt/cuda` for a place named by a variable, else its origin. */
function originLabel(p: SearchPlace, env: Readonly<Record<string, string | undefined>>): string {
  return (ROOT_VARIABLES as readonly string[]).includes(p.from) ? `${p.from}=${env[p.from]}` : p.from;
}

/** The places searched, one line each, with what was there: how a user sees that CUDA_HOME was read. */
function formatPlaces(l: LibraryReport, env: Readonly<Record<string, string | undefined>>): string[] {
  const unset = ROOT_VARIABLES.filter((v) => !env[v]);
  const lines = [
    `            looked for ${libraryFiles(l.name).join(', ')} in${unset.length > 0 ? ` (${unset.join(', ')}: unset)` : ''}:`,
  ];
  const width = Math.max(...l.searchPaths.map((p) => originLabel(p, env).length));
  for (const p of l.searchPaths) {
    const what =
      p.from === 'system loader'
        ? `the system loader (LD_LIBRARY_PATH=${env.LD_LIBRARY_PATH || '(unset)'}, /etc/ld.so.cache, /lib, /usr/lib)`
        : `${p.folder}  ${p.exists ? (p.file ? `has ${p.file}` : 'no such file there') : 'no such folder'}`;
    lines.push(`              ${originLabel(p, env).padEnd(width)}  ${what}`);
  }
  return lines;
}

function formatLibrary(l: LibraryReport, env: Readonly<Record<string, string | undefined>>): string[] {
  const label = { driver: 'libcuda', runtime: 'libcudart', cufft: 'cuFFT', nvrtc: 'NVRTC', nccl: 'NCCL' }[l.name];
  if (l.found) {
    const place =
      l.searchPaths.find((p) => p.file !== undefined && l.path === join(p.folder, p.file)) ??
      l.searchPaths.find((p) => p.folder === dirname(l.path));
    return [
      `  ${label.padEnd(9)} ${(l.version ?? '').padEnd(6)} ${l.path}  (${place ? originLabel(place, env) : 'system loader'})`,
    ];
  }
  return [`  ${label.padEnd(9)} ${'missing'.padEnd(6)} ${l.hint}`, ...formatPlaces(l, env)];
}

/** The human-readable form of a report. */
export function formatInfo(r: InfoReport, env: Readonly<Record<string, string | undefined>> = process.env): string {
  const gib = (b: number): string => `${(b / 2 ** 30).toFixed(1)} GiB`;
  const lines = [
    `CUDA driver ${r.driverVersion ?? 'not found'}, runtime ${r.runtimeVersion ?? 'not found'}, cuFFT ${r.cufftVersion ?? 'not found'}, NVRTC ${r.nvrtcVersion ?? 'not found'}`,
    'libraries:',
    ...r.libraries.flatMap((l) => formatLibrary(l, env)),
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
    'Lists libcuda, libcudart, cuFFT, NVRTC and NCCL, each with the path it was loaded from and why that',
    'place was searched, or how to install it and every place it looked (TSCUDA_CUDA_PATH, CUDA_HOME,',
    'CUDA_PATH, the system loader, /usr/local/cuda*, conda, pip wheels), then every CUDA device with its',
    'properties. Works without a driver (exit code 1).',
    '',
    'options:',
    '  --json      print one JSON object (also when there is no driver or device)',
    '  -h, --help  this text',
    '',
    'example: tscuda info --json | jq .devices[0].name',
  ].join('\n'),
  async run(args) {
    const { values } = parseCommandLine(args, { json: { type: 'boolean', default: false } }, false);
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
