/**
 * Compiles generated kernel source with NVRTC once per context and source (Program's memory and
 * disk caches make later processes fast too) and keeps the loaded Kernel. Used by elementwise()
 * and reduction().
 */
import type { Context } from '../runtime/context.js';
import type { Kernel, KernelParamType } from '../runtime/kernel.js';
import { Program } from '../runtime/program.js';

const kernels = new Map<Context, Map<string, Kernel>>();

/** The kernel `kernelName` of `source`, compiled for `context`'s device on first use and kept. Synchronous (NVRTC) on the first call per process. */
export function jitKernel(
  context: Context,
  source: string,
  fileName: string,
  kernelName: string,
  params: readonly KernelParamType[],
): Kernel {
  let perContext = kernels.get(context);
  if (!perContext) kernels.set(context, (perContext = new Map()));
  const key = `${kernelName}(${params.join(',')})\n${source}`;
  const cached = perContext.get(key);
  if (cached && !cached.disposed) return cached;
  // The Program only compiles; the loaded Module is kept (by the Kernel) after it is disposed.
  using program = new Program({ source, name: fileName, label: fileName });
  const options = ['-std=c++17'];
  // cuda_fp16.h / cuda_bf16.h: Program adds the toolkit's include folder (runtime/cuda-include.ts).
  const kernel = program.compile({ device: context.device, options }).load(context).kernel(kernelName, params);
  perContext.set(key, kernel);
  return kernel;
}

/** A grid-stride launch over `n` elements: 256 threads a block, at most 32 blocks per multiprocessor. */
export function gridFor(context: Context, n: number, block = 256): number {
  const sms = context.device.properties.multiprocessorCount;
  return Math.max(1, Math.min(Math.ceil(n / block), sms * 32));
}
