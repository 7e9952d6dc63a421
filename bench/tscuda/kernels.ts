/**
 * The kernels tscuda's benchmarks launch, from kernels/build/basic.fatbin (npm run build:kernels);
 * when that is missing, kernels/basic.cu is compiled with nvcc into the temp folder first.
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '../../src/runtime/module.js';
import type { DeviceBuffer } from '../../src/runtime/memory/device-buffer.js';
import type { Kernel, LaunchConfig } from '../../src/runtime/kernel.js';
import { findNvcc } from '../harness/native.js';
import { runProcess } from '../harness/processes.js';
import { tail } from '../harness/peers.js';
import { importOptional, isObject } from './optional.js';

/** The generated typed launchers of kernels/basic.cu (src/runtime/kernels/), the fixed-arity fast path. */
export interface TypedBasicLaunchers {
  empty(config: LaunchConfig): void;
  k4(config: LaunchConfig, a: DeviceBuffer<'f32'>, b: DeviceBuffer<'f32'>, n: number, s: number): void;
}

export const TYPED_LAUNCHERS_FILE = 'src/runtime/kernels/launchers.generated.ts';

function isTypedBasic(x: unknown): x is TypedBasicLaunchers {
  return isObject(x) && typeof x.empty === 'function' && typeof x.k4 === 'function';
}

export interface BenchKernels {
  module: Module;
  /** Where the image came from, for the notes. */
  source: string;
  empty: Kernel;
  /** k4(float* a, float* b, int n, float s) */
  k4: Kernel;
  /** fill_f32(float* out, float value, int n) */
  fillF32: Kernel;
  /** fill_f64(double* out, double value, int n) */
  fillF64: Kernel;
  /** scale_f32(float* y, const float* x, float a, int n) */
  scaleF32: Kernel;
  /** spin_ns(unsigned long long ns) */
  spinNs: Kernel;
  /** loadBasicKernels() of the generated launchers, when the checkout has them; null otherwise, with why. */
  typed: TypedBasicLaunchers | null;
  typedNote: string;
}

/** loadBasicKernels({ path }) from the generated launchers, or null and the reason. */
async function loadTyped(root: string, path: string): Promise<{ typed: TypedBasicLaunchers | null; note: string }> {
  try {
    const mod = await importOptional(root, TYPED_LAUNCHERS_FILE);
    if (mod === null) return { typed: null, note: `${TYPED_LAUNCHERS_FILE} is not in this checkout` };
    const load = mod.loadBasicKernels;
    if (typeof load !== 'function') return { typed: null, note: `${TYPED_LAUNCHERS_FILE} has no loadBasicKernels()` };
    const typed: unknown = (load as (options: { path: string }) => unknown)({ path });
    if (!isTypedBasic(typed)) return { typed: null, note: 'loadBasicKernels() returned no empty()/k4() launchers' };
    return { typed, note: `typed launchers of ${TYPED_LAUNCHERS_FILE}` };
  } catch (e) {
    return { typed: null, note: `loadBasicKernels() failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

async function compileFallback(root: string, arch: string, log: (line: string) => void): Promise<string> {
  const source = join(root, 'kernels', 'basic.cu');
  if (!existsSync(source)) throw new Error('kernels/build/basic.fatbin and kernels/basic.cu are both missing');
  const nvcc = findNvcc();
  if (!nvcc) throw new Error('kernels/build/basic.fatbin is missing and nvcc was not found: run npm run build:kernels');
  const dir = join(tmpdir(), 'tscuda-bench', 'kernels');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `basic-${arch}-${Math.floor(statSync(source).mtimeMs)}.fatbin`);
  if (existsSync(out)) return out;
  const partial = `${out}.${process.pid}.tmp`;
  log(`kernels/build/basic.fatbin missing: nvcc -fatbin -arch=${arch} kernels/basic.cu`);
  const r = await runProcess(nvcc, ['-fatbin', '-O3', `-arch=${arch}`, '-o', partial, source], { timeoutMs: 180_000 });
  if (r.exitCode !== 0 || !existsSync(partial)) {
    rmSync(partial, { force: true });
    throw new Error(`nvcc kernels/basic.cu failed: ${r.failure ?? tail(r.stderr, 10)}`);
  }
  renameSync(partial, out);
  return out;
}

export async function loadBenchKernels(root: string, arch: string, log: (line: string) => void): Promise<BenchKernels> {
  const built = join(root, 'kernels', 'build', 'basic.fatbin');
  const path = existsSync(built) ? built : await compileFallback(root, arch, log);
  const module = Module.load({ path, label: 'bench basic.fatbin' });
  const { typed, note } = await loadTyped(root, path);
  return {
    typed,
    typedNote: note,
    module,
    source: path === built ? 'kernels/build/basic.fatbin' : `kernels/basic.cu compiled to ${path}`,
    empty: module.kernel('empty', []),
    k4: module.kernel('k4', ['ptr', 'ptr', 'i32', 'f32']),
    fillF32: module.kernel('fill_f32', ['ptr', 'f32', 'i32']),
    fillF64: module.kernel('fill_f64', ['ptr', 'f64', 'i32']),
    scaleF32: module.kernel('scale_f32', ['ptr', 'ptr', 'f32', 'i32']),
    spinNs: module.kernel('spin_ns', ['u64']),
  };
}
