/**
 * Compiles generated kernel source with NVRTC once per context and source (Program's memory and
 * disk caches make later processes fast too) and keeps the loaded Kernel. Used by elementwise()
 * and reduction().
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { libraryStatus, sitePackagesFolders } from '../ffi/libraries.js';
import type { Context } from '../runtime/context.js';
import type { Kernel, KernelParamType } from '../runtime/kernel.js';
import { CompileError, Program } from '../runtime/program.js';

const kernels = new Map<Context, Map<string, Kernel>>();

let includeDir: string | null | undefined;
/**
 * A folder holding cuda_fp16.h, for an NVRTC without it built in: the CUDA toolkit's include folder
 * ($TSCUDA_CUDA_PATH, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, beside the loaded libnvrtc, beside an
 * nvcc on PATH) or a pip wheel's (nvidia/cu13/include).
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
    ...roots.flatMap((r) => [join(r, 'include'), join(r, 'targets', 'x86_64-linux', 'include'), join(r, 'targets', 'sbsa-linux', 'include')]),
    ...sitePackagesFolders().flatMap((sp) => ['cu13', 'cuda_runtime', 'cuda_nvrtc', 'cu12'].map((w) => join(sp, 'nvidia', w, 'include'))),
  ];
  return (includeDir = candidates.find((d) => existsSync(join(d, 'cuda_fp16.h'))) ?? null);
}

const missingHeader = (e: unknown): boolean => e instanceof CompileError && /cuda_(fp16|bf16)\.h/.test(e.log) && /(cannot open|could not open|not found)/i.test(e.log);

/** The kernel `kernelName` of `source`, compiled for `context`'s device on first use and kept. Synchronous (NVRTC) on the first call per process. */
export function jitKernel(context: Context, source: string, fileName: string, kernelName: string, params: readonly KernelParamType[]): Kernel {
  let perContext = kernels.get(context);
  if (!perContext) kernels.set(context, (perContext = new Map()));
  const key = `${kernelName}(${params.join(',')})\n${source}`;
  const cached = perContext.get(key);
  if (cached && !cached.disposed) return cached;
  // The Program only compiles; the loaded Module is kept (by the Kernel) after it is disposed.
  using program = new Program({ source, name: fileName, label: fileName });
  const options = ['-std=c++17'];
  let compiled;
  try {
    compiled = program.compile({ device: context.device, options });
  } catch (e) {
    const dir = missingHeader(e) ? cudaIncludeDirectory() : null;
    if (!dir) throw e;
    compiled = program.compile({ device: context.device, options: [...options, `-I${dir}`] });
  }
  const kernel = compiled.load(context).kernel(kernelName, params);
  perContext.set(key, kernel);
  return kernel;
}

/** A grid-stride launch over `n` elements: 256 threads a block, at most 32 blocks per multiprocessor. */
export function gridFor(context: Context, n: number, block = 256): number {
  const sms = context.device.properties.multiprocessorCount;
  return Math.max(1, Math.min(Math.ceil(n / block), sms * 32));
}
