import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from '../context.js';
import { Module } from '../module.js';

export interface KernelModuleOptions {
  context?: Context;
  /** A fatbin to load instead of the packaged kernels/build/<name>.fatbin. */
  path?: string;
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

export function loadKernelModule(name: string, options: KernelModuleOptions): Module {
  const path = options.path ?? join(packageRoot(), 'kernels', 'build', `${name}.fatbin`);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build:kernels\` (needs nvcc) or install the published package, which ships it`);
  return Module.load({ path, label: `${name}.fatbin`, ...(options.context ? { context: options.context } : {}) });
}
