import { describe, expect, it } from 'vitest';
import {
  CudaError,
  cudart,
  isLibraryAvailable,
  loadLibrary,
  missingSymbols,
  runtime,
  statusName,
} from '../../../src/ffi/index.js';
import { RUNTIME_FUNCTIONS } from '../../../src/ffi/generated/runtime.js';
import { cudaError_t, CUresult } from '../../../src/ffi/generated/types.js';

const hasRuntime = isLibraryAvailable('runtime');
const hasDriver = isLibraryAvailable('driver');

describe('status codes', () => {
  it('names codes of every library by their enum name', () => {
    expect(statusName('driver', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS)).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(statusName('runtime', 35)).toBe('cudaErrorInsufficientDriver');
    expect(statusName('cufft', 6)).toBe('CUFFT_EXEC_FAILED');
    expect(statusName('nvrtc', 6)).toBe('NVRTC_ERROR_COMPILATION');
    expect(statusName('driver', 123456)).toBe('UNKNOWN_123456');
  });
  it('builds CudaError with code, name, description, call and context, marking sticky errors', () => {
    const e = new CudaError('driver', CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, 'cuStreamSynchronize', {
      during: 'stream "upload"',
    });
    expect(e.status).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(e.sticky).toBe(true);
    expect(e.description).toMatch(/invalid memory address/);
    expect(e.message).toContain('cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)');
    expect(e.message).toContain('stream "upload"');
    expect(new CudaError('driver', CUresult.CUDA_ERROR_INVALID_VALUE, 'cuMemAlloc').sticky).toBe(false);
  });
});

describe.runIf(hasRuntime)('libcudart on this machine', () => {
  it('resolves every bound runtime function', () => {
    expect(missingSymbols(loadLibrary('runtime'), RUNTIME_FUNCTIONS)).toEqual([]);
  });
  it.runIf(!hasDriver)('maps cudaGetDeviceCount without a driver to cudaErrorInsufficientDriver', () => {
    const count: [number | null] = [null];
    expect(runtime().cudaGetDeviceCount(count)).toBe(cudaError_t.cudaErrorInsufficientDriver);
    expect(() => cudart().cudaGetDeviceCount()).toThrowError(
      expect.objectContaining({ status: 'cudaErrorInsufficientDriver', call: 'cudaGetDeviceCount' }) as Error,
    );
  });
  it('returns out-parameters from checked calls', () => {
    expect(cudart().cudaRuntimeGetVersion()).toBeGreaterThanOrEqual(12000);
  });
});
