/** What the several-GPU tests need, probed once: a GPU, NCCL, and how many devices (each skip prints its one-line reason). */
import { Device } from '../../../src/runtime/device.js';
import { libraryStatus } from '../../../src/ffi/libraries.js';
import { gpu } from '../gpu-available.js';

const count = gpu.ok ? Device.count() : 0;
const ncclStatus = libraryStatus('nccl');

/** The number of CUDA devices (0 without a GPU). */
export const deviceCount = count;

/** NCCL loads (and a GPU is present); else why not. */
export const ncclReady: { ok: boolean; reason: string } = !gpu.ok
  ? { ok: false, reason: gpu.reason }
  : ncclStatus.found
    ? { ok: true, reason: '' }
    : { ok: false, reason: `NCCL not found (searched ${ncclStatus.searched.join(', ')}); ${ncclStatus.hint}` };

/** At least two GPUs; else why not. */
export const twoGpus: { ok: boolean; reason: string } = !gpu.ok
  ? { ok: false, reason: gpu.reason }
  : count >= 2
    ? { ok: true, reason: '' }
    : { ok: false, reason: `needs 2 GPUs, this machine has ${count}` };

/** `name`, with the skip reason appended when `cond` is false. */
export function titled(name: string, cond: { ok: boolean; reason: string }): string {
  return cond.ok ? name : `${name} (skipped: ${cond.reason})`;
}
