import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from '../runtime/context.js';
import type { Kernel, KernelParamType } from '../runtime/kernel.js';
import { Module } from '../runtime/module.js';

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

/** Loads a packaged fatbin (`<buildDir>/<name>.fatbin`, default the package's kernels/build, or `options.path`); throws with the fix when it was never built. */
export function loadKernelModule(name: string, options: KernelModuleOptions, buildDir = join(packageRoot(), 'kernels', 'build')): Module {
  const path = options.path ?? join(buildDir, `${name}.fatbin`);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build:kernels\` (needs nvcc) or install the published package, which ships it`);
  return Module.load({ path, label: `${name}.fatbin`, ...(options.context ? { context: options.context } : {}) });
}

/** Thrown by a generated launcher called with the wrong number of arguments (from JavaScript, or through a cast). */
export function wrongArity(kernel: string, params: number, argumentsWithConfig: number): never {
  const got = argumentsWithConfig === 0 ? 'no launch config' : `${argumentsWithConfig - 1}`;
  throw new TypeError(`kernel "${kernel}" takes a launch config and ${params} argument(s), got ${got}`);
}

/** Binds every kernel of a signature table once; if one fails (a stale fatbin, say), the module is unloaded and the error rethrown. */
export function bindKernels<S extends Record<string, readonly KernelParamType[]>>(module: Module, signatures: S): { readonly [K in keyof S]: Kernel } {
  const out: Record<string, Kernel> = {};
  try {
    for (const name of Object.keys(signatures)) out[name] = module.kernel(name, signatures[name]!);
  } catch (e) {
    module.dispose();
    throw e;
  }
  return out as { readonly [K in keyof S]: Kernel };
}
