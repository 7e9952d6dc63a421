/** What the results file says about where it was measured: GPU, driver, CUDA versions, commit. */
import { readFileSync, realpathSync } from 'node:fs';
import { cufft, isLibraryAvailable, runtime } from '../../src/ffi/index.js';
import { Device, driverVersion, type DeviceAvailability } from '../../src/runtime/index.js';
import { runProcess } from './processes.js';

export type GpuProbe = DeviceAvailability;

/**
 * Whether a CUDA GPU can be used, and if not, one line saying why: the runtime's own check, since
 * Device.count() answers 0 both without a driver and without a device and cannot tell them apart.
 */
export function probeGpu(): GpuProbe {
  return Device.available();
}

function cudaVersionString(v: number): string {
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

/** The kernel module's version (e.g. 570.133.20), where /proc says it. */
function kernelDriverVersion(): string | null {
  try {
    const text = readFileSync('/proc/driver/nvidia/version', 'utf8');
    return /Kernel Module\s+(?:for\s+\S+\s+)?([0-9][0-9.]+)/.exec(text)?.[1] ?? null;
  } catch {
    return null;
  }
}

export interface Environment {
  gpu: string;
  arch: string;
  /** Kernel driver version, or the CUDA version the driver supports where that is unknown. */
  driver: string;
  /** The CUDA version the driver supports (cuDriverGetVersion). */
  cuda: string;
  versions: Record<string, string>;
}

export function describeEnvironment(device: Device): Environment {
  const cuda = cudaVersionString(driverVersion());
  const versions: Record<string, string> = { driverApi: cuda };
  const kernel = kernelDriverVersion();
  if (kernel) versions.kernelDriver = kernel;
  try {
    if (isLibraryAvailable('runtime')) {
      const v: [number | null] = [0];
      if (runtime().cudaRuntimeGetVersion(v) === 0 && v[0] !== null) versions.runtime = cudaVersionString(v[0]);
    }
  } catch {
    /* optional */
  }
  try {
    if (isLibraryAvailable('cufft')) {
      const v: [number | null] = [0];
      if (cufft().cufftGetVersion(v) === 0 && v[0] !== null) versions.cufft = String(v[0]);
    }
  } catch {
    /* optional */
  }
  versions.node = process.version;
  return { gpu: device.name, arch: device.arch, driver: kernel ?? `CUDA ${cuda} driver API`, cuda, versions };
}

/** HEAD of the checkout at `root` (with -dirty when tracked files changed), else $TSCUDA_COMMIT, else 'unknown'. */
export async function commitOf(root: string): Promise<string> {
  const git = async (args: string[]): Promise<string | null> => {
    const r = await runProcess('git', ['-C', root, ...args], { timeoutMs: 10_000 });
    return r.exitCode === 0 ? r.stdout.trim() : null;
  };
  const top = await git(['rev-parse', '--show-toplevel']);
  // A copy of the tree inside some other repository must not report that repository's commit.
  let same = false;
  try {
    same = top !== null && realpathSync(top) === realpathSync(root);
  } catch {
    same = false;
  }
  if (same) {
    const head = await git(['rev-parse', 'HEAD']);
    if (head && /^[0-9a-f]{40}$/.test(head)) {
      const dirty = await git(['status', '--porcelain', '--untracked-files=no']);
      return dirty ? `${head}-dirty` : head;
    }
  }
  return process.env.TSCUDA_COMMIT || 'unknown';
}
