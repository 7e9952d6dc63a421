import koffi, { type LibraryHandle } from 'koffi';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CudaUnavailableError, type CudaLibraryName } from './errors.js';

interface LibrarySpec {
  files: string[];
  /** pip wheel folder (site-packages/nvidia/<x>/lib) that ships it. */
  wheel?: string;
  hint: string;
}

const SPECS: Record<CudaLibraryName, LibrarySpec> = {
  driver: { files: ['libcuda.so.1', 'libcuda.so'], hint: 'Install the NVIDIA driver (it provides libcuda.so.1); tscuda needs no toolkit or compiler.' },
  runtime: { files: ['libcudart.so.13', 'libcudart.so.12', 'libcudart.so'], wheel: 'cuda_runtime', hint: 'Install the CUDA runtime: the CUDA toolkit, or `pip install nvidia-cuda-runtime-cu13`.' },
  cufft: { files: ['libcufft.so.12', 'libcufft.so.11', 'libcufft.so'], wheel: 'cufft', hint: 'Install cuFFT: the CUDA toolkit, or `pip install nvidia-cufft-cu13`.' },
  nvrtc: { files: ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so'], wheel: 'cuda_nvrtc', hint: 'Install NVRTC: the CUDA toolkit, or `pip install nvidia-cuda-nvrtc-cu13`.' },
};

/** Folders tried in order; `undefined` stands for the system loader (ld.so's own search). */
export function searchFolders(library: CudaLibraryName): (string | undefined)[] {
  const roots = [process.env.TSCUDA_CUDA_PATH, process.env.CUDA_HOME, process.env.CUDA_PATH].filter((p): p is string => !!p);
  const folders: (string | undefined)[] = [];
  for (const r of roots) folders.push(r, join(r, 'lib64'), join(r, 'lib'), join(r, 'targets', 'x86_64-linux', 'lib'));
  folders.push(undefined);
  for (const base of ['/usr/local']) {
    let entries: string[] = [];
    try {
      entries = readdirSync(base).filter((e) => /^cuda(-[\d.]+)?$/.test(e)).sort().reverse();
    } catch {
      /* no /usr/local */
    }
    for (const e of entries) folders.push(join(base, e, 'lib64'));
  }
  const wheel = SPECS[library].wheel;
  if (wheel) folders.push(...pythonWheelFolders(wheel));
  return folders;
}

function pythonWheelFolders(wheel: string): string[] {
  const out: string[] = [];
  const sitePackages = new Set<string>();
  for (const p of (process.env.PYTHONPATH ?? '').split(':').filter(Boolean)) sitePackages.add(p);
  for (const prefix of ['/usr/local/lib', '/usr/lib', join(process.env.HOME ?? '/root', '.local', 'lib')]) {
    let pys: string[] = [];
    try {
      pys = readdirSync(prefix).filter((e) => e.startsWith('python3'));
    } catch {
      continue;
    }
    for (const py of pys) for (const sp of ['site-packages', 'dist-packages']) sitePackages.add(join(prefix, py, sp));
  }
  for (const sp of sitePackages) {
    for (const dir of [join(sp, 'nvidia', wheel, 'lib'), join(sp, 'nvidia', 'cu13', 'lib'), join(sp, 'nvidia', 'cu12', 'lib')]) if (existsSync(dir)) out.push(dir);
  }
  return out;
}

const loaded = new Map<CudaLibraryName, LibraryHandle>();

/** Loads a CUDA library on first use; throws CudaUnavailableError naming every place it looked. */
export function loadLibrary(library: CudaLibraryName): LibraryHandle {
  const cached = loaded.get(library);
  if (cached) return cached;
  const spec = SPECS[library];
  const searched: string[] = [];
  let lastError: string | undefined;
  for (const folder of searchFolders(library)) {
    for (const file of spec.files) {
      const path = folder === undefined ? file : join(folder, file);
      if (folder !== undefined && !existsSync(path)) continue;
      searched.push(folder === undefined ? `${file} (system loader)` : path);
      try {
        const lib = koffi.load(path);
        loaded.set(library, lib);
        return lib;
      } catch (e) {
        lastError = (e as Error).message;
      }
    }
  }
  if (!searched.some((s) => s.includes('system loader'))) searched.push(`${spec.files[0]} (system loader)`);
  throw new CudaUnavailableError(library, [...new Set(searched)], spec.hint, lastError);
}

export function isLibraryAvailable(library: CudaLibraryName): boolean {
  try {
    loadLibrary(library);
    return true;
  } catch {
    return false;
  }
}
