export * from './runtime/index.js';
export { CudaError, CudaUnavailableError } from './ffi/errors.js';
export * from './pipeline/index.js';
