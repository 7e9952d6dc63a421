/**
 * The kernels tscuda's benchmarks launch (test-only kernels), from test/kernels/build/basic.fatbin
 * (npm run build:kernels); when that is missing, test/kernels/basic.cu is compiled with nvcc
 * into the temp folder first.
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
import { loadBasicKernels } from '../../test/kernels/launchers.generated.js';

/** The generated typed launchers of test/kernels/basic.cu, the fixed-arity fast path. */
export interface TypedBasicLaunchers {
  empty(config: LaunchConfig): void;
  k4(config: LaunchConfig, a: DeviceBuffer<'f32'>, b: DeviceBuffer<'f32'>, n: number, s: number): void;
}

export const TYPED_LAUNCHERS_FILE = 'test/kernels/launchers.generated.ts';
/** The built image and its source, relative to the repository root. */
export const BASIC_FATBIN = 'test/kernels/build/basic.fatbin';
export const BASIC_SOURCE = 'test/kernels/basic.cu';

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

/** loadBasicKernels({ path }) of the generated launchers, or null and the reason it failed. */
function loadTyped(path: string): { typed: TypedBasicLaunchers | null; note: string } {
  try {
    return { typed: loadBasicKernels({ path }), note: `typed launchers of ${TYPED_LAUNCHERS_FILE}` };
  } catch (e) {
    return { typed: null, note: `loadBasicKernels() failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

async function compileFallback(root: string, arch: string, log: (line: string) => void): Promise<string> {
  const source = join(root, BASIC_SOURCE);
  if (!existsSync(source)) throw new Error(`${BASIC_FATBIN} and ${BASIC_SOURCE} are both missing`);
  const nvcc = findNvcc();
  if (!nvcc) throw new Error(`${BASIC_FATBIN} is missing and nvcc was not found: run npm run build:kernels`);
  const dir = join(tmpdir(), 'tscuda-bench', 'kernels');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `basic-${arch}-${Math.floor(statSync(source).mtimeMs)}.fatbin`);
  if (existsSync(out)) return out;
  const partial = `${out}.${process.pid}.tmp`;
  log(`${BASIC_FATBIN} missing: nvcc -fatbin -arch=${arch} ${BASIC_SOURCE}`);
  const r = await runProcess(nvcc, ['-fatbin', '-O3', `-arch=${arch}`, '-o', partial, source], { timeoutMs: 180_000 });
  if (r.exitCode !== 0 || !existsSync(partial)) {
    rmSync(partial, { force: true });
    throw new Error(`nvcc ${BASIC_SOURCE} failed: ${r.failure ?? tail(r.stderr, 10)}`);
  }
  renameSync(partial, out);
  return out;
}

export async function loadBenchKernels(root: string, arch: string, log: (line: string) => void): Promise<BenchKernels> {
  const built = join(root, BASIC_FATBIN);
  const path = existsSync(built) ? built : await compileFallback(root, arch, log);
  const module = Module.load({ path, label: 'bench basic.fatbin' });
  const { typed, note } = loadTyped(path);
  return {
    typed,
    typedNote: note,
    module,
    source: path === built ? BASIC_FATBIN : `${BASIC_SOURCE} compiled to ${path}`,
    empty: module.kernel('empty', []),
    k4: module.kernel('k4', ['ptr', 'ptr', 'i32', 'f32']),
    fillF32: module.kernel('fill_f32', ['ptr', 'f32', 'i32']),
    fillF64: module.kernel('fill_f64', ['ptr', 'f64', 'i32']),
    scaleF32: module.kernel('scale_f32', ['ptr', 'ptr', 'f32', 'i32']),
    spinNs: module.kernel('spin_ns', ['u64']),
  };
}
