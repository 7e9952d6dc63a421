import { Device } from '../../src/runtime/device.js';
import { CudaUnavailableError } from '../../src/ffi/errors.js';

function probe(): { available: boolean; reason: string } {
  try {
    const n = Device.count();
    return n > 0 ? { available: true, reason: '' } : { available: false, reason: 'no CUDA device' };
  } catch (e) {
    if (e instanceof CudaUnavailableError)
      return { available: false, reason: 'no CUDA driver (libcuda.so.1 not found)' };
    return { available: false, reason: `CUDA driver unusable: ${(e as Error).message}` };
  }
}

const probed = probe();

/**
 * Whether this machine can run the GPU suite (`available`, also spelled `ok`), and if not, the
 * one-line reason its tests print when skipped. `npm run test:gpu` (TSCUDA_REQUIRE_GPU=1) without
 * a GPU stops in test/gpu/announce.ts with that reason before any test file loads.
 */
export const gpu: { readonly available: boolean; readonly ok: boolean; readonly reason: string } = {
  ...probed,
  ok: probed.available,
};
