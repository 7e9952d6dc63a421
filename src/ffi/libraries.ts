import koffi, { type LibraryHandle } from 'koffi';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import {
  CUDA_MAJOR,
  CUDA_PREVIOUS_MAJOR,
  CUFFT_MAJOR,
  CUFFT_PREVIOUS_MAJOR,
  PIP_PREVIOUS_WHEEL_FOLDER,
  PIP_SUFFIX,
  PIP_WHEEL_FOLDER,
} from './cuda-version.js';
import { CudaUnavailableError, type CudaLibraryName } from './errors.js';

/** Every shared library tscuda looks for: the four it binds, and NCCL for several GPUs. */
export type LibraryName = CudaLibraryName | 'nccl';

/** The libraries `tscuda info` reports, in its order. */
export const LIBRARY_NAMES: readonly LibraryName[] = ['driver', 'runtime', 'cufft', 'nvrtc', 'nccl'];

interface LibrarySpec {
  /** File names tried in each folder, preferred first. */
  files: string[];
  /** pip wheel folders (site-packages/<x>) that ship it. */
  wheels: string[];
  hint: string;
}

// The release's pip wheels put every library in nvidia/cu13/lib; CUDA 12's kept one folder per
// library (nvidia/cuda_runtime/lib, ...), still searched after it. Versions: ./cuda-version.ts.
const WHEEL_LIB = `${PIP_WHEEL_FOLDER}/lib`;
const PREVIOUS_WHEEL_LIB = `${PIP_PREVIOUS_WHEEL_FOLDER}/lib`;
const SPECS: Record<LibraryName, LibrarySpec> = {
  driver: {
    files: ['libcuda.so.1', 'libcuda.so'],
    wheels: [],
    hint: 'Install the NVIDIA driver (it provides libcuda.so.1); tscuda needs no toolkit or compiler.',
  },
  runtime: {
    files: [`libcudart.so.${CUDA_MAJOR}`, `libcudart.so.${CUDA_PREVIOUS_MAJOR}`, 'libcudart.so'],
    wheels: [WHEEL_LIB, 'nvidia/cuda_runtime/lib', PREVIOUS_WHEEL_LIB],
    hint: `Install the CUDA runtime: the CUDA toolkit, or \`pip install nvidia-cuda-runtime-${PIP_SUFFIX}\`.`,
  },
  cufft: {
    files: [`libcufft.so.${CUFFT_MAJOR}`, `libcufft.so.${CUFFT_PREVIOUS_MAJOR}`, 'libcufft.so'],
    wheels: [WHEEL_LIB, 'nvidia/cufft/lib', PREVIOUS_WHEEL_LIB],
    hint: `Install cuFFT: the CUDA toolkit, or \`pip install nvidia-cufft-${PIP_SUFFIX}\`.`,
  },
  nvrtc: {
    files: [`libnvrtc.so.${CUDA_MAJOR}`, `libnvrtc.so.${CUDA_PREVIOUS_MAJOR}`, 'libnvrtc.so'],
    wheels: [WHEEL_LIB, 'nvidia/cuda_nvrtc/lib', PREVIOUS_WHEEL_LIB],
    hint: `Install NVRTC: the CUDA toolkit, or \`pip install nvidia-cuda-nvrtc-${PIP_SUFFIX}\`.`,
  },
  nccl: {
    files: ['libnccl.so.2', 'libnccl.so'],
    wheels: ['nvidia/nccl/lib', WHEEL_LIB],
    hint: `Install NCCL (only needed for several GPUs): the libnccl2 package, or \`pip install nvidia-nccl-${PIP_SUFFIX}\`.`,
  },
};

/** What the search reads from the environment; tests pass their own. */
export interface SearchEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
}

/** The file names tried for `library` in each folder, preferred first (what `tscuda info` says it looked for). */
export function libraryFiles(library: LibraryName): readonly string[] {
  return SPECS[library].files;
}

const processEnvironment = (): SearchEnvironment => ({ env: process.env, home: homedir() });

function childFolders(dir: string, match: RegExp): string[] {
  try {
    return readdirSync(dir)
      .filter((e) => match.test(e))
      .sort()
      .reverse();
  } catch {
    return [];
  }
}

/**
 * Python site-packages folders that may hold NVIDIA's pip wheels, in order: `$PYTHONPATH`, the
 * active virtualenv (`$VIRTUAL_ENV`), the active conda env (`$CONDA_PREFIX`), the user site
 * (`$PYTHONUSERBASE`, default ~/.local: what `python3 -m site --user-site` prints, found without
 * spawning Python) and the system's. Only folders that exist are returned.
 */
