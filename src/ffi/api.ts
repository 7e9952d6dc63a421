import { bindLibrary, type BindOptions } from './bind.js';
import type { CudaLibraryName } from './errors.js';
import { CUFFT_FUNCTIONS, type CufftFunctions } from './generated/cufft.js';
import {
  DRIVER_FUNCTIONS,
  DRIVER_LEGACY_FUNCTIONS,
  type DriverFunctions,
  type DriverLegacyFunctions,
} from './generated/driver.js';
import { NVRTC_FUNCTIONS, type NvrtcFunctions } from './generated/nvrtc.js';
import { RUNTIME_FUNCTIONS, type RuntimeFunctions } from './generated/runtime.js';
import { loadLibrary } from './libraries.js';
import type { FunctionDeclaration } from './support.js';

function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

function raw<T extends object>(
  library: CudaLibraryName,
  declarations: readonly FunctionDeclaration[],
  options: BindOptions = {},
): () => T {
  return lazy(() => bindLibrary<T>(loadLibrary(library), declarations, options));
}

/** The driver API (libcuda), raw: every cu* function as the header declares it, bound to its versioned symbol. */
export const driver = raw<DriverFunctions>('driver', DRIVER_FUNCTIONS);
/** The driver API with the per-thread default stream (`_ptds`/`_ptsz` symbols, as CUDA_API_PER_THREAD_DEFAULT_STREAM selects). */
export const driverPerThread = raw<DriverFunctions>('driver', DRIVER_FUNCTIONS, { perThreadDefaultStream: true });
/**
 * The driver API with out-parameters bound as plain pointers (`outParamsAsPointers`): pass a
 * one-element TypedArray where the header has `T *` out, for hot paths (an allocation per call).
 * Its functions are typed `(...args: never[]) => CUresult`: callers state the signature they use.
 */
export const driverOutPointers = raw<Record<keyof DriverFunctions, (...args: never[]) => number>>(
  'driver',
  DRIVER_FUNCTIONS,
  { outParamsAsPointers: true },
);
/** Pre-versioning driver ABI entry points, for completeness only. */
export const driverLegacy = raw<DriverLegacyFunctions>('driver', DRIVER_LEGACY_FUNCTIONS);
/** The CUDA runtime API (libcudart, 13 or 12), raw: every cuda* function returns its cudaError_t. Loaded on the first call; throws CudaUnavailableError when the library is not found. */
export const runtime = raw<RuntimeFunctions>('runtime', RUNTIME_FUNCTIONS);
/** The runtime API bound to its per-thread default stream symbols (`_ptds`/`_ptsz`), as CUDA_API_PER_THREAD_DEFAULT_STREAM selects. */
export const runtimePerThread = raw<RuntimeFunctions>('runtime', RUNTIME_FUNCTIONS, { perThreadDefaultStream: true });
/** cuFFT (libcufft), raw: every cufft* function returns its cufftResult. Loaded on the first call; throws CudaUnavailableError when the library is not found. */
export const cufft = raw<CufftFunctions>('cufft', CUFFT_FUNCTIONS);
/** NVRTC, the runtime CUDA C++ compiler (libnvrtc), raw: every nvrtc* function returns its nvrtcResult. Loaded on the first call; throws CudaUnavailableError when the library is not found. */
export const nvrtc = raw<NvrtcFunctions>('nvrtc', NVRTC_FUNCTIONS);

// NCCL (several GPUs): lazy like the others; loading it sets NCCL_NVLS_ENABLE=0 first (see nccl.ts).
// The checked form of each library (cu(), cudart(), ...) is in checked.ts.
export { nccl } from './nccl.js';
