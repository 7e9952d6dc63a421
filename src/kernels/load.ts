import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from '../runtime/context.js';
import type { Kernel, KernelParamType } from '../runtime/kernel.js';
import { resolveContext } from '../runtime/defaults.js';
import { Module } from '../runtime/module.js';
import { Program } from '../runtime/program.js';

export interface KernelModuleOptions {
  context?: Context | undefined;
  /** A fatbin to load instead of the packaged kernels/build/<name>.fatbin. */
  path?: string | undefined;
}

/** The package root: the nearest folder above this file with a package.json (src/ in a checkout, dist/ when installed). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('tscuda: cannot find the package root (no package.json above the kernels loader)');
    dir = up;
  }
  return dir;
}

/**
 * Loads a packaged fatbin (`<buildDir>/<name>.fatbin`, default the package's kernels/build, or
 * `options.path`). In a checkout where the fatbins were never built (no nvcc), the kernel source
 * `<name>.cu` is compiled at first use with NVRTC instead (cached on disk like every Program), so
 * `npm test` and `npm start` need no separate build step. Throws with the fix when neither exists.
 */
export function loadKernelModule(
  name: string,
  options: KernelModuleOptions,
  buildDir = join(packageRoot(), 'kernels', 'build'),
): Module {
  const path = options.path ?? join(buildDir, `${name}.fatbin`);
  const placement = options.context ? { context: options.context } : {};
  if (existsSync(path)) return Module.load({ path, label: `${name}.fatbin`, ...placement });
  const source = options.path === undefined ? kernelSourceFor(name, buildDir) : undefined;
  if (source === undefined)
    throw new Error(
      `${path} is missing: run \`npm run build:kernels\` (needs nvcc) or install the published package, which ships it`,
    );
  const context = options.context ?? resolveContext(undefined);
  const program = new Program({
    source: nvrtcSource(readFileSync(source, 'utf8')),
    name: `${name}.cu`,
    label: `${name}.cu (NVRTC, no fatbin built)`,
  });
  return program.compile({ device: context.device, options: ['-std=c++17'] }).load(context);
}

/** Where the `.cu` of a kernel module lives: beside its build folder (test/kernels), or the package's src/kernels. */
export function kernelSourceFor(name: string, buildDir: string): string | undefined {
  return [join(dirname(buildDir), `${name}.cu`), join(packageRoot(), 'src', 'kernels', `${name}.cu`)].find((p) =>
    existsSync(p),
  );
}

/** A kernel source as NVRTC takes it: NVRTC has the vector types built in and no host headers, so `#include <cuda_runtime.h>` goes. */
export function nvrtcSource(source: string): string {
  return source.replace(/^\s*#include\s*<cuda_runtime\.h>\s*$/gm, '// #include <cuda_runtime.h>: built into NVRTC');
}

/** Thrown by a generated launcher called with the wrong number of arguments (from JavaScript, or through a cast). */
export function wrongArity(kernel: string, params: number, argumentsWithConfig: number): never {
  const got = argumentsWithConfig === 0 ? 'no launch config' : `${argumentsWithConfig - 1}`;
  throw new TypeError(`kernel "${kernel}" takes a launch config and ${params} argument(s), got ${got}`);
}

/** Binds every kernel of a signature table once; if one fails (a stale fatbin, say), the module is unloaded and the error rethrown. */
export function bindKernels<S extends Record<string, readonly KernelParamType[]>>(
  module: Module,
  signatures: S,
): { readonly [K in keyof S]: Kernel } {
  const out: Record<string, Kernel> = {};
  try {
    for (const name of Object.keys(signatures)) out[name] = module.kernel(name, signatures[name]!);
  } catch (e) {
    module.dispose();
    throw e;
  }
  return out as { readonly [K in keyof S]: Kernel };
}
