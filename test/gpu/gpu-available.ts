import { Device } from '../../src/runtime/device.js';
import { CudaUnavailableError } from '../../src/ffi/errors.js';

function probe(): { available: boolean; reason: string } {
  try {
    const n = Device.count();
    return n > 0 ? { available: true, reason: '' } : { available: false, reason: 'no CUDA device' };
  } catch (e) {
    if (e instanceof CudaUnavailableError) return { available: false, reason: 'no CUDA driver (libcuda.so.1 not found)' };
    return { available: false, reason: `CUDA driver unusable: ${(e as Error).message}` };
  }
}

/** Whether this machine can run the GPU suite, and if not, the one-line reason its tests print when skipped. */
export const gpu = probe();

if (!gpu.available && process.env.TSCUDA_REQUIRE_GPU) {
  throw new Error(`npm run test:gpu needs a GPU: ${gpu.reason}`);
}
