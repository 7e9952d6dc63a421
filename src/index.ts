export * from './runtime/index.js';
export { CudaError, CudaUnavailableError } from './ffi/errors.js';
export * from './kernels/index.js';
export * from './orchestration/index.js';
export * from './pipeline/index.js';
