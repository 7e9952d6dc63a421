/**
 * The one line a command prints when it cannot use a GPU (no driver, no device, a context the
 * driver refuses), instead of a stack trace. CUDA-free: it only inspects the error's class name
 * and fields, so the command shells can use it before loading any CUDA module.
 */
import type { OptionalLibrary } from '../runtime/device.js';
import { isCudaUnavailable } from '../runtime/unavailable.js';

/** The line for `e`, or undefined when `e` is not about GPU availability (a real bug: rethrow it). */
export function gpuUnavailableLine(command: string, e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  if (isCudaUnavailable(e)) {
    return `tscuda ${command}: no NVIDIA driver found (libcuda.so.1); ${command} needs a CUDA GPU and its driver`;
  }
  const { status, call } = e as { status?: unknown; call?: unknown };
  if (e.name === 'CudaError' || (typeof status === 'string' && typeof call === 'string')) {
    if (status === 'CUDA_ERROR_NO_DEVICE')
      return `tscuda ${command}: no CUDA device is visible (check CUDA_VISIBLE_DEVICES and the driver)`;
    if (status === 'CUDA_ERROR_INVALID_DEVICE')
      return `tscuda ${command}: that GPU ordinal does not exist: ${e.message}`;
    if (status === 'CUDA_ERROR_OUT_OF_MEMORY')
      return `tscuda ${command}: the GPU ran out of memory: ${e.message} (try smaller --batch or fewer --lanes)`;
    return `tscuda ${command}: CUDA error: ${e.message}`;
  }
  return undefined;
}

/**
 * Why a command cannot run its GPU work on this machine (no driver, a driver too old, no device, a
 * library in `needs` missing), in one line; undefined when it can. Asked before a command makes
 * anything (an output folder, a listening port); the runtime is loaded only when this is called.
 */
export async function gpuMissingReason(
  command: string,
  needs: readonly OptionalLibrary[],
): Promise<string | undefined> {
  try {
    const { Device } = await import('../runtime/device.js');
    const availability = Device.available({ needs });
    return availability.ok ? undefined : availability.reason;
  } catch (e) {
    // A driver that fails in a way available() does not word: the same one line as any other command.
    const line = gpuUnavailableLine(command, e);
    if (line === undefined) throw e;
    return line.slice(`tscuda ${command}: `.length);
  }
}
