/**
 * The CUDA toolkit's headers for NVRTC: `#include <cuda_fp16.h>` (and the other `cuda_*.h`
 * device headers) needs the toolkit's include folder, which NVRTC does not search by itself.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PIP_PREVIOUS_WHEEL_FOLDER, PIP_WHEEL_FOLDER } from '../ffi/cuda-version.js';
import { libraryStatus, sitePackagesFolders } from '../ffi/libraries.js';

let includeDir: string | null | undefined;
/**
 * A folder holding cuda_fp16.h, for an NVRTC without it built in: the CUDA toolkit's include folder
 * ($TSCUDA_CUDA_PATH, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, beside the loaded libnvrtc, beside an
 * nvcc on PATH) or a pip wheel's (`PIP_WHEEL_FOLDER`/include, ffi/cuda-version.ts).
 */
export function cudaIncludeDirectory(): string | null {
  if (includeDir !== undefined) return includeDir;
  const nvrtcLib = libraryStatus('nvrtc');
  const roots = [
    process.env.TSCUDA_CUDA_PATH,
    process.env.CUDA_HOME,
    process.env.CUDA_PATH,
    '/usr/local/cuda',
    // The toolkit (or wheel) the loaded libnvrtc came from: <root>/lib64/libnvrtc.so, <root>/targets/<arch>/lib/...
    ...(nvrtcLib.found ? [join(dirname(nvrtcLib.path), '..'), join(dirname(nvrtcLib.path), '..', '..', '..')] : []),
    // The toolkit of an nvcc on PATH: <root>/bin/nvcc.
    ...(process.env.PATH ?? '')
      .split(':')
      .filter((d) => d.endsWith('/bin') && existsSync(join(d, 'nvcc')))
      .map((d) => join(d, '..')),
  ].filter((p): p is string => !!p);
  const candidates = [
    ...roots.flatMap((r) => [
      join(r, 'include'),
      join(r, 'targets', 'x86_64-linux', 'include'),
      join(r, 'targets', 'sbsa-linux', 'include'),
    ]),
    ...sitePackagesFolders().flatMap((sp) =>
      [PIP_WHEEL_FOLDER, 'nvidia/cuda_runtime', 'nvidia/cuda_nvrtc', PIP_PREVIOUS_WHEEL_FOLDER].map((w) =>
        join(sp, w, 'include'),
      ),
    ),
  ];
  return (includeDir = candidates.find((d) => existsSync(join(d, 'cuda_fp16.h'))) ?? null);
}

/** True when CUDA source text includes a toolkit device header (`<cuda_fp16.h>`, `<cuda_bf16.h>`, ...). */
export function includesToolkitHeader(source: string): boolean {
  return /^\s*#\s*include\s*<cuda_\w+\.h>/m.test(source);
}

/**
 * NVRTC flags plus `--include-path=<toolkit include>` when one of `sources` includes a toolkit
 * header, no include path was given, and the folder is found; otherwise the flags as they are.
 */
export function withToolkitInclude(
  flags: readonly string[],
  sources: readonly string[],
  directory: () => string | null = cudaIncludeDirectory,
): string[] {
  if (!sources.some(includesToolkitHeader) || flags.some((f) => /^(-I|--include-path)/.test(f))) return [...flags];
  const dir = directory();
  return dir === null ? [...flags] : [...flags, `--include-path=${dir}`];
}