export function sitePackagesFolders(search: SearchEnvironment = processEnvironment()): string[] {
  const { env, home } = search;
  const out = new Set<string>();
  for (const p of (env.PYTHONPATH ?? '').split(':').filter(Boolean)) out.add(p);
  const prefixes = [
    env.VIRTUAL_ENV,
    env.CONDA_PREFIX,
    env.PYTHONUSERBASE ?? join(home, '.local'),
    '/usr/local',
    '/usr',
  ].filter((p): p is string => !!p);
  for (const prefix of prefixes) {
    const lib = join(prefix, 'lib');
    for (const py of childFolders(lib, /^python3(\.\d+)?t?$/))
      for (const sp of ['site-packages', 'dist-packages']) out.add(join(lib, py, sp));
  }
  return [...out].filter((d) => existsSync(d));
}

/** Folders tried in order; `undefined` stands for the system loader (ld.so's own search). */
export function searchFolders(
  library: LibraryName,
  search: SearchEnvironment = processEnvironment(),
): (string | undefined)[] {
  const { env } = search;
  const roots = [env.TSCUDA_CUDA_PATH, env.CUDA_HOME, env.CUDA_PATH].filter((p): p is string => !!p);
  const folders: (string | undefined)[] = [];
  for (const r of roots)
    folders.push(
      r,
      join(r, 'lib64'),
      join(r, 'lib'),
      join(r, 'targets', 'x86_64-linux', 'lib'),
      join(r, 'targets', 'sbsa-linux', 'lib'),
    );
  folders.push(undefined);
  for (const e of childFolders('/usr/local', /^cuda(-[\d.]+)?$/)) folders.push(join('/usr/local', e, 'lib64'));
  // conda's CUDA packages (cuda-cudart, libcufft, nccl) install into the env's own lib folder.
  if (env.CONDA_PREFIX) folders.push(join(env.CONDA_PREFIX, 'lib'));
  for (const sp of sitePackagesFolders(search))
    for (const w of SPECS[library].wheels) if (existsSync(join(sp, w))) folders.push(join(sp, w));
  return [...new Set(folders)];
}

const loaded = new Map<LibraryName, { handle: LibraryHandle; path: string }>();

/** Where the system loader actually found `file` (the resolved path in /proc/self/maps), once loaded. */
function mappedPath(file: string): string {
  const stem = file.replace(/\.so(\..*)?$/, '.so');
  try {
    for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
      const path = line.slice(line.indexOf('/'));
      if (line.includes('/') && basename(path).startsWith(stem)) return path;
    }
  } catch {
    /* not Linux, or no procfs: the soname is all we know */
  }
  return file;
}

/** Loads a CUDA library on first use; throws CudaUnavailableError naming every place it looked. */
export function loadLibrary(library: LibraryName): LibraryHandle {
  const cached = loaded.get(library);
  if (cached) return cached.handle;
  const spec = SPECS[library];
  if (!spec) throw new TypeError(`unknown library ${String(library)}; expected one of ${LIBRARY_NAMES.join(', ')}`);
  const searched: string[] = [];
  let lastError: string | undefined;
  for (const folder of searchFolders(library)) {
    for (const file of spec.files) {
      const path = folder === undefined ? file : join(folder, file);
      if (folder !== undefined && !existsSync(path)) continue;
      searched.push(folder === undefined ? `${file} (system loader)` : path);
      try {
        const handle = koffi.load(path);
        loaded.set(library, { handle, path: folder === undefined ? mappedPath(file) : path });
        return handle;
      } catch (e) {
        lastError = (e as Error).message;
      }
    }
  }
  if (!searched.some((s) => s.includes('system loader'))) searched.push(`${spec.files[0]} (system loader)`);
  throw new CudaUnavailableError(library, [...new Set(searched)], spec.hint, lastError);
}

/** Whether `library` loads (loading it if it was not yet). */
export function isLibraryAvailable(library: LibraryName): boolean {
  try {
    loadLibrary(library);
    return true;
  } catch {
    return false;
  }
}

/** The outcome of looking for one library: its path when it loads, else where it was looked for and how to get it. */
export type LibraryStatus =
  | { readonly name: LibraryName; readonly found: true; readonly path: string }
  | {
      readonly name: LibraryName;
      readonly found: false;
      readonly searched: readonly string[];
      readonly hint: string;
      readonly error?: string | undefined;
    };

/** Looks for `library` (loading it) and says where it is, or where it was looked for. Never throws. */
export function libraryStatus(library: LibraryName): LibraryStatus {
  try {
    loadLibrary(library);
    return { name: library, found: true, path: loaded.get(library)!.path };
  } catch (e) {
    if (e instanceof CudaUnavailableError)
      return {
        name: library,
        found: false,
        searched: e.searched,
        hint: e.hint,
        ...(e.lastError ? { error: e.lastError } : {}),
      };
    return { name: library, found: false, searched: [], hint: SPECS[library]?.hint ?? '', error: (e as Error).message };
  }
}
